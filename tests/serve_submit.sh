#!/bin/bash
# One submit, one job: POST /api/enqueue with a submit id enqueues once
# however often and however concurrently it is sent (the repeats get the
# first answer, "repeated": true); different ids and requests without
# one each enqueue.  The API rate limit per session: a burst over
# api_rate/api_burst gets 429 with Retry-After and a JSON body, another
# session is not affected, and waiting lets the session in again.  Bad
# api_rate/api_burst values are refused with file:line.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
. "$top_srcdir/tests/operator/common.sh"
. "$top_srcdir/tests/serve_lib.sh"
setup serve_submit

base_conf() {
	cat <<EOC
[queue default]
[handler echo]
exec = $HANDLERS/echo.sh

[user alice]
password_hash = $PWHASH
role = admin

[user carol]
password_hash = $PWHASH
role = admin

[user bob]
password_hash = $PWHASH
role = viewer
EOC
}
{ base_conf; printf '[serve]\noverview_cache = 0\n'; } | write_conf
serve_start
login alice "$T/jar"
ACSRF=$CSRF
jobs() { count jobs; }
field() { printf '%s' "$1" | jget "d[\"$2\"]"; }
enq() { # enq SUBMIT_ID: the body of a 3-job enqueue with that id
	printf '{"type": "echo", "payload": "{\\"n\\": 1}", "count": 3%s}' "${1:+, \"submit_id\": \"$1\"}"
}

# ---- (a) the same submit id three times at once, then three more ----
sid=3f2b8c1e-9d4a-4c7e-8b1f-0a2d5e6f7a81
pids=()
for i in 1 2 3; do
	curl -s -b "$T/jar" -H "X-CSRF-Token: $ACSRF" -H 'Content-Type: application/json' \
		--data-binary "$(enq $sid)" -o "$T/par.$i" -w '%{http_code}' "$URL/api/enqueue" >"$T/code.$i" &
	pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
is "$(cat "$T"/code.* | tr -d '\n')" "200200200" "three concurrent submits of one id all answer 200"
is "$(jobs)" 3 "and make one submit's jobs (count 3), not three"
firsts=$(for i in 1 2 3; do field "$(cat "$T/par.$i")" first_id; done | sort -u | xargs)
is "$(printf '%s\n' $firsts | wc -l)" 1 "all three answer the same first id ($firsts)"
is "$firsts" "$(sql "SELECT MIN(id) FROM jobs")" "which is the first job's"
is "$(for i in 1 2 3; do field "$(cat "$T/par.$i")" repeated; done | sort | xargs)" "false true true" \
	"one made the jobs, two say they repeated it"
is "$(for i in 1 2 3; do field "$(cat "$T/par.$i")" count; done | xargs)" "3 3 3" "each answers the count of 3"
for i in 1 2 3; do
	post /api/enqueue "$T/jar" "$(enq $sid)" "$ACSRF"
	is "$CODE $(field "$BODY" first_id) $(field "$BODY" repeated)" "200 $firsts true" "serial repeat $i: 200, the same ids, repeated"
done
is "$(jobs)" 3 "the serial repeats enqueued nothing"
is "$(sql "SELECT COUNT(*) FROM jobq_audit WHERE action = 'enqueue' AND job_id IS NOT NULL")" 3 \
	"the audit has the three jobs once"
is "$(sql "SELECT CONCAT(first_id, ' ', job_count) FROM jobq_submits WHERE submit_id = '$sid'")" "$firsts 3" \
	"the submit's record holds its first id and count"

# ---- (b) other ids, other users, no id, bad ids ----
post /api/enqueue "$T/jar" "$(enq other-1)" "$ACSRF"
b1=$(field "$BODY" first_id)
post /api/enqueue "$T/jar" "$(enq other-2)" "$ACSRF"
b2=$(field "$BODY" first_id)
is "$(jobs)" 9 "two different submit ids: two more sets of jobs"
ok "$([ "$b1" != "$b2" ] && [ "$b1" != "$firsts" ]; echo $?)" "each with its own first id ($b1, $b2)"
is "$(field "$BODY" repeated)" false "and neither says repeated"
login carol "$T/cjar"
post /api/enqueue "$T/cjar" "$(enq $sid)"
is "$CODE $(field "$BODY" repeated)" "200 false" "another user's submit with the same id is its own"
is "$(jobs)" 12 "and enqueues"
post /api/enqueue "$T/jar" "$(enq)" "$ACSRF"
is "$CODE $(field "$BODY" repeated)" "200 false" "a request without submit_id (the API's scripts) still enqueues"
post /api/enqueue "$T/jar" "$(enq)" "$ACSRF"
is "$CODE $(jobs)" "200 18" "every time: one request, one set of jobs"
for bad in '"a b"' '""' 42 "\"$(printf 'x%.0s' $(seq 65))\""; do
	post /api/enqueue "$T/jar" "{\"type\": \"echo\", \"payload\": \"{}\", \"submit_id\": $bad}" "$ACSRF"
	is "$CODE" 400 "submit_id $bad: 400"
	like "$(field "$BODY" error)" "^submit_id: " "with one line that names submit_id"
done
is "$(jobs)" 18 "bad submit ids enqueue nothing"
# Old records go as new submits come.
sql "INSERT INTO jobq_submits (username, submit_id, first_id, job_count, at) VALUES
	('alice', 'old-one', 1, 1, UTC_TIMESTAMP(6) - INTERVAL 2 DAY)"
