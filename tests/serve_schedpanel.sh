#!/bin/bash
# Adding and removing database schedules from the dashboard: POST
# /api/schedules/add checks every field as `jobq schedule add` does (the
# same schedule_set and schedules_add), refuses a bad one with a sentence
# naming it and adds nothing; a taken name (database or INI) is a 409;
# what the page adds is what the CLI lists and it fires on a tick.  POST
# /api/schedules/remove deletes a database schedule and its history (404
# for an unknown one, 422 for an INI one).  Admins only; both audited
# under action names the audit filter knows.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
. "$top_srcdir/tests/operator/common.sh"
. "$top_srcdir/tests/serve_lib.sh"
setup serve_schedpanel

write_conf <<EOC
[worker]
timezone = Asia/Tokyo

[queue default]
[queue low]

[handler echo]
exec = $HANDLERS/echo.sh

[schedule nightly]
cron = 0 3 * * *
type = echo

[user admin]
password_hash = $PWHASH
role = admin

[user viewer]
password_hash = $PWHASH
role = viewer
EOC
serve_start
login viewer "$T/vjar"
VCSRF=$CSRF
login admin "$T/jar"

# Everything an add or a remove may change, as one string.
snapshot() {
	sql "SELECT CONCAT_WS('|', name, cron, type, payload, queue, timezone, overlap, catch_up_ms, description) FROM jobq_schedules ORDER BY name;
	     SELECT COUNT(*) FROM jobq_audit WHERE action LIKE 'schedule-%'"
}
err() { printf '%s' "$BODY" | jget 'd["error"]'; }

# ---- add: a valid schedule ----
post /api/schedules/add "$T/jar" '{"name": "panel1", "cron": "0 3 * * *", "type": "echo", "payload": "{\"x\": 1}",
	"timezone": "Europe/Paris", "overlap": "allow", "catch_up": "2h", "description": "made in the panel"}'
is "$CODE" 200 "add a schedule as admin: 200"
is "$(printf '%s' "$BODY" | jget '[d["name"], d["queue"], d["timezone"]]')" '["panel1", "default", "Europe/Paris"]' \
	"... answering with what was stored (the type's queue)"
is "$(sql "SELECT CONCAT_WS('|', cron, type, payload, queue, timezone, overlap, catch_up_ms, description) FROM jobq_schedules WHERE name = 'panel1'")" \
	'0 3 * * *|echo|{"x": 1}|default|Europe/Paris|allow|7200000|made in the panel' "... stored with every field"
is "$(jq_ schedule --list --json | jget '[(s["source"], s["cron"], s["timezone"], s["overlap"], s["catch_up_s"], s["description"]) for s in d if s["name"] == "panel1"]')" \
	'[["db", "0 3 * * *", "Europe/Paris", "allow", 7200, "made in the panel"]]' "jobq schedule --list --json shows it"
hit GET /api/schedules "$T/vjar"
is "$(printf '%s' "$BODY" | jget '([s["description"] for s in d["schedules"] if s["name"] == "panel1"], d["default_timezone"])')" \
	'[["made in the panel"], "Asia/Tokyo"]' "the list has its description, and the zone a schedule gets by default"
is "$(sql "SELECT CONCAT_WS(' ', username, action, detail) FROM jobq_audit WHERE action = 'schedule-add'")" \
	"admin schedule-add panel1: cron '0 3 * * *', type echo, queue default, timezone Europe/Paris" "audited: who, which, what"

# It fires: a tick at 03:00 Paris time enqueues its job.
JOBQ_SCHEDULER_NOW=2027-01-05T02:00:05Z jq_ schedule >/dev/null
is "$(sql "SELECT CONCAT_WS('|', type, queue, payload) FROM jobs")" 'echo|default|{"x": 1}' "a tick fires the added schedule"
is "$(sql "SELECT CONCAT_WS('|', LEFT(fire_at, 19), status) FROM jobq_schedule_runs WHERE name = 'panel1'")" "2027-01-05 02:00:00|enqueued" \
	"... recorded as its fire"

