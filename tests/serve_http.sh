#!/bin/bash
# jobq serve over HTTP: every status code the dashboard uses, sessions
# (hashed in the database, surviving a restart), CSRF and roles (nothing
# changes when they are wrong), the login rate limit per user and per
# address, the security headers on every response, and job text (type,
# payload, error, output) coming back as JSON data, never as markup.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
. "$top_srcdir/tests/operator/common.sh"
. "$top_srcdir/tests/serve_lib.sh"
setup serve_http

write_conf <<EOC
[worker]
poll_interval = 20ms

[queue default]
[queue mail]

[handler echo]
exec = $HANDLERS/echo.sh

[serve]
login_rate = 3/1m
allow_plain_http = yes

[user alice]
password_hash = $PWHASH
role = admin

[user bob]
password_hash = $PWHASH
role = viewer
EOC
# Listen on every address so the rate limit can be seen from 127.0.0.2
# and 127.0.0.3 (all of 127/8 is the loopback).
SERVE_LISTEN=0.0.0.0:0
serve_start

# Every response must carry the four security headers.
BAD_HEADERS=0
check_headers() {
	[ "$(header content-security-policy)" = "default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'" ] &&
		[ "$(header x-frame-options)" = DENY ] &&
		[ "$(header x-content-type-options)" = nosniff ] &&
		[ "$(header referrer-policy)" = no-referrer ] || {
		BAD_HEADERS=$((BAD_HEADERS + 1))
		diag "missing security headers on $1 ($CODE)"
	}
}
h() {
	hit "$@"
	check_headers "$1 $2"
}

# ---- pages, files, 404, 405, 401 ----
h GET /
is "$CODE" 200 "GET / is 200"
like "$(header content-type)" '^text/html' "as HTML"
h GET /jobs/42
is "$CODE" 200 "a job's shareable address serves the page"
h GET /static/app.js
is "$CODE/$(header content-type)" "200/text/javascript; charset=utf-8" "the script is served from the binary"
for f in index.html app.js app.css icon.svg; do
	curl -s "$URL/static/$f" | cmp -s - "$top_srcdir/src/www/$f"
	ok $? "/static/$f is src/www/$f byte for byte"
done
h GET /static/nope.js
is "$CODE" 404 "an unknown file: 404"
h GET /nowhere
is "$CODE" 404 "an unknown page: 404"
h GET /jobs/0
is "$CODE" 404 "job id 0: 404"
h PUT /api/overview
is "$CODE/$(header allow)" "405/GET, HEAD" "PUT on a GET endpoint: 405 with Allow"
h GET /api/failed/retry
is "$CODE/$(header allow)" "405/POST" "GET on a POST endpoint: 405 with Allow: POST"
h GET /jobs/42abc
is "$CODE" 404 "a job address with junk after the id: 404"
h GET /jobs/99999999999999999999
is "$CODE" 404 "a job id too long for 64 bits: 404"
h GET /api/jobs/42/run-now
is "$CODE/$(header allow)" "405/POST" "GET on a job action: 405"
h GET /api/overview
is "$CODE" 401 "the API without a session: 401"

# ---- login ----
h POST /api/login "$T/nobody" '{"user": "alice", "password": "wrong-password"}'
is "$CODE" 401 "a wrong password: 401"
h POST /api/login "$T/nobody" '{"user": "alice"}'
is "$CODE" 400 "a login without a password: 400"
CODE=$(curl -s -o /dev/null -w '%{http_code}' -H 'Content-Type: text/plain' \
	--data-binary "{\"user\": \"alice\", \"password\": \"$PW\"}" "$URL/api/login")
is "$CODE" 400 "a login that is not JSON (a cross-site form): 400"
CODE=$(curl -s -o /dev/null -w '%{http_code}' -H 'Content-Type: application/jsonx' \
	--data-binary "{\"user\": \"alice\", \"password\": \"$PW\"}" "$URL/api/login")
is "$CODE" 400 "a type that only starts as JSON's (application/jsonx): 400"
CODE=$(curl -s -o /dev/null -w '%{http_code}' -H 'Content-Type: Application/JSON; charset=utf-8' \
	--data-binary "{\"user\": \"alice\", \"password\": \"wrong\"}" "$URL/api/login")