post /api/enqueue "$T/jar" "$(enq fresh-1)" "$ACSRF"
is "$(count jobq_submits "submit_id = 'old-one'")" 0 "a day-old submit record is pruned by the next submit"
is "$(count jobq_submits "submit_id = 'fresh-1'")" 1 "and the new one is kept"
# Retrying a dead job twice brings it back once (the second finds it gone).
sql "INSERT INTO failed_jobs (id, queue, type, payload, exception) VALUES (9001, 'default', 'echo', '{}', 'x')"
before=$(jobs)
post /api/failed/retry "$T/jar" '{"ids": [9001]}' "$ACSRF"
is "$CODE $(field "$BODY" retried)" "200 1" "retry of a dead job: back in the queue"
post /api/failed/retry "$T/jar" '{"ids": [9001]}' "$ACSRF"
is "$CODE $(field "$BODY" retried)" "200 0" "a second retry of it does nothing"
is "$(jobs)" "$((before + 1))" "one retry, one job"
# The default limit leaves a quick run of calls alone.
codes=""
for i in $(seq 1 60); do hit GET /api/enqueue "$T/jar"; codes+=$CODE; done
is "$(printf '%s' "$codes" | grep -o 429 | wc -l)" 0 "60 quick calls under the default api_rate: no 429"
serve_stop

# ---- (c) the rate limit per session ----
# A slow refill (one call per 10 s), so that what a loaded machine's
# slow requests let refill stays small and the bucket stays empty while
# the checks below run.
{ base_conf; printf '[serve]\napi_rate = 1/10s\napi_burst = 8\n'; } | write_conf
serve_start
login alice "$T/jar1"
login bob "$T/jar2"
login alice "$T/jar3"
n=0
t0=$(date +%s)
while [ $n -lt 40 ]; do
	hit GET /api/enqueue "$T/jar1"
	[ "$CODE" = 200 ] || break
	n=$((n + 1))
done
at429=$(date +%s%N)
took=$(($(date +%s) - t0))
is "$CODE" 429 "a burst over api_burst gets 429"
ok "$([ "$n" -ge 8 ] && [ "$n" -le $((8 + took / 10 + 1)) ]; echo $?)" \
	"after the burst of 8 and what refilled in ${took}s (got $n through)"
ra=$(header retry-after)
ok "$([ "$ra" -ge 1 ] && [ "$ra" -le 10 ]; echo $?)" "with Retry-After of at most the refill time (got '$ra')"
like "$(header content-type)" "^application/json" "and a JSON body"
like "$(field "$BODY" error)" "too many requests" "that says what is wrong"
is "$(field "$BODY" retry_after)" "$ra" "and when to come back"
hit GET /api/jobs "$T/jar1"
# Retry-After is rounded up: the bucket is surely still empty for ra-1 s.
if [ $((($(date +%s%N) - at429) / 1000000)) -lt $(((ra - 1) * 1000)) ]; then
	is "$CODE" 429 "every API call of that session is refused meanwhile"
else
	ok 0 "# SKIP the refill was too close to check the session is still refused"
	# That call may have taken the token that refilled: the next one
	# comes a whole refill period (10 s) after it.
	ra=10
fi
hit GET /api/enqueue "$T/jar2"
is "$CODE" 200 "another user's session is not affected"
hit GET /api/enqueue "$T/jar3"
is "$CODE" 200 "nor another session of the same user"
hit GET /enqueue "$T/jar1"
is "$CODE" 200 "the page itself (not /api/) still loads"
sleep "$ra"
hit GET /api/enqueue "$T/jar1"
is "$CODE" 200 "after Retry-After the session gets through again"
serve_stop

{ base_conf; printf '[serve]\napi_rate = off\n'; } | write_conf
serve_start
login alice "$T/jar4"
codes=""
for i in $(seq 1 20); do hit GET /api/enqueue "$T/jar4"; codes+=$CODE; done
is "$(printf '%s' "$codes" | grep -o 429 | wc -l)" 0 "api_rate = off: no limit"
serve_stop

# ---- (d) bad values are refused where they are ----
bad() {
	local want=$1 name=$2
	{ base_conf; printf '[serve]\n'; cat; } | write_conf
	jq_ check >/dev/null 2>"$T/err"
	is "$?" 78 "$name: exit 78"
	like "$(cat "$T/err")" "$want" "$name: says what and where"
}
bad 'jobq.ini:[0-9]+: api_rate: expected COUNT/s' "api_rate without a window" <<<'api_rate = 20'
bad 'jobq.ini:[0-9]+: api_rate: bad count' "api_rate of 0 per second" <<<'api_rate = 0/s'
bad 'jobq.ini:[0-9]+: api_rate: ' "api_rate with a bad window" <<<'api_rate = 20/fortnight'
bad 'jobq.ini:[0-9]+: api_rate: window .* out of range' "api_rate with a window over 7d" <<<'api_rate = 20/30d'
bad "jobq.ini:[0-9]+: api_burst: expected a whole number from 1 to 1000000, not '0'" "api_burst of 0" <<<'api_burst = 0'
bad "jobq.ini:[0-9]+: api_burst: expected a whole number from 1 to 1000000, not 'lots'" "api_burst not a number" <<<'api_burst = lots'
bad "jobq.ini:[0-9]+: api_burst: api_rate is off" "api_burst with api_rate = 0" <<<$'api_rate = 0\napi_burst = 9'
for good in 'api_rate = 0' 'api_rate = 100/10s' 'api_rate = 600/m'; do
	{ base_conf; printf '[serve]\n%s\n%s' "$good" "$([ "$good" = 'api_rate = 0' ] || echo 'api_burst = 1000')"; } | write_conf
	jq_ check >/dev/null 2>"$T/err"
	is "$?" 0 "'$good' passes jobq check"
done
finish
