#!/bin/bash
# The enqueue form (POST /api/enqueue) against `jobq enqueue`: each
# option the form takes is accepted with the CLI's meaning and makes the
# same row (priority, max_attempts, at, delay as a duration, expires_at,
# expires_in, traceparent); a field it does not take (a typo, or "ref",
# which names a --batch line) and a field given twice are refused by
# name, 400, with nothing enqueued and nothing audited, rather than a
# job enqueued without it (unique keys, after and groups:
# serve_enqueue_flow.sh).  Jobs whose statement would be
# over the server's max_allowed_packet are refused naming count (the
# server would drop the connection).  A viewer and a wrong or
# missing CSRF token change nothing.
. "$top_srcdir/tests/lib.sh"
one_build normal "behaviour alone"
. "$top_srcdir/tests/operator/common.sh"
. "$top_srcdir/tests/serve_lib.sh"
setup serve_form_audit

write_conf <<EOC
[queue default]
[queue mail]

[handler echo]
exec = $HANDLERS/echo.sh

[user alice]
password_hash = $PWHASH
role = admin

[user bob]
password_hash = $PWHASH
role = viewer

[serve]
overview_cache = 0
EOC
serve_start
login alice "$T/jar"
ACSRF=$CSRF
field() { printf '%s' "$1" | jget "d[\"$2\"]"; }
COLS="queue, type, payload, priority, IFNULL(max_attempts, '-'), IFNULL(expires_at, '-'), IFNULL(traceparent, '-')"
row() { sql "SELECT $COLS FROM jobs WHERE id = $1"; }
TP=00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01

# ---- (a) each option: the dashboard's row is the CLI's ----
# same_row "CLI options" 'JSON fields' what
same_row() {
	local cli_id api_id
	# shellcheck disable=SC2086
	cli_id=$("$JOBQ" -c "$CONF" enqueue $1 echo '{"n": 1}')
	post /api/enqueue "$T/jar" "{\"type\": \"echo\", \"payload\": \"{\\\"n\\\": 1}\", $2}" "$ACSRF"
	api_id=$(field "$BODY" first_id)
	is "$CODE" 200 "$3: the dashboard accepts it"
	is "$(row "$api_id")" "$(row "$cli_id")" "$3: the dashboard's job $api_id is the CLI's job $cli_id"
}
same_row "-p -5" '"priority": -5' "priority"
same_row "--max-attempts 3" '"max_attempts": 3' "max_attempts"
same_row "-q mail --expires-at 2031-01-01T00:00:00Z" '"queue": "mail", "expires_at": "2031-01-01T00:00:00Z"' "expires_at"
same_row "--traceparent $TP" "\"traceparent\": \"$TP\"" "traceparent"
post /api/enqueue "$T/jar" '{"type": "echo", "payload": "{}", "at": "2030-01-02T03:04:05+02:00"}' "$ACSRF"
is "$CODE/$(sql "SELECT available_at FROM jobs WHERE id = $(field "$BODY" first_id)")" \
	"200/2030-01-02 01:04:05.000000" "at: an ISO 8601 time with an offset is due then, in UTC"
post /api/enqueue "$T/jar" '{"type": "echo", "payload": "{}", "delay": "5m", "expires_in": "10m"}' "$ACSRF"
is "$CODE/$(sql "SELECT CONCAT(ROUND(TIMESTAMPDIFF(SECOND, created_at, available_at) / 10),
	' ', ROUND(TIMESTAMPDIFF(SECOND, created_at, expires_at) / 10)) FROM jobs WHERE id = $(field "$BODY" first_id)")" \
	"200/30 60" "delay and expires_in take durations as the CLI does (5m, 10m)"
post /api/enqueue "$T/jar" '{"type": "echo", "payload": "{}", "delay": 60, "priority": 7, "count": 3}' "$ACSRF"
is "$CODE/$(count jobs "priority = 7 AND available_at > UTC_TIMESTAMP() + INTERVAL 50 SECOND")" "200/3" \
	"count 3: every job gets the options"

# ---- (b) refused by name, nothing written ----
njobs=$(count jobs)
naudit=$(count jobq_audit)
refused() { # refused 'JSON fields' 'message regex' what
	post /api/enqueue "$T/jar" "{\"type\": \"echo\", \"payload\": \"{}\", $1}" "$ACSRF"
	like "$CODE $(field "$BODY" error)" "^400 $2" "$3: 400, naming the field"
}
refused '"priority": 40000' '"priority" must be a whole number from -32768 to 32767' "priority out of range"
refused '"priority": "high"' '"priority" must be' "priority not a number"
refused '"max_attempts": 0' '"max_attempts" must be a whole number from 1' "max_attempts 0"
refused '"delay": "soon"' '.*soon' "a delay that is no duration"
refused '"delay": -1' '"delay" must be seconds or a duration' "a negative delay"
refused '"at": "next tuesday"' '.*next tuesday' "an at that is no time"
refused '"delay": 5, "at": "2030-01-01T00:00:00Z"' '"delay" and "at" exclude each other' "delay and at"
refused '"expires_in": 0' '"expires_in" must be above 0' "expires_in 0"
refused '"expires_in": "1h", "expires_at": "2031-01-01T00:00:00Z"' '"expires_in" and "expires_at" exclude each other' \
	"expires_in and expires_at"
