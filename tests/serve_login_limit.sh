#!/bin/bash
# The login limit counts an attempt before its password is checked: 40
# concurrent wrong logins get no more than login_rate's count of checks
# through.  And nobody can lock a user out: after any number of failures
# for alice from elsewhere, alice's correct password from an address that
# has not failed still logs in; attackers are slowed per address (all
# names) and per name (one guess per address once the name is over).
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
. "$top_srcdir/tests/operator/common.sh"
. "$top_srcdir/tests/serve_lib.sh"
setup serve_login_limit

write_conf <<EOC
[queue default]
[handler echo]
exec = $HANDLERS/echo.sh

[user alice]
password_hash = $PWHASH
role = admin

[user bob]
password_hash = $PWHASH
role = viewer

[serve]
login_rate = 5/1m
EOC
serve_start
as() { hit POST /api/login "" "$2" --interface "$1"; }
good() { printf '{"user": "%s", "password": "%s"}' "$1" "$PW"; }
bad() { printf '{"user": "%s", "password": "wrong"}' "$1"; }

# ---- 40 concurrent wrong logins: at most 5 checked ----
# Each retries a 503 (too many logins at once: not an answer about the
# password) until it gets 401 or 429.
python3 - "$URL" >"$T/burst" <<'EOF'
import http.client, json, sys, threading, time, urllib.parse
u = urllib.parse.urlsplit(sys.argv[1])
go, out = threading.Event(), []
def one():
    go.wait()
    while True:
        c = http.client.HTTPConnection(u.hostname, u.port, timeout=60, source_address=("127.0.0.2", 0))
        c.request("POST", "/api/login", json.dumps({"user": "alice", "password": "wrong"}),
                  {"Content-Type": "application/json"})
        s = c.getresponse().status
        c.close()
        if s != 503:
            out.append(s)
            return
        time.sleep(0.05)
ts = [threading.Thread(target=one) for _ in range(40)]
for t in ts: t.start()
go.set()
for t in ts: t.join()
print(" ".join(str(out.count(s)) for s in (401, 429, 200)), len(out))
EOF
read -r n401 n429 n200 n <"$T/burst"
diag "40 concurrent wrong logins: $n401 got 401, $n429 got 429"
is "$n" 40 "all 40 answered"
ok "$([ "$n401" -le 5 ]; echo $?)" "no more than 5 were checked (got $n401 401s)"
is "$((n401 + n429))" 40 "the rest were refused with 429"
is "$(grep -c "failed login of 'alice'" "$T/serve.log")" "$n401" "the log shows as many checks as 401s"

# ---- nobody locks alice out ----
as 127.0.0.2 "$(good alice)"
is "$CODE" 429 "the right password from the address that failed: 429 (per address)"
as 127.0.0.2 "$(good bob)"
is "$CODE" 429 "and so is any other name from there"
as 127.0.0.3 "$(good alice)"
is "$CODE" 200 "alice's right password from an address with no failures: 200"
as 127.0.0.4 "$(bad alice)"
is "$CODE" 401 "another attacker address gets one guess at alice"
as 127.0.0.4 "$(bad alice)"
is "$CODE" 429 "but no second one (alice is over her limit)"
ra=$(header retry-after)
ok "$([ "$ra" -ge 1 ] && [ "$ra" -le 61 ]; echo $?)" "with Retry-After in 1..61 seconds (got $ra)"
as 127.0.0.4 "$(good bob)"
is "$CODE" 200 "that address can still log in as bob, whose name is not over"
as 127.0.0.5 "$(good alice)"
is "$CODE" 200 "alice again from another clean address: 200"
is "$(count jobq_login_failures "address IN ('127.0.0.3', '127.0.0.5')")" 0 "a correct password leaves no failure behind"

# ---- the window passes ----
sql "UPDATE jobq_login_failures SET at = at - INTERVAL 2 MINUTE"
as 127.0.0.2 "$(good alice)"
is "$CODE" 200 "once the window passed, alice logs in from 127.0.0.2 too"
serve_stop
finish
