#!/bin/bash
# jobq passwd (argon2id hashes from stdin) and the [serve] / [user NAME]
# sections: every bad value is refused with its file:line.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
. "$top_srcdir/tests/operator/common.sh"
setup serve_conf

out=$(printf 'correct horse\n' | jq_ passwd)
is "$?" 0 "passwd reads the password from stdin"
like "$out" '^password_hash = \$argon2id\$v=19\$m=[0-9]+,t=[0-9]+,p=1\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+$' \
	"passwd prints one password_hash line with an argon2id hash"
out2=$(printf 'correct horse\n' | jq_ passwd --stdin)
ok "$([ "$out" != "$out2" ]; echo $?)" "two hashes of one password differ (random salt)"
printf 'short\n' | jq_ passwd >/dev/null 2>"$T/err"
is "$?" 65 "a password under 8 characters: exit 65"
like "$(cat "$T/err")" "too short" "and says so"
jq_ passwd </dev/null >/dev/null 2>"$T/err"
is "$?" 65 "no password on stdin: exit 65"

hash=${out#password_hash = }
base=$(cat "$CONF")
conf_with() {
	{ printf '%s\n' "$base"; cat; } >"$CONF"
	jq_ check >"$T/out" 2>"$T/err"
	RC=$?
	ERR=$(cat "$T/err")
}

conf_with <<EOC
[serve]
listen = 127.0.0.1:0
session_ttl = 2h
remember_ttl = 7d
login_rate = 3/10m
overview_cache = 500ms
metrics_listen = 127.0.0.1:0
trusted_proxies = 127.0.0.1, ::1, 10.0.0.0/8, fd00::/8

[user alice]
password_hash = $hash
role = admin

[user bob]
password_hash = $hash
EOC
is "$RC" 0 "a valid [serve] and two [user] sections pass 'jobq check'"

bad() {
	local want=$1 name=$2
	conf_with
	is "$RC" 78 "$name: exit 78"
	like "$ERR" "$want" "$name: says what and where"
}
bad 'jobq.ini:[0-9]+: login_rate: expected COUNT/DURATION' "login_rate without a slash" <<EOC
[serve]
login_rate = 5
EOC
bad 'jobq.ini:[0-9]+: login_rate: ' "login_rate with a bad window" <<EOC
[serve]
login_rate = 5/soon
EOC
bad "jobq.ini:[0-9]+: unknown key 'lisen' in \[serve\]" "a typo in [serve]" <<EOC
[serve]
lisen = 127.0.0.1:80
EOC
bad "jobq.ini:[0-9]+: role: expected admin or viewer, not 'root'" "an unknown role" <<EOC
[user carol]
password_hash = $hash
role = root
EOC
bad "jobq.ini:[0-9]+: password_hash: not an argon2id hash" "a password in clear" <<EOC
[user carol]
password_hash = hunter22
EOC
bad "jobq.ini:[0-9]+: \[user carol\] has no password_hash" "a user without a hash" <<EOC
[user carol]
role = admin
EOC
bad "jobq.ini:[0-9]+: \[serve\] needs both tls_cert and tls_key" "tls_cert alone" <<EOC
[serve]
tls_cert = $CONF
EOC
bad "jobq.ini:[0-9]+: tls_key: cannot read '/nonexistent/key.pem'" "an unreadable tls_key" <<EOC
[serve]
tls_cert = $CONF
tls_key = /nonexistent/key.pem
EOC
bad "jobq.ini:[0-9]+: session_ttl: '10s' is too short" "a session_ttl under a minute" <<EOC
[serve]
session_ttl = 10s
EOC
bad "jobq.ini:[0-9]+: overview_cache: '2h' is too long" "an overview_cache over an hour" <<EOC
[serve]
overview_cache = 2h
EOC
bad "jobq.ini:[0-9]+: overview_cache: " "an overview_cache that is no duration" <<EOC
[serve]
overview_cache = often
EOC
bad "jobq.ini:[0-9]+: trusted_proxies: '10.0.0.1/8' is not an IP address or network" "a trusted network with host bits" <<EOC
[serve]
trusted_proxies = 127.0.0.1, 10.0.0.1/8
EOC
bad "jobq.ini:[0-9]+: trusted_proxies: 'proxy.example' is not an IP address" "a host name in trusted_proxies" <<EOC
[serve]
trusted_proxies = proxy.example
EOC
bad "jobq.ini:[0-9]+: trusted_proxies: '::1/129' is not" "a prefix longer than the address" <<EOC
[serve]
trusted_proxies = ::1/129
EOC
bad "jobq.ini:[0-9]+: trusted_proxies: expected addresses" "an empty item in trusted_proxies" <<EOC
[serve]
trusted_proxies = 127.0.0.1,,::1
EOC
bad "jobq.ini:[0-9]+: metrics_listen: expected ADDR:PORT \(port 0-65535\), not '8378'" "a metrics_listen without a port" <<EOC
[serve]
metrics_listen = 8378
EOC
bad "jobq.ini:[0-9]+: listen: expected ADDR:PORT \(port 0-65535\), not '127.0.0.1:http'" "a listen port that is no number" <<EOC
[serve]
listen = 127.0.0.1:http
EOC
bad "jobq.ini:[0-9]+: api_burst: api_rate is off" "api_burst with api_rate off" <<EOC
[serve]
api_rate = off
api_burst = 3
EOC
bad "jobq.ini:[0-9]+: \[serve\] takes no name" "[serve NAME]" <<EOC
[serve main]
EOC

# jobq serve itself: nobody to log in, or a stray argument.
printf '%s\n' "$base" >"$CONF"
timeout 20 "$JOBQ" -c "$CONF" serve --listen 127.0.0.1:0 >/dev/null 2>"$T/err"
is "$?" 78 "jobq serve without any [user NAME]: exit 78"
like "$(cat "$T/err")" "nobody could log in: .* has no \[user NAME\] section and the database no user" "and says why"
jq_ serve extra >/dev/null 2>"$T/err"
is "$?" 64 "jobq serve with a stray argument: exit 64"
jq_ serve --help >"$T/out"
like "$(head -1 "$T/out")" "^Usage: jobq serve \[--listen ADDR:PORT\]" "jobq serve --help"
finish
