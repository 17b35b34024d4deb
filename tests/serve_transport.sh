#!/bin/bash
# jobq serve's transport (issue 20, items 2, 9 and 11): Secure cookies and
# HSTS behind a trusted TLS proxy (X-Forwarded-Proto) or with an https
# public_url, never from a forged header; plain HTTP refused on an address
# other than the loopback unless allow_plain_http says so; an encoded NUL
# in the URL refused (400); allowed_hosts (421 for any other Host); bodies
# bounded before they are read (unauthenticated ones small), and
# conflicting Content-Length / Transfer-Encoding framing refused.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
. "$top_srcdir/tests/operator/common.sh"
. "$top_srcdir/tests/serve_lib.sh"
setup serve_transport

base=$(cat "$CONF")
conf() {
	{ printf '%s\n' "$base"; cat; printf '[user alice]\npassword_hash = %s\nrole = admin\n' "$PWHASH"; } >"$CONF"
}
# bad REGEX NAME <<conf: jobq check refuses the [serve] lines with file:line.
bad() {
	conf
	jq_ check >/dev/null 2>"$T/err"
	RC=$?
	is "$RC" 78 "$2: exit 78"
	like "$(cat "$T/err")" "$1" "$2: says where and what"
}

# ---- the new keys: each bad value refused with its file:line ----
bad "jobq.ini:[0-9]+: public_url: expected http://HOST" "a public_url that is no http(s) address" <<EOC
[serve]
public_url = ftp://jobs.example.com/
EOC
bad "jobq.ini:[0-9]+: allow_plain_http: expected yes or no \\(or true, false, on, off, 1, 0\\), not 'maybe'" "allow_plain_http = maybe" <<EOC
[serve]
allow_plain_http = maybe
EOC
bad "jobq.ini:[0-9]+: allowed_hosts: 'a b' is not a host name" "a host name with a space" <<EOC
[serve]
allowed_hosts = localhost, a b
EOC
bad "jobq.ini:[0-9]+: allowed_hosts: expected host names" "an empty allowed_hosts item" <<EOC
[serve]
allowed_hosts = localhost,,x
EOC

# ---- plain HTTP on a non-loopback address needs allow_plain_http ----
conf </dev/null
timeout 20 "$JOBQ" -c "$CONF" serve --listen 0.0.0.0:0 >/dev/null 2>"$T/err"
is "$?" 78 "plain HTTP on 0.0.0.0 without allow_plain_http: exit 78"
like "$(cat "$T/err")" "listen: plain HTTP on 0.0.0.0:0 \(not a loopback address\).*allow_plain_http = yes" \
	"and says why and what to set"
conf <<EOC
[serve]
allow_plain_http = yes
EOC
SERVE_LISTEN=0.0.0.0:0 serve_start
hit GET /api/me
is "$CODE" 200 "with allow_plain_http = yes it serves on 0.0.0.0"
serve_stop
conf </dev/null
SERVE_LISTEN='[::1]:0' serve_start
like "$URL" '^http://\[::1\]:' "[::1] is the loopback: no key needed"
serve_stop

# ---- Secure and HSTS behind a trusted proxy that says https ----
conf <<EOC
[serve]
trusted_proxies = 127.0.0.2
EOC
serve_start
LOGIN='{"user": "alice", "password": "'"$PW"'"}'
hit POST /api/login "$T/p.jar" "$LOGIN" --interface 127.0.0.2 -H 'X-Forwarded-Proto: https'
is "$CODE" 200 "a login through the trusted proxy"
like "$(header set-cookie)" '^jobq_session=[^;]+;.*; Secure' "behind a proxy that says https the cookie is Secure"
is "$(header strict-transport-security)" "max-age=31536000" "and HSTS is sent"
CSRF=$(printf '%s' "$BODY" | jget 'd["csrf"]')
hit POST /api/logout "$T/p.jar" "{}" --interface 127.0.0.2 -H 'X-Forwarded-Proto: https' -H "X-CSRF-Token: $CSRF"
like "$CODE/$(header set-cookie)" '^200/jobq_session=;.*; Secure; Max-Age=0' "the logout's clearing cookie is Secure too"
hit POST /api/login "$T/q.jar" "$LOGIN" --interface 127.0.0.3 -H 'X-Forwarded-Proto: https'
like "$CODE/$(header set-cookie)" '^200/jobq_session=' "a direct client saying https logs in"
ok "$(header set-cookie | grep -qv Secure; echo $?)" "but its forged X-Forwarded-Proto does not make the cookie Secure"
is "$(header strict-transport-security)" "" "nor bring HSTS"
hit GET /api/me "" "" --interface 127.0.0.2
is "$CODE/$(header strict-transport-security)" "200/" "the trusted proxy without X-Forwarded-Proto: plain HTTP, no HSTS"
serve_stop