is "$CODE" 401 "application/json with a charset, in any case: read (a wrong password: 401)"
login alice "$T/a.jar"
check_headers "login"
is "$CODE" 200 "alice logs in: 200"
cookie=$(header set-cookie)
like "$cookie" '^jobq_session=[0-9a-f]{64}; Path=/; HttpOnly; SameSite=Strict$' "session cookie: HttpOnly, SameSite=Strict, no Max-Age without remember me"
token=$(printf '%s' "$cookie" | sed 's/^jobq_session=\([0-9a-f]*\);.*/\1/')
is "$(sql "SELECT COUNT(*) FROM jobq_sessions WHERE token_hash = '$token'")" 0 "the database does not hold the token itself"
is "$(sql "SELECT COUNT(*) FROM jobq_sessions WHERE token_hash = SHA2('$token', 256) AND username = 'alice'")" 1 "only its SHA-256"
is "$(printf '%s' "$BODY" | jget 'd["role"]')" admin "the login answers the role"
like "$CSRF" '^[0-9a-f]{64}$' "and a 32-byte CSRF token"
hit POST /api/login "$T/r.jar" "{\"user\": \"alice\", \"password\": \"$PW\", \"remember\": true}"
like "$(header set-cookie)" '; Max-Age=2592000$' "remember me: the cookie lasts remember_ttl (30d)"
h GET /api/me "$T/a.jar"
is "$CODE/$(printf '%s' "$BODY" | jget 'd["user"]')" "200/alice" "GET /api/me with the session: 200"
login bob "$T/b.jar"
BOB_CSRF=$CSRF
login alice "$T/a.jar"

# ---- job text comes back as data ----
X='<img src=x onerror=alert(1)>'
sql "INSERT INTO jobs (queue, type, payload, last_error) VALUES ('default', '$X', '{\"x\": \"$X\"}', '$X')"
jid=$(sql "SELECT MAX(id) FROM jobs")
sql "INSERT INTO job_runs (job_id, queue, type, attempt, worker, started_at, duration_ms, outcome, exit_status, output, error)
     VALUES ($jid, 'default', '$X', 1, 'w1', UTC_TIMESTAMP(6), 5, 'retry', 'exit 1', 'out $X', 'err $X')"
h GET "/api/jobs/$jid" "$T/a.jar"
is "$CODE" 200 "GET /api/jobs/ID: 200"
is "$(printf '%s' "$BODY" | grep -c '<img')" 0 "no '<img' anywhere in the answer"
like "$BODY" '\\u003cimg src=x onerror=alert\(1\)\\u003e' "'<' and '>' are \\u escapes"
is "$(printf '%s' "$BODY" | jget 'd["job"]["type"]')" "$X" "the type decodes to the stored text"
is "$(printf '%s' "$BODY" | jget 'json.loads(d["job"]["payload"])["x"]')" "$X" "the payload too"
is "$(printf '%s' "$BODY" | jget 'd["job"]["last_error"]')" "$X" "the last error too"
is "$(printf '%s' "$BODY" | jget 'd["runs"][0]["error"] + "|" + d["runs"][0]["output"]')" "err $X|out $X" "the run's stderr and stdout too"
like "$(header content-type)" '^application/json' "served as JSON"
h GET "/api/jobs?type=$(python3 -c 'import urllib.parse,sys; print(urllib.parse.quote(sys.argv[1]))' "$X")" "$T/a.jar"
is "$(printf '%s' "$BODY" | jget '[j["id"] for j in d["jobs"]]')" "[$jid]" "the jobs list filters by that type"
is "$(printf '%s' "$BODY" | grep -c '<img')" 0 "and escapes it"
h GET /api/jobs/99999999 "$T/a.jar"
is "$CODE" 404 "an unknown job: 404"
h GET "/api/jobs?state=lost" "$T/a.jar"
is "$CODE" 400 "an unknown state filter: 400"

