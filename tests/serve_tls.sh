#!/bin/bash
# jobq serve with tls_cert/tls_key: HTTPS through libmicrohttpd, session
# cookies marked Secure, Strict-Transport-Security sent.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
command -v openssl >/dev/null || skip_all "no openssl to make a test certificate"
. "$top_srcdir/tests/operator/common.sh"
. "$top_srcdir/tests/serve_lib.sh"
setup serve_tls

openssl req -x509 -newkey rsa:2048 -nodes -subj /CN=localhost -days 2 \
	-keyout "$T/key.pem" -out "$T/cert.pem" >/dev/null 2>&1 || { echo "Bail out! openssl req failed"; exit 99; }
write_conf <<EOC
[queue default]

[handler echo]
exec = $HANDLERS/echo.sh

[serve]
tls_cert = $T/cert.pem
tls_key = $T/key.pem

[user admin]
password_hash = $PWHASH
role = admin
EOC
serve_start
like "$URL" '^https://127\.0\.0\.1:[0-9]+$' "it says it listens for https"
hit GET /
is "$CODE" 200 "GET / over TLS: 200"
is "$(header strict-transport-security)" "max-age=31536000" "with Strict-Transport-Security"
is "$(header x-frame-options)" DENY "and the security headers"
login admin "$T/jar"
is "$CODE" 200 "login over TLS: 200"
like "$(header set-cookie)" '; HttpOnly; SameSite=Strict; Secure$' "the session cookie is Secure"
hit GET /api/overview "$T/jar"
is "$CODE" 200 "the session works over TLS"
plain=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://${URL#https://}/" 2>/dev/null)
ok "$([ "$plain" != 200 ]; echo $?)" "plain HTTP on the TLS port gets no page (got '$plain')"
serve_stop
is "$?" 0 "SIGTERM: exits 0"

# metrics_listen speaks TLS too.
sed -i "s|^tls_key = .*|&\nmetrics_listen = 127.0.0.1:0|" "$CONF"
serve_start
murl=$(grep -o '/metrics served on [a-z]*://[^ ]*' "$T/serve.log" | sed 's,^/metrics served on ,,')
like "$murl" '^https://127\.0\.0\.1:[0-9]+$' "metrics_listen with TLS says https ($murl)"
is "$(curl -s -k -o /dev/null -w '%{http_code}' "$murl/metrics")" 200 "GET /metrics there over TLS: 200"
serve_stop
sed -i '/^metrics_listen = /d' "$CONF"

# A key that does not match the certificate is refused at start.
openssl req -x509 -newkey rsa:2048 -nodes -subj /CN=other -days 2 \
	-keyout "$T/key2.pem" -out "$T/cert2.pem" >/dev/null 2>&1
sed -i "s|^tls_key = .*|tls_key = $T/key2.pem|" "$CONF"
timeout 20 "$JOBQ" -c "$CONF" serve --listen 127.0.0.1:0 2>"$T/err"
rc=$?
ok "$([ "$rc" != 0 ] && [ "$rc" != 124 ]; echo $?)" "a key that does not fit the certificate: jobq serve refuses to start (exit $rc)"
like "$(cat "$T/err")" "serve: " "and says so"
finish
