#!/bin/bash
# jobq serve behind a reverse proxy: with [serve] trusted_proxies, the
# login rate limit, the sessions and the audit log use the client that
# X-Forwarded-For names (its last hop that is not a trusted proxy); from
# any other peer, and without trusted_proxies, the header is ignored.
# The login limit counts an IPv6 client as its /64.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
. "$top_srcdir/tests/operator/common.sh"
. "$top_srcdir/tests/serve_lib.sh"
setup serve_proxy

write_conf <<EOC
[queue default]

[handler echo]
exec = $HANDLERS/echo.sh

[serve]
login_rate = 3/1m
trusted_proxies = 127.0.0.2, 10.0.0.0/8
allow_plain_http = yes

[user alice]
password_hash = $PWHASH
role = admin

[user bob]
password_hash = $PWHASH
role = viewer
EOC
# Every address of 127/8 is the loopback: 127.0.0.2 plays the proxy,
# 127.0.0.3 a client that reaches jobq serve directly.
SERVE_LISTEN=0.0.0.0:0
serve_start

# via FROM XFF JAR BODY: a login sent from FROM with X-Forwarded-For XFF.
via() { hit POST /api/login "$3" "$4" --interface "$1" -H "X-Forwarded-For: $2"; }
good() { printf '{"user": "%s", "password": "%s"}' "$1" "$PW"; }
bad() { printf '{"user": "%s", "password": "wrong"}' "$1"; }
# Where the last session was opened from.
last_session() { sql "SELECT address FROM jobq_sessions ORDER BY created_at DESC LIMIT 1"; }

# ---- the proxy's clients are told apart ----
for u in x1 x2 x3; do via 127.0.0.2 198.51.100.7 "" "$(bad $u)"; done
is "$CODE" 401 "three wrong passwords through the proxy for 198.51.100.7: 401"
is "$(sql "SELECT GROUP_CONCAT(DISTINCT address) FROM jobq_login_failures")" 198.51.100.7 \
	"the failures are recorded for the forwarded client, not the proxy"
via 127.0.0.2 198.51.100.7 "" "$(good bob)"
is "$CODE" 429 "that client is limited"
via 127.0.0.2 198.51.100.8 "$T/b.jar" "$(good bob)"
is "$CODE" 200 "another client behind the same proxy logs in"
is "$(last_session)" 198.51.100.8 "its session records the forwarded address"

# ---- the rightmost hop that is not a trusted proxy ----
via 127.0.0.2 "203.0.113.9, 198.51.100.9" "" "$(good bob)"
is "$CODE/$(last_session)" 200/198.51.100.9 "a hop the client wrote itself is not believed"
via 127.0.0.2 "203.0.113.9, 198.51.100.10, 10.1.2.3" "" "$(good bob)"
is "$CODE/$(last_session)" 200/198.51.100.10 "trusted hops (10.0.0.0/8) are walked past"
hit POST /api/login "" "$(good bob)" --interface 127.0.0.2 -H "X-Forwarded-For: 198.51.100.11" -H "X-Forwarded-For: 10.0.0.5"
is "$CODE/$(last_session)" 200/198.51.100.11 "two X-Forwarded-For headers read as one list"
via 127.0.0.2 "[2001:db8::1]" "" "$(good bob)"
is "$CODE/$(last_session)" 200/2001:db8::1 "an IPv6 hop in brackets"
via 127.0.0.2 "::ffff:198.51.100.12" "" "$(good bob)"
is "$CODE/$(last_session)" 200/198.51.100.12 "an IPv4-mapped hop is the IPv4 address"
via 127.0.0.2 "198.51.100.13, not-an-address" "" "$(good bob)"
is "$CODE/$(last_session)" 200/127.0.0.2 "a hop that is no address stops the walk at the proxy"
via 127.0.0.2 "10.0.0.7, 10.0.0.8" "" "$(good bob)"
is "$CODE/$(last_session)" 200/10.0.0.7 "every hop trusted: the leftmost"

# ---- IPv6: one host has a /64, and is limited as one ----
sql "DELETE FROM jobq_login_failures"
for i in 1 2 3; do via 127.0.0.2 "2001:db8:1:2::$i" "" "$(bad x$i)"; done
is "$CODE/$(sql "SELECT GROUP_CONCAT(DISTINCT address) FROM jobq_login_failures")" 401/2001:db8:1:2::/64 \
	"three wrong passwords from three addresses of one /64: counted for the /64"
via 127.0.0.2 "2001:db8:1:2::4" "" "$(bad x4)"
is "$CODE" 429 "a fourth address of that /64 is limited (no fresh guess per address)"
via 127.0.0.2 "2001:db8:1:3::1" "$T/v6.jar" "$(good bob)"
is "$CODE/$(last_session)" 200/2001:db8:1:3::1 "another /64 logs in, its session naming the full address"
via 127.0.0.2 "64:ff9b::198.51.100.77" "" "$(bad x5)"
is "$(sql "SELECT address FROM jobq_login_failures ORDER BY id DESC LIMIT 1")" 198.51.100.77 \
	"a NAT64 address (64:ff9b::/96) counts as the IPv4 client it holds"
sql "DELETE FROM jobq_login_failures"

# ---- the audit log names the client ----
jq_ enqueue echo '{}' --delay 1h >/dev/null
id=$(sql "SELECT MAX(id) FROM jobs")
via 127.0.0.2 198.51.100.20 "$T/a.jar" "$(good alice)"
CSRF=$(printf '%s' "$BODY" | jget 'd["csrf"]')
hit POST "/api/jobs/$id/run-now" "$T/a.jar" '{}' --interface 127.0.0.2 -H "X-Forwarded-For: 198.51.100.20" -H "X-CSRF-Token: $CSRF"
is "$CODE" 200 "run now through the proxy"
is "$(sql "SELECT CONCAT(username, ' ', address) FROM jobq_audit WHERE job_id = $id")" "alice 198.51.100.20" \
	"the audit log names the forwarded client"

# ---- from a peer that is not trusted, the header is ignored ----
via 127.0.0.3 198.51.100.8 "" "$(good bob)"
is "$CODE/$(last_session)" 200/127.0.0.3 "a direct client's X-Forwarded-For is ignored"
sql "DELETE FROM jobq_login_failures"
for u in y1 y2 y3; do via 127.0.0.3 "198.51.100.$u" "" "$(bad $u)"; done
is "$(sql "SELECT GROUP_CONCAT(DISTINCT address) FROM jobq_login_failures")" 127.0.0.3 \
	"its failures count against its own address"
via 127.0.0.3 198.51.100.99 "" "$(good bob)"
is "$CODE" 429 "and a forged header does not lift its limit"
serve_stop

# ---- without trusted_proxies nobody's header is believed ----
sed -i '/^trusted_proxies = /d' "$CONF"
sql "DELETE FROM jobq_login_failures"
serve_start
via 127.0.0.2 198.51.100.30 "" "$(good bob)"
is "$CODE/$(last_session)" 200/127.0.0.2 "no trusted_proxies: the peer's address"
serve_stop
finish