# ---- CSRF and roles: 403 and nothing changed ----
sql "INSERT INTO failed_jobs (id, queue, type, payload, attempts, exception) VALUES (500, 'default', 'echo', '{}', 3, '$X')"
h GET /api/failed "$T/a.jar"
is "$(printf '%s' "$BODY" | jget '[(f["id"], f["summary"]) for f in d["failed"]]')" "[[500, \"$X\"]]" "the dead letter lists the job, its error's summary as text"
hit POST /api/failed/retry "$T/a.jar" '{"ids": [500]}'
check_headers "csrf missing"
is "$CODE" 403 "a POST without the CSRF token: 403"
post /api/failed/retry "$T/a.jar" '{"ids": [500]}' "$(printf '%064d' 0)"
is "$CODE" 403 "a POST with a wrong CSRF token: 403"
post /api/failed/retry "$T/a.jar" '{"ids": [500]}' "${CSRF:0:63}"
is "$CODE" 403 "a POST with a truncated CSRF token: 403"
post /api/failed/retry "$T/a.jar" '{"ids": [500]}' "$BOB_CSRF"
is "$CODE" 403 "a POST with another session's token: 403"
post /api/failed/retry "$T/b.jar" '{"ids": [500]}' "$BOB_CSRF"
check_headers "viewer POST"
is "$CODE" 403 "a viewer's POST with a right token: 403"
is "$(count failed_jobs)/$(count jobs "id = 500")/$(count jobq_audit "job_id IS NOT NULL")" "1/0/0" "nothing changed, nothing audited"
post /api/failed/retry "$T/a.jar" 'not json'
is "$CODE" 400 "an admin POST with a body that is not JSON: 400"
post /api/failed/retry "$T/a.jar" '{"ids": [500]}'
is "$CODE/$(printf '%s' "$BODY" | jget 'd["retried"]')" "200/1" "the admin with the right token retries: 200"
is "$(count failed_jobs)/$(count jobs "id = 500")" "0/1" "the job left the dead letter for the queue"
is "$(sql "SELECT CONCAT(username, ' ', action, ' ', job_id) FROM jobq_audit WHERE job_id IS NOT NULL")" "alice retry 500" "the retry is audited"
h GET /api/jobs/500 "$T/b.jar"
is "$(printf '%s' "$BODY" | jget '[(a["user"], a["action"]) for a in d["audit"]]')" '[["alice", "retry"]]' "and shown on the job (to a viewer too)"

head -c $((5 * 1024 * 1024)) /dev/zero | tr '\0' ' ' >"$T/big"
hit POST /api/enqueue "$T/a.jar" "" -H "X-CSRF-Token: $CSRF" -H 'Content-Type: application/json' --data-binary @"$T/big"
is "$CODE" 413 "a body over 4 MiB: 413"

# ---- 422 and 409 ----
post /api/enqueue "$T/a.jar" '{"type": "nosuch", "payload": "{}"}'
is "$CODE" 422 "enqueue of an unknown type: 422"
post /api/enqueue "$T/a.jar" '{"type": "echo", "queue": "nosuch", "payload": "{}"}'
is "$CODE" 422 "enqueue into an unknown queue: 422"
post /api/enqueue "$T/a.jar" '{"type": "echo", "payload": "{not json"}'
is "$CODE" 400 "enqueue of a payload that is not JSON: 400"
# The rule jobq enqueue holds a payload to: nothing after the value, no
# raw control character inside a string (the handler's parser refuses it).
post /api/enqueue "$T/a.jar" '{"type": "echo", "payload": "{\"a\": 1} trailing"}'
is "$CODE/$(printf '%s' "$BODY" | jget 'd["error"]')" "400/payload is not valid JSON (at byte 9)" \
	"enqueue of a payload with text after its JSON: 400, naming the byte"
post /api/enqueue "$T/a.jar" '{"type": "echo", "payload": "{\"a\": \"x\ty\"}"}'
like "$CODE/$(printf '%s' "$BODY" | jget 'd["error"]')" "^400/payload is not valid JSON \\(at byte 8: a control character" \
	"enqueue of a payload with a raw tab inside a string: 400"
