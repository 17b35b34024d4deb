#!/bin/bash
# The README's "behind nginx with TLS" recipe and contrib/nginx-jobq.conf,
# run as written with a real nginx (issue 20, item 2): only the ports,
# the certificate paths and what a test run needs around a server block
# (pid and temp files under $T) are changed.  Through nginx a login gets
# a Secure session cookie and HSTS; the port-80 server redirects; jobq
# refuses a Host it does not serve.
# Skipped when nginx is not installed (contrib/install-deps installs it).
. "$top_srcdir/tests/lib.sh"
one_build normal "a recipe run with a real nginx"
NGINX=$(command -v nginx || ls /usr/sbin/nginx 2>/dev/null)
[ -n "$NGINX" ] || skip_all "nginx is not installed"
command -v openssl >/dev/null || skip_all "no openssl to make a test certificate"
. "$top_srcdir/tests/operator/common.sh"
. "$top_srcdir/tests/serve_lib.sh"
setup serve_nginx

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
openssl req -x509 -newkey rsa:2048 -nodes -subj /CN=jobs.example.com -days 2 \
	-keyout "$T/key.pem" -out "$T/cert.pem" >/dev/null 2>&1 || { echo "Bail out! openssl req failed"; exit 99; }

# block FILE LANG: the first ```LANG block after the recipe's heading.
block() {
	awk -v lang="$2" '/^\*\*Behind nginx with TLS\*\*/ { on = 1 }
		on && $0 == "```" lang { inb = 1; next }
		inb && /^```/ { exit }
		inb { print }' "$1"
}
README=$top_srcdir/README.md
block "$README" nginx >"$T/readme.conf"
block "$README" ini >"$T/readme.ini"
grep -q 'server {' "$T/readme.conf" || { echo "Bail out! no nginx block in the README's recipe"; exit 99; }
grep -q '^\[serve\]' "$T/readme.ini" || { echo "Bail out! no [serve] block in the README's recipe"; exit 99; }

# run_recipe NAME SITE: jobq with the README's [serve] keys and nginx
# with SITE (ports and certificates replaced), then the checks.
run_recipe() {
	local name=$1 site=$2 jport hport tport
	jport=$(free_port) hport=$(free_port) tport=$(free_port)
	write_conf <<EOC
[queue default]

[handler echo]
exec = $HANDLERS/echo.sh

$(sed "s/127\.0\.0\.1:8377/127.0.0.1:$jport/" "$T/readme.ini")

[user alice]
password_hash = $PWHASH
role = admin
EOC
	SERVE_LISTEN=127.0.0.1:$jport serve_start
	sed -e "s|listen 443 ssl|listen 127.0.0.1:$hport ssl|" -e "s|listen 80;|listen 127.0.0.1:$tport;|" \
		-e "s|/etc/letsencrypt/live/jobs.example.com/fullchain.pem|$T/cert.pem|" \
		-e "s|/etc/letsencrypt/live/jobs.example.com/privkey.pem|$T/key.pem|" \
		-e "s|127\.0\.0\.1:8377|127.0.0.1:$jport|g" "$site" >"$T/site.conf"
	mkdir -p "$T/ngx"
	cat >"$T/nginx.conf" <<EON
user $(id -un) $(id -gn);
worker_processes 1;
pid $T/ngx/nginx.pid;
error_log $T/ngx/error.log;
events { worker_connections 64; }
http {
    access_log off;
    client_body_temp_path $T/ngx/body;
    proxy_temp_path $T/ngx/proxy;
    fastcgi_temp_path $T/ngx/fastcgi;
    uwsgi_temp_path $T/ngx/uwsgi;
    scgi_temp_path $T/ngx/scgi;
    include $T/site.conf;
}
EON
	"$NGINX" -p "$T/ngx" -c "$T/nginx.conf" -e "$T/ngx/error.log" 2>"$T/ngx/start.err"
	ok $? "$name: nginx starts with it" || diag "$(cat "$T/ngx/start.err")"
	[ -s "$T/ngx/nginx.pid" ] && BG_PIDS+=("$(cat "$T/ngx/nginx.pid")") # stopped at exit, whatever happens
	local i=0
	while ! curl -sk -o /dev/null "https://127.0.0.1:$hport/" && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done

	local via=(--resolve "jobs.example.com:$hport:127.0.0.1" --resolve "jobs.example.com:$tport:127.0.0.1")
	URL=https://jobs.example.com:$hport
	hit POST /api/login "$T/n.jar" '{"user": "alice", "password": "'"$PW"'"}' "${via[@]}"
	is "$CODE" 200 "$name: a login through nginx"
	like "$(header set-cookie)" '^jobq_session=[^;]+;.*; Secure' "$name: the session cookie is Secure"
	is "$(header strict-transport-security)" "max-age=31536000" "$name: HSTS is sent"
	is "$(printf '%s\n' "$HDRS" | grep -c '^strict-transport-security:')" 1 "$name: once"
	is "$(awk '$1 ~ /jobs.example.com/ && $6 == "jobq_session" { print $4 }' "$T/n.jar")" TRUE \
		"$name: curl's jar keeps it for HTTPS only"
	URL=http://jobs.example.com:$tport
	hit GET /api/me "$T/n.jar" "" "${via[@]}"
	like "$CODE/$(header location)" "^301/https://jobs.example.com/api/me" "$name: port 80 redirects to https"
	URL=https://127.0.0.1:$hport
	hit GET /api/me
	is "$CODE" 421 "$name: a Host jobq does not serve (allowed_hosts): 421"
	kill -QUIT "$(cat "$T/ngx/nginx.pid")"
	serve_stop
	rm -f "$T/n.jar"
}

run_recipe "README recipe" "$T/readme.conf"
# contrib/nginx-jobq.conf: the same, with http2 and a body limit.
run_recipe "contrib/nginx-jobq.conf" "$top_srcdir/contrib/nginx-jobq.conf"
finish