# ---- an https public_url: Secure and HSTS whatever the proxy says ----
conf <<EOC
[serve]
public_url = https://jobs.example.com/
EOC
serve_start
hit POST /api/login "$T/r.jar" "$LOGIN"
like "$(header set-cookie)" '; Secure' "public_url = https://...: the cookie is Secure"
is "$(header strict-transport-security)" "max-age=31536000" "and HSTS is sent"
serve_stop
# An http:// public_url: plain HTTP, whatever a trusted proxy says.
conf <<EOC
[serve]
public_url = http://jobs.example.com/
trusted_proxies = 127.0.0.2
EOC
serve_start
hit POST /api/login "$T/s.jar" "$LOGIN" --interface 127.0.0.2 -H 'X-Forwarded-Proto: https'
is "$CODE/$(header strict-transport-security)" "200/" "public_url = http://...: no HSTS, though the trusted proxy says https"
ok "$(header set-cookie | grep -qv Secure; echo $?)" "... and the cookie is not Secure"
serve_stop

# ---- encoded NUL, Host, framing, bodies ----
conf <<EOC
[serve]
allowed_hosts = jobs.example.com, LocalHost, 127.0.0.1, [::1]
EOC
serve_start
PORT=${URL##*:}
for path in '/metrics%00' '/metrics%00.css' '/api/me%00' '/static/app.js%00.png' '/api/me?x=%00'; do
	hit GET "$path"
	is "$CODE" 400 "GET $path: 400 (an encoded NUL is refused, not cut off)"
done
hit GET /metrics
is "$CODE" 200 "GET /metrics itself: 200"

hit GET /api/me "" "" -H 'Host: evil.example'
is "$CODE" 421 "a Host not in allowed_hosts (DNS rebinding): 421"
hit GET /metrics "" "" -H 'Host: evil.example:8377'
is "$CODE" 421 "not /metrics either"
hit GET /api/me "" "" -H 'Host: jobs.example.com:443'
is "$CODE" 200 "a listed Host with a port: 200"
hit GET /api/me "" "" -H 'Host: localhost'
is "$CODE" 200 "names compare without case"
hit GET /api/me
is "$CODE" 200 "127.0.0.1:PORT (curl's own Host) is listed"

# raw REQUEST: sends it on a fresh connection; RAW is the status line
# (or "closed" when the server closed without answering, "timeout"
# when nothing came within 3 s).
raw() {
	RAW=$(python3 - "$PORT" "$1" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(sys.argv[2].encode().decode("unicode_escape").encode("latin-1"))
s.settimeout(3)
try:
    data = s.recv(4096)
    print(data.split(b"\r\n", 1)[0].decode() if data else "closed")
except socket.timeout:
    print("timeout")
except OSError:
    print("closed")
PY
)
}
raw 'POST /api/login HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 5\r\nContent-Length: 60\r\n\r\n{}'
like "$RAW" '^HTTP/1.1 400' "two Content-Length headers that differ: 400"
raw 'POST /api/login HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n'
like "$RAW" '^HTTP/1.1 400' "Content-Length with Transfer-Encoding: 400"
raw 'POST /api/enqueue HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 4000000\r\n\r\n'
like "$RAW" '^HTTP/1.1 401' "a 4 MB POST without a session: 401 at once, before any body is read"
raw 'POST /api/login HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n'
like "$RAW" '^HTTP/1.1 413' "a 100 kB login: 413 at once (unauthenticated bodies stay small)"
raw 'GET /api/me HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100000\r\n\r\n'
like "$RAW" '^HTTP/1.1 413' "a GET with a 100 kB body: 413 (a body where none belongs)"
head -c 100000 /dev/zero | tr '\0' ' ' >"$T/big"
hit POST /api/login "" "" -H 'Content-Type: application/json' -H 'Transfer-Encoding: chunked' --data-binary @"$T/big"
is "$CODE/$(printf '%s' "$BODY" | jget 'd["error"]')" "413/request body too large" \
	"a chunked login body past 16 KiB: 413 (the rest dropped, not kept)"
login alice "$T/a.jar"
# A chunked body past 4 MiB whose first 4 MiB are a whole enqueue (JSON
# and white space): refused 413, nothing enqueued from the cut body.
{ printf '{"type": "echo", "payload": "{}"}'; head -c $((5 * 1024 * 1024)) /dev/zero | tr '\0' ' '; } >"$T/huge"
jobs_before=$(sql "SELECT COUNT(*) FROM jobs")
hit POST /api/enqueue "$T/a.jar" "" -H "X-CSRF-Token: $CSRF" -H 'Content-Type: application/json' \
	-H 'Transfer-Encoding: chunked' --data-binary @"$T/huge"
is "$CODE/$(sql "SELECT COUNT(*) FROM jobs")" "413/$jobs_before" \
	"a logged-in chunked body past 4 MiB: 413, and nothing done with the part that fit"
head -c 1000000 /dev/zero | tr '\0' ' ' >"$T/mid"
hit POST /api/enqueue "$T/a.jar" "" -H "X-CSRF-Token: $CSRF" -H 'Content-Type: application/json' --data-binary @"$T/mid"
is "$CODE" 400 "a logged-in 1 MB POST is read (and found not to be JSON: 400)"
hit POST /api/login "" '{"user": "alice", "password": "'"$PW"'"}'
is "$CODE" 200 "a normal login still works"
serve_stop
finish