is "$(count jobs "type = 'echo' AND id <> 500")" 0 "none of them enqueued anything"
post /api/enqueue "$T/a.jar" '{"type": "echo", "queue": "mail", "payload": "{\"n\": 1}", "count": 3, "delay": 60}'
is "$CODE" 200 "enqueue 3 delayed jobs: 200"
is "$(count jobs "type = 'echo' AND queue = 'mail' AND available_at > UTC_TIMESTAMP() + INTERVAL 50 SECOND")" 3 "three delayed jobs in the mail queue"
sql "UPDATE jobs SET lease_token = REPEAT('a', 32), reserved_by = 'w1', reserved_at = UTC_TIMESTAMP(6), lease_expires_at = UTC_TIMESTAMP(6) + INTERVAL 1 HOUR WHERE id = 500"
post /api/jobs/500/delete "$T/a.jar" '{}'
is "$CODE" 409 "delete of a job under a live lease: 409"
post /api/jobs/500/release "$T/a.jar" '{}'
is "$CODE" 409 "release of a live lease: 409"
is "$(count jobs "id = 500 AND lease_token IS NOT NULL")" 1 "the job is untouched"
sql "UPDATE jobs SET lease_expires_at = UTC_TIMESTAMP(6) - INTERVAL 1 SECOND WHERE id = 500"
post /api/jobs/500/release "$T/a.jar" '{}'
is "$CODE/$(count jobs "id = 500 AND lease_token IS NULL")" "200/1" "release of a stale job: 200, ready again"
post /api/jobs/500/delete "$T/a.jar" '{}'
is "$CODE/$(count jobs "id = 500")" "200/0" "delete: 200, gone"
post /api/jobs/500/delete "$T/a.jar" '{}'
is "$CODE" 404 "delete again: 404"

# ---- cancel: at once, or requested of the worker holding the job ----
c1=$(count jobs "type = 'echo' AND queue = 'mail'")
id1=$(sql "SELECT MIN(id) FROM jobs WHERE type = 'echo' AND queue = 'mail'")
post /api/jobs/$id1/cancel "$T/a.jar" '{}'
is "$CODE/$(printf '%s' "$BODY" | jget 'd["state"]')" "200/cancelled" "cancel of a delayed job: 200, cancelled"
is "$(sql "SELECT CONCAT_WS('|', outcome, worker, error) FROM job_runs WHERE job_id = $id1")" \
	"cancelled|alice|cancelled by alice at $(sql "SELECT LEFT(MAX(started_at), 19) FROM job_runs WHERE job_id = $id1") UTC" \
	"its run says who cancelled it"
id2=$(sql "SELECT MAX(id) FROM jobs WHERE type = 'echo' AND queue = 'mail'")
sql "UPDATE jobs SET lease_token = REPEAT('b', 32), reserved_by = 'w1', reserved_at = UTC_TIMESTAMP(6), lease_expires_at = UTC_TIMESTAMP(6) + INTERVAL 1 HOUR WHERE id = $id2"
post /api/jobs/$id2/cancel "$T/a.jar" '{}'
is "$CODE/$(printf '%s' "$BODY" | jget 'd["state"]')" "200/requested" "cancel of a running job: 200, requested"
is "$(sql "SELECT cancel_by FROM jobs WHERE id = $id2")" alice "the request names who asked"
h GET /api/jobs/$id2 "$T/a.jar"
is "$(printf '%s' "$BODY" | jget 'd["job"]["cancel_requested_by"]')" alice "the job's page data shows the request"
post /api/jobs/$id1/cancel "$T/a.jar" '{}'
is "$CODE" 404 "cancel of a job that ended: 404"
is "$(sql "SELECT COUNT(*) FROM jobq_audit WHERE action = 'cancel'")" 2 "each cancel is audited"
post /api/bulk/count "$T/a.jar" '{"action": "cancel", "queue": "mail", "state": "reserved"}'
is "$CODE/$(printf '%s' "$BODY" | jget 'd["count"]')" "200/1" "bulk cancel counts the reserved jobs of a queue"
sql "UPDATE jobs SET lease_token = NULL, lease_expires_at = NULL, cancel_by = NULL WHERE id = $id2"