# The payload as a JSON object; numbers for priority and catch-up (seconds);
# the defaults: the [worker] zone, skip, catch-up 1h, an empty payload.
post /api/schedules/add "$T/jar" '{"name": "panel2", "cron": "*/5 * * * *", "type": "echo", "queue": "low", "payload": {"y": [1, 2]}, "priority": 5, "catch_up": 600}'
is "$CODE" 200 "add with a payload object and numbers: 200"
is "$(sql "SELECT CONCAT_WS('|', payload, queue, priority, catch_up_ms, timezone, overlap) FROM jobq_schedules WHERE name = 'panel2'")" \
	'{"y":[1,2]}|low|5|600000|Asia/Tokyo|skip' "... stored as given; the zone is the [worker] one"
post /api/schedules/add "$T/jar" '{"name": "panel3", "cron": "@daily", "type": "echo"}'
is "$(sql "SELECT CONCAT_WS('|', payload, queue, catch_up_ms, overlap, description) FROM jobq_schedules WHERE name = 'panel3'")" \
	'{}|default|3600000|skip|' "only name, cron and type: the defaults"

# A disabled schedule has no next fire.
post /api/schedules/disable "$T/jar" '{"name": "panel2"}'
hit GET /api/schedules "$T/vjar"
is "$(printf '%s' "$BODY" | jget '[(s["enabled"], s["next_fire"]) for s in d["schedules"] if s["name"] in ("panel2", "panel3")]')" \
	"[[false, null], [true, \"$(hit GET /api/schedules "$T/vjar"; printf '%s' "$BODY" | jget '[s["next_fire"] for s in d["schedules"] if s["name"] == "panel3"][0]')\"]]" \
	"a disabled schedule has no next fire; an enabled one has"

# ---- add: each bad field refused, naming it; nothing added ----
before=$(snapshot)
bad() {
	local code=$1 want=$2 body=$3
	post /api/schedules/add "$T/jar" "$body"
	is "$CODE" "$code" "add $body: $code"
	like "$(err)" "$want" "... naming the problem"
	is "$(snapshot)" "$before" "... nothing added, nothing audited"
}
bad 422 "^cron: minute: 61 is out of range 0-59 \\(column 1\\)" '{"name": "b", "cron": "61 * * * *", "type": "echo"}'
bad 422 "^type: unknown job type 'rm_rf'" '{"name": "b", "cron": "* * * * *", "type": "rm_rf"}'
bad 422 "^payload: not valid JSON" '{"name": "b", "cron": "* * * * *", "type": "echo", "payload": "{\"a\":"}'
bad 422 "^payload: not a JSON object" '{"name": "b", "cron": "* * * * *", "type": "echo", "payload": "[1]"}'
bad 422 "^queue: unknown queue 'nope'" '{"name": "b", "cron": "* * * * *", "type": "echo", "queue": "nope"}'
bad 422 "^timezone: unknown time zone 'Mars/Olympus'" '{"name": "b", "cron": "* * * * *", "type": "echo", "timezone": "Mars/Olympus"}'
bad 422 "^overlap: expected skip or allow, not 'sometimes'" '{"name": "b", "cron": "* * * * *", "type": "echo", "overlap": "sometimes"}'
bad 422 "^catch_up: " '{"name": "b", "cron": "* * * * *", "type": "echo", "catch_up": "soon"}'
bad 422 "^priority: expected a whole number" '{"name": "b", "cron": "* * * * *", "type": "echo", "priority": 99999}'
# past what a long long holds: refused as no number it can be, without
# the cast to one (undefined; UBSan's float-cast-overflow says so)
bad 400 "^priority: expected a string" '{"name": "b", "cron": "* * * * *", "type": "echo", "priority": 1e308}'
bad 400 "^catch_up: expected a string" '{"name": "b", "cron": "* * * * *", "type": "echo", "catch_up": -18446744073709551616}'
is "$(grep -c 'runtime error' "$T/serve.log")" 0 "no undefined behaviour reported"
bad 422 "^description: control character at byte 1" '{"name": "b", "cron": "* * * * *", "type": "echo", "description": "a\u0001b"}'
bad 422 "has no cron" '{"name": "b", "type": "echo"}'
bad 422 "has no type" '{"name": "b", "cron": "* * * * *"}'
bad 422 "^name: bad name 'a b'" '{"name": "a b", "cron": "* * * * *", "type": "echo"}'
bad 400 "name" '{"cron": "* * * * *", "type": "echo"}'
bad 400 "^colour: not a schedule field" '{"name": "b", "cron": "* * * * *", "type": "echo", "colour": "red"}'
bad 400 "^enabled: not a schedule field" '{"name": "b", "cron": "* * * * *", "type": "echo", "enabled": "no"}'
bad 400 "^type: expected a string" '{"name": "b", "cron": "* * * * *", "type": 5}'
bad 400 "^expected a JSON object as the body$" 'not json'
bad 409 "schedule 'panel1' already exists in the database" '{"name": "panel1", "cron": "* * * * *", "type": "echo"}'
bad 409 "'nightly' is defined in .*jobq.ini:[0-9]+; a schedule lives in one place only" '{"name": "nightly", "cron": "* * * * *", "type": "echo"}'