refused '"traceparent": "00-zz"' '"traceparent": ' "a bad traceparent"
refused '"prority": 5' 'unknown field "prority"' "a misspelt field"
refused '"ref": "r1"' '"ref": the API enqueues one job shape' "ref (a --batch line's name)"
refused '"unique_key": "k", "count": 2' '"unique_key" and "count"' "a unique key with count 2"
refused '"after": [999999]' '"after": job 999999 is not known' "after an unknown job"
refused '"on_complete": "echo"' '"on_complete" and "on_success" go with "group"' "on_complete without group"
refused '"queue": 7' '"queue" is not a string' "a queue that is not a string"
refused '"priority": 1, "priority": 2' 'field "priority" is given twice' "a field given twice"
# A NUL in a string of the body: cJSON ends the string there, so the job
# would be enqueued with what came before it ("{}", or the type "echo").
post /api/enqueue "$T/jar" '{"type": "echo", "payload": "{}\u0000junk"}' "$ACSRF"
like "$CODE $(field "$BODY" error)" '^400 a string of the body holds \\u0000' "a payload with \\u0000 in it: 400"
post /api/enqueue "$T/jar" '{"type": "echo\u0000junk", "payload": "{}"}' "$ACSRF"
is "$CODE" 400 "a type with \\u0000 in it: 400, not the type before it"
# The payload rules are jobq enqueue's: the same message.
post /api/enqueue "$T/jar" "{\"type\": \"echo\", \"payload\": \"\\\"a$(printf '\xff')\\\"\"}" "$ACSRF"
cli=$("$JOBQ" -c "$CONF" enqueue echo "$(printf '"a\xff"')" 2>&1)
is "$CODE jobq: enqueue: $(field "$BODY" error)" "400 $cli" "a payload that is not UTF-8: refused with the CLI's message"
post /api/enqueue "$T/jar" '{"type": "echo", "type": "nosuch", "payload": "{}"}' "$ACSRF"
is "$CODE $(field "$BODY" error)" '400 field "type" is given twice' "type given twice: refused, not the first one read"
# Finding a field given twice compares each with those before it: 40,000
# fields (430 KB) took 3 s, a 4 MiB body minutes.  So many are refused
# first, with their number.
printf '{"type": "echo", "payload": "{}", %s}' "$(seq -f '"k%g": 0' 1 40000 | paste -sd,)" >"$T/many.json"
post /api/enqueue "$T/jar" "@$T/many.json" "$ACSRF" # curl reads the body from the file
is "$CODE $(field "$BODY" error)" '400 more than 64 fields: more than any enqueue has' "40,000 fields: refused by their number"
is "$(count jobs)/$(count jobq_audit)" "$njobs/$naudit" "none of the refusals enqueued or audited anything"

# ---- (c) what only the database can tell ----
post /api/enqueue "$T/jar" '{"type": "echo", "payload": "{}", "expires_at": "2020-01-01T00:00:00Z"}' "$ACSRF"
like "$CODE $(field "$BODY" error)" '^400 "expires_at": 2020-01-01 00:00:00.000000 UTC is in the past' \
	"an expires_at that has passed: 400, as jobq enqueue refuses it (the job would expire at once)"
post /api/enqueue "$T/jar" '{"type": "echo", "payload": "{}", "delay": "2h", "expires_in": "1h"}' "$ACSRF"
like "$CODE $(field "$BODY" error)" '^400 the job would expire \(in 1h\) before it is due \(in 2h\) and never run' \
	"an expiry before the job's due time: 400, as jobq enqueue refuses it (the job would never run)"
post /api/enqueue "$T/jar" '{"type": "echo", "payload": "{}", "at": "2098-01-01T00:00:00Z", "expires_at": "2097-01-01T00:00:00Z"}' "$ACSRF"
like "$CODE $(field "$BODY" error)" '^400 the job would expire \(2097-01-01 00:00:00.000000 UTC\) before it is due \(2098' \
	"an expires_at before its at: 400"