# ---- 500: the detail goes to the log only ----
sql "RENAME TABLE jobq_workers TO jobq_workers_away"
h GET /api/workers "$T/a.jar"
is "$CODE" 500 "a database error: 500"
is "$(printf '%s' "$BODY" | jget 'd["error"]')" "internal error (the server log has the detail)" "the client gets a short sentence"
like "$(cat "$T/serve.log")" "jobq_workers" "the log gets the detail"
sql "RENAME TABLE jobq_workers_away TO jobq_workers"
h GET /api/workers "$T/a.jar"
is "$CODE" 200 "and the next request works"

# ---- the database connections are killed: the next requests reconnect ----
for cid in $(sql "SELECT id FROM information_schema.processlist WHERE db = '$DB' AND id <> CONNECTION_ID()"); do
	sql "KILL CONNECTION $cid" 2>/dev/null
done
codes=
for i in 1 2 3 4 5 6; do
	hit GET /api/workers "$T/a.jar"
	codes+="$CODE "
done
is "$codes" "200 200 200 200 200 200 " "every request after the kill finds its connection dead and reconnects: 200"

# ---- where to listen ----
jq_ serve --listen nonsense 2>"$T/err"
is "$?" 64 "--listen without a port: a usage error, exit 64"
like "$(cat "$T/err")" "--listen: expected ADDR:PORT \\(port 0-65535\\), not 'nonsense'" "and says what it wanted"
jq_ serve --listen "127.0.0.1:${URL##*:}" 2>"$T/err"
is "$?" 1 "a port in use: exit 1"
like "$(cat "$T/err")" "listen on 127.0.0.1:[0-9]+: Address already in use" "and says so"

# ---- sessions: shared through the database ----
serve_stop
is "$?" 0 "SIGTERM: jobq serve exits 0"
serve_start
hit GET /api/overview "$T/a.jar"
is "$CODE" 200 "a restart logs nobody out"
sql "UPDATE jobq_sessions SET expires_at = UTC_TIMESTAMP(6) - INTERVAL 1 SECOND WHERE username = 'bob'"
hit GET /api/overview "$T/b.jar"
is "$CODE" 401 "an expired session: 401"
hit GET /api/me "$T/b.jar"
is "$CODE/$BODY" '200/{"user":null}' "/api/me answers that nobody is logged in"
token=$(awk '$6 == "jobq_session" { print $7 }' "$T/a.jar")
post /api/logout "$T/a.jar" '{}'
is "$CODE" 200 "logout: 200"
like "$(header set-cookie)" 'Max-Age=0' "and the cookie is cleared"
curl -s -o /dev/null -w '%{http_code}' -H "Cookie: jobq_session=$token" "$URL/api/overview" >"$T/code"
is "$(cat "$T/code")" 401 "the old token no longer opens the session"

# ---- login rate limit: 3 failures per user and per address a minute ----
sql "DELETE FROM jobq_login_failures"
as() { hit POST /api/login "" "$2" --interface "$1"; }
for i in 1 2 3; do as 127.0.0.2 '{"user": "alice", "password": "wrong"}'; done
is "$CODE" 401 "three wrong passwords for alice from 127.0.0.2: 401"
as 127.0.0.2 '{"user": "alice", "password": "wrong"}'
check_headers "429"
is "$CODE" 429 "a fourth try from 127.0.0.2: 429"
ra=$(header retry-after)
ok "$([ "$ra" -ge 1 ] && [ "$ra" -le 61 ]; echo $?)" "with Retry-After in 1..61 seconds (got $ra)"
as 127.0.0.3 "{\"user\": \"alice\", \"password\": \"$PW\"}"
is "$CODE" 200 "alice with the right password from an address with no failures: 200 (nobody locks her out)"
as 127.0.0.2 "{\"user\": \"bob\", \"password\": \"$PW\"}"
is "$CODE" 429 "bob from the address that failed three times: 429"
as 127.0.0.3 "{\"user\": \"bob\", \"password\": \"$PW\"}"
is "$CODE" 200 "bob from a clean address: 200"
sql "UPDATE jobq_login_failures SET at = at - INTERVAL 2 MINUTE"
as 127.0.0.2 "{\"user\": \"alice\", \"password\": \"$PW\"}"
is "$CODE" 200 "once the window passed alice logs in again"

is "$BAD_HEADERS" 0 "every response carried the four security headers"
serve_stop
finish