# ---- who may ----
post /api/schedules/add "$T/vjar" '{"name": "v", "cron": "* * * * *", "type": "echo"}' "$VCSRF"
is "$CODE" 403 "add as a viewer: 403"
hit POST /api/schedules/add "$T/jar" '{"name": "v", "cron": "* * * * *", "type": "echo"}'
is "$CODE" 403 "add without the CSRF token: 403"
post /api/schedules/remove "$T/vjar" '{"name": "panel1"}' "$VCSRF"
is "$CODE" 403 "remove as a viewer: 403"
is "$(snapshot)" "$before" "... nothing changed"

# ---- remove ----
post /api/schedules/remove "$T/jar" '{"name": "nosuch"}'
is "$CODE" 404 "remove an unknown schedule: 404"
post /api/schedules/remove "$T/jar" '{"name": "nightly"}'
is "$CODE" 422 "remove an INI schedule: 422"
like "$(err)" "'nightly' is defined in .*jobq.ini:[0-9]+; remove it there" "... saying where it is defined"
post /api/schedules/remove "$T/jar" '{}'
is "$CODE" 400 "remove without a name: 400"
is "$(snapshot)" "$before" "... nothing removed, nothing audited"
job=$(sql "SELECT id FROM jobs")
post /api/schedules/remove "$T/jar" '{"name": "panel1"}'
is "$CODE" 200 "remove a database schedule: 200"
is "$(jq_ schedule --list --json | jget 'sorted(s["name"] for s in d)')" '["nightly", "panel2", "panel3"]' "it is gone from jobq schedule --list"
is "$(count jobq_schedule_runs "name = 'panel1'"):$(count jobs "id = $job")" "0:1" "its fire history went with it; its job stays"
is "$(sql "SELECT CONCAT_WS(' ', username, action, detail) FROM jobq_audit WHERE action = 'schedule-remove'")" \
	"admin schedule-remove panel1: cron '0 3 * * *', type echo, queue default, timezone Europe/Paris, payload {\"x\": 1}" \
	"audited with what it was"
post /api/schedules/remove "$T/jar" '{"name": "panel1"}'
is "$CODE" 404 "removed twice: 404"
ERR=$(jq_ schedule remove nightly 2>&1)
is "$?:$ERR" "65:jobq: schedule remove: 'nightly' is defined in $CONF:$(grep -n '^\[schedule nightly\]' "$CONF" | cut -d: -f1); remove it there (or disable it)" \
	"the CLI refuses an INI schedule with the same sentence"

# ---- the audit page knows the new actions ----
for a in schedule-add schedule-remove; do
	hit GET "/api/audit?action=$a" "$T/jar"
	is "$CODE:$(printf '%s' "$BODY" | jget 'sorted(set(r["action"] for r in d["audit"]))')" "200:[\"$a\"]" "the audit filter accepts $a"
done
kill -0 "$SERVE_PID"
ok $? "the server is still up"
serve_stop
finish