# A request within the 16 MiB rule whose statement is over the server's
# max_allowed_packet: the server would drop the connection (and the
# dashboard answer 503 "cannot be reached" to everyone).
packet=$(sql "SELECT @@max_allowed_packet")
# A payload of backslashes: each is two bytes in the JSON text and four
# once escaped in the SQL, so 1000 of them pass the 16 MiB rule (2*per
# bytes each) and make a statement of about twice the packet.
per=$((packet / 2000 - 400))
python3 -c "import json; print(json.dumps({'type': 'echo', 'count': 1000, 'submit_id': 'big-1',
	'payload': json.dumps(chr(92) * $per)}))" >"$T/big.json"
hit POST /api/enqueue "$T/jar" "" -H "X-CSRF-Token: $ACSRF" -H 'Content-Type: application/json' \
	--data-binary @"$T/big.json"
like "$CODE $(field "$BODY" error)" "^400 count: 1000 jobs of this payload make a statement of about [0-9]+ bytes, more than the database's max_allowed_packet \\($packet\\)" \
	"1000 jobs whose statement is over max_allowed_packet: 400 naming count"
post /api/enqueue "$T/jar" '{"type": "echo", "payload": "{}"}' "$ACSRF"
is "$CODE" 200 "and the dashboard goes on (no connection dropped)"
sql "INSERT INTO failed_jobs (id, queue, type, payload, attempts, exception) VALUES (9002, 'default', 'echo', '{\"v\": 1}', 3, 'x')"
post /api/failed/retry-edited "$T/jar" '{"id": 9002, "payload": "{\"v\": 2}\u0000junk"}' "$ACSRF"
like "$CODE $(field "$BODY" error)" '^422 payload: it holds \\u0000' "an edited payload with \\u0000 in it: 422, naming the payload"
is "$(sql "SELECT payload FROM failed_jobs WHERE id = 9002")" '{"v": 1}' "the job stays dead with its payload"
sql "DELETE FROM failed_jobs"
is "$(count jobs)/$(count jobq_audit)" "$((njobs + 1))/$((naudit + 1))" "the refusals wrote nothing"
njobs=$(count jobs)

# ---- (d) a viewer, a wrong or missing token: 403, nothing written ----
login bob "$T/bjar"
post /api/enqueue "$T/bjar" '{"type": "echo", "payload": "{}"}' "$CSRF"
is "$CODE" 403 "a viewer's enqueue: 403"
post /api/enqueue "$T/jar" '{"type": "echo", "payload": "{}"}' wrong
is "$CODE" 403 "a wrong CSRF token: 403"
hit POST /api/enqueue "$T/jar" '{"type": "echo", "payload": "{}"}'
is "$CODE" 403 "no CSRF token: 403"
is "$(count jobs)/$(count jobq_audit "action = 'enqueue'")" "$njobs/$((njobs - 4))" \
	"nothing enqueued; one audit row per dashboard job"

# ---- (e) every write of the dashboard: a viewer, then an admin with a
# wrong token and with none, are refused with 403 and change nothing ----
dj=$(jq_ enqueue --delay 1h echo '{}')
sql "INSERT INTO failed_jobs (id, queue, type, payload, attempts, exception) VALUES (9001, 'default', 'echo', '{}', 3, 'x')"
snap() {
	sql "SELECT CONCAT_WS('|', (SELECT GROUP_CONCAT(id, available_at, IFNULL(cancel_by, '') ORDER BY id) FROM jobs),
	     (SELECT GROUP_CONCAT(id, payload) FROM failed_jobs), (SELECT COUNT(*) FROM jobq_paused),
	     (SELECT COUNT(*) FROM jobq_audit WHERE action <> 'login'))"
}
before=$(snap)
writes=("/api/jobs/$dj/run-now {}" "/api/jobs/$dj/delete {}" "/api/jobs/$dj/cancel {}" "/api/jobs/$dj/release {}"
	'/api/failed/retry {"ids":[9001]}' '/api/failed/retry {"all":true}' '/api/failed/forget {"ids":[9001]}'
	'/api/failed/retry-edited {"id":9001,"payload":"{\"x\":1}"}' '/api/failed/clear {"count":1}'
	'/api/bulk {"action":"delete","count":1,"upto":999999,"after":0}' '/api/queues/pause {"queue":"default"}'
	'/api/enqueue {"type":"echo","payload":"{}"}')
codes=""
for w in "${writes[@]}"; do
	post "${w%% *}" "$T/bjar" "${w#* }" "$CSRF"
	codes+="$CODE "
	post "${w%% *}" "$T/jar" "${w#* }" "not-the-token"
	codes+="$CODE "
	hit POST "${w%% *}" "$T/jar" "${w#* }"
	codes+="$CODE "
done
is "$codes" "$(printf '403 %.0s' $(seq $((${#writes[@]} * 3))))" \
	"each of ${#writes[@]} write routes: 403 for a viewer, a wrong token and no token"
is "$(snap)" "$before" "and nothing changed: jobs, dead letter, paused queues, audit"

finish
