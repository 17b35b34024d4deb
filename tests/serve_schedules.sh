#!/bin/bash
# The dashboard's Schedules page over HTTP: the list equals `jobq schedule
# --list --json`; enable, disable, run now and editing a database
# schedule's expression need the admin role and the CSRF token, change
# what the CLI would and are audited; a bad expression is a 422 naming
# field and column with nothing changed; the live preview; a schedule's
# history with successes and failures apart (a dead job's error summed
# up as failed list sums it up); and many preview and /metrics requests
# at once (the cron module switches TZ, and serialises every switch).
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
. "$top_srcdir/tests/operator/common.sh"
. "$top_srcdir/tests/serve_lib.sh"
setup serve_schedules

write_conf <<EOC
[worker]
poll_interval = 20ms

[queue default]

[handler echo]
exec = $HANDLERS/echo.sh

[handler boom]
exec = $top_srcdir/tests/handlers/exitwith.sh
max_attempts = 1

[schedule nightly]
cron = 0 3 * * *
timezone = Europe/Paris
type = echo
description = the nightly report

[schedule boom-hourly]
cron = 0 * * * *
type = boom
payload = {"exit": 70, "err": "it broke"}

[schedule boom-quiet]
cron = 30 * * * *
type = boom
payload = {"exit": 70}

[user admin]
password_hash = $PWHASH
role = admin

[user viewer]
password_hash = $PWHASH
role = viewer
EOC
jq_ schedule add dbsched --cron '*/10 * * * *' --type echo --timezone America/New_York >/dev/null
is "$?" 0 "a database schedule added with the CLI"
serve_start
login viewer "$T/vjar"
VCSRF=$CSRF
login admin "$T/jar"

# The list as JSON, sorted by name, without the fields that move with the
# clock between the two reads (none do within one minute but next_fire).
norm() { jget 'sorted(([s[k] for k in sorted(s) if k != "next_fire"], s["next_fire"][:16] if s["next_fire"] else None) for s in (d["schedules"] if isinstance(d, dict) else d))'; }

# ---- the list ----
hit GET /api/schedules "$T/vjar"
is "$CODE" 200 "the list: 200 for a viewer"
api=$(printf '%s' "$BODY" | norm)
cli=$(jq_ schedule --list --json | norm)
if [ "$api" != "$cli" ]; then # a fire's minute came between the two reads: read both again
	hit GET /api/schedules "$T/vjar"
	api=$(printf '%s' "$BODY" | norm)
	cli=$(jq_ schedule --list --json | norm)
fi
is "$api" "$cli" "the list equals jobq schedule --list --json"
is "$(printf '%s' "$BODY" | jget '[(s["name"], s["source"], s["when"]) for s in d["schedules"] if s["name"] == "nightly"]')" \
	'[["nightly", "ini", "at 03:00"]]' "an INI schedule: source and plain-English description"
like "$(printf '%s' "$BODY" | jget '[s["next_fire"] for s in d["schedules"] if s["name"] == "nightly"][0]')" \
	'T03:00:00\+0[12]:00$' "next fire in the schedule's own zone (Europe/Paris)"
hit GET /api/schedules "" 
is "$CODE" 401 "the list without a session: 401"

# ---- enable / disable: CSRF and roles ----
hit POST /api/schedules/disable "$T/jar" '{"name": "nightly"}'
is "$CODE" 403 "disable without the CSRF token: 403"
post /api/schedules/disable "$T/jar" '{"name": "nightly"}' wrong-token
is "$CODE" 403 "disable with a wrong CSRF token: 403"
post /api/schedules/disable "$T/vjar" '{"name": "nightly"}' "$VCSRF"
is "$CODE" 403 "disable as a viewer: 403"
is "$(count jobq_schedule_state "name = 'nightly' AND enabled = 0")" 0 "... nothing changed"
post /api/schedules/disable "$T/jar" '{"name": "nightly"}'
is "$CODE" 200 "disable an INI schedule as admin: 200"
is "$(jq_ schedule --list --json | jget '[s["enabled"] for s in d if s["name"] == "nightly"]')" '[false]' "jobq schedule --list shows it off"
is "$(sql "SELECT CONCAT_WS(' ', username, action, detail) FROM jobq_audit WHERE action LIKE 'schedule-%' ORDER BY id")" \
	"admin schedule-disable nightly" "audited: who, what, which schedule"
post /api/schedules/enable "$T/jar" '{"name": "nightly"}'
is "$CODE" 200 "enable: 200"
is "$(jq_ schedule --list --json | jget '[s["enabled"] for s in d if s["name"] == "nightly"]')" '[true]' "on again"
post /api/schedules/enable "$T/jar" '{"name": "nope"}'
is "$CODE" 404 "enable an unknown schedule: 404"
post /api/schedules/enable "$T/jar" '{}'
is "$CODE" 400 "enable without a name: 400"
hit GET /api/schedules/enable "$T/jar"
is "$CODE" 405 "GET on a POST route: 405"

# ---- edit a database schedule's expression ----
before=$(sql "SELECT CONCAT_WS(',', cron, type, COALESCE(timezone, '-')) FROM jobq_schedules WHERE name = 'dbsched'")
nbefore=$(count jobq_audit)
post /api/schedules/edit "$T/jar" '{"name": "dbsched", "cron": "61 * * * *"}'
is "$CODE" 422 "edit to a bad expression: 422"
is "$(printf '%s' "$BODY" | jget 'd["error"]')" "cron: minute: 61 is out of range 0-59 (column 1)" \
	"... with the cron module's message naming field and column"
is "$(sql "SELECT CONCAT_WS(',', cron, type, COALESCE(timezone, '-')) FROM jobq_schedules WHERE name = 'dbsched'"):$(count jobq_audit)" \
	"$before:$nbefore" "... nothing changed, nothing audited"
post /api/schedules/edit "$T/jar" '{"name": "dbsched", "cron": "*/5 * *"}'
is "$CODE" 422 "edit to an expression with 3 fields: 422"
post /api/schedules/edit "$T/vjar" '{"name": "dbsched", "cron": "15 4 * * 1-5"}' "$VCSRF"
is "$CODE" 403 "edit as a viewer: 403"
post /api/schedules/edit "$T/jar" '{"name": "nightly", "cron": "15 4 * * 1-5"}'
is "$CODE" 422 "edit an INI schedule: 422"
like "$(printf '%s' "$BODY" | jget 'd["error"]')" "jobq.ini:[0-9]+; edit it there" "... saying where it is defined"
is "$(jq_ schedule --list --json | jget '[s["cron"] for s in d if s["name"] == "nightly"]')" '["0 3 * * *"]' "... unchanged"
post /api/schedules/edit "$T/jar" '{"name": "dbsched", "cron": "15 4 * * 1-5"}'
is "$CODE" 200 "edit a database schedule as admin: 200"
is "$(sql "SELECT CONCAT_WS(',', cron, type, COALESCE(timezone, '-')) FROM jobq_schedules WHERE name = 'dbsched'")" \
	"15 4 * * 1-5,echo,America/New_York" "the expression changed; type and zone kept"
is "$(jq_ schedule --list --json | jget '[s["when"] for s in d if s["name"] == "dbsched"]')" \
	"$(hit GET /api/schedules "$T/jar"; printf '%s' "$BODY" | jget '[s["when"] for s in d["schedules"] if s["name"] == "dbsched"]')" \
	"the CLI and the page describe it alike"
is "$(sql "SELECT detail FROM jobq_audit WHERE action = 'schedule-edit'")" "dbsched: cron '*/10 * * * *' -> '15 4 * * 1-5'" \
	"audited with the old and the new expression"

# ---- run now: the same function as jobq schedule --run ----
post /api/schedules/run-now "$T/vjar" '{"name": "nightly"}' "$VCSRF"
is "$CODE" 403 "run now as a viewer: 403"
is "$(count jobs)" 0 "... nothing enqueued"
post /api/schedules/run-now "$T/jar" '{"name": "nightly"}'
is "$CODE" 200 "run now: 200"
job=$(printf '%s' "$BODY" | jget 'd["job"]')
is "$(sql "SELECT CONCAT_WS(',', type, queue) FROM jobs WHERE id = $job")" "echo,default" "run now enqueued the schedule's job"
is "$(sql "SELECT CONCAT_WS(',', status, manual) FROM jobq_schedule_runs WHERE name = 'nightly' AND job_id = $job")" \
	"enqueued,1" "... recorded as a manual fire, as --run records it"
is "$(sql "SELECT CONCAT_WS(' ', username, job_id, detail) FROM jobq_audit WHERE action = 'schedule-run-now'")" \
	"admin $job nightly" "audited with the job it enqueued"
post /api/schedules/run-now "$T/jar" '{"name": "boom-hourly"}'
boomjob=$(printf '%s' "$BODY" | jget 'd["job"]')
jq_ schedule --run boom-hourly >/dev/null
is "$(count jobq_schedule_runs "name = 'boom-hourly'")" 2 "run now from the page and from the CLI"
jq_ schedule --run boom-quiet >/dev/null

# ---- history: successes and failures apart ----
start_worker --stop-when-empty
wait_exit 60 "$WORKER_PID" >/dev/null
is "$(count jobs)" 0 "the worker ran the four jobs"
hit GET "/api/schedules/history?name=boom-hourly" "$T/vjar"
is "$CODE" 200 "history: 200"
is "$(printf '%s' "$BODY" | jget '(len(d["succeeded"]), len(d["failed"]), len(d["other"]), d["failed"][-1]["job"], d["failed"][0]["manual"])')" \
	"[0, 2, 0, $boomjob, true]" "a dead-lettered job's fires are failures"
like "$(printf '%s' "$BODY" | jget 'd["failed"][0]["error"]')" "it broke" "... with the dead letter's error"
hit GET "/api/schedules/history?name=boom-quiet" "$T/vjar"
is "$(printf '%s' "$BODY" | jget '[(f["outcome"], f.get("error")) for f in d["failed"]]')" \
	'[["failed", "exit 70 is a permanent failure"]]' \
	"a dead job that wrote no stderr: its fire's error is the reason, as failed list says it"
is "$(printf '%s' "$BODY" | jget 'd["failed"][0]["error"]')" \
	"$(jq_ failed list --json | jget "[r['error'] for r in d if r['id'] == $(printf '%s' "$BODY" | jget 'd["failed"][0]["job"]')][0]")" \
	"... the same summary failed list --json gives"
hit GET "/api/schedules/history?name=nightly" "$T/vjar"
is "$(printf '%s' "$BODY" | jget '([f["job"] for f in d["succeeded"]], len(d["failed"]))')" "[[$job], 0]" "a done job's fire is a success"
is "$(printf '%s' "$BODY" | jget 'd["succeeded"][0]["fire_at"][:10]')" "$(sql "SELECT DATE(UTC_TIMESTAMP())")" "... with its fire time (UTC)"
sql "INSERT INTO jobq_schedule_runs (name, fire_at, status) VALUES ('nightly', '2026-01-01 02:00:00', 'missed')"
hit GET "/api/schedules/history?name=nightly" "$T/vjar"
is "$(printf '%s' "$BODY" | jget '[(f["outcome"], f["job"]) for f in d["failed"]]')" '[["missed", null]]' "a missed fire is a failure"
hit GET "/api/schedules/history?name=nope" "$T/vjar"
is "$CODE" 404 "history of an unknown schedule: 404"

# ---- a gone name (an INI section renamed): listed, and removed as the CLI removes it ----
sql "INSERT INTO jobq_schedule_state (name, checked_until) VALUES ('renamed-away', '2026-01-01 03:00:00');
	INSERT INTO jobq_schedule_runs (name, fire_at, status) VALUES ('renamed-away', '2026-01-01 03:00:00', 'missed')"
hit GET /api/schedules "$T/vjar"
is "$(printf '%s' "$BODY" | jget '[(s["name"], s["source"], s["enabled"], s["cron"], s["next_fire"], s["last_outcome"]) for s in d["schedules"] if s["gone"]]')" \
	'[["renamed-away", null, false, null, null, "missed"]]' "the list has the gone name, marked gone"
is "$(printf '%s' "$BODY" | norm)" "$(jq_ schedule --list --json | norm)" "... as jobq schedule --list --json has it"
post /api/schedules/remove "$T/vjar" '{"name": "renamed-away"}' "$VCSRF"
is "$CODE" 403 "remove a gone name as a viewer: 403"
post /api/schedules/remove "$T/jar" '{"name": "renamed-away"}'
is "$CODE" 200 "remove it as admin: 200"
is "$(count jobq_schedule_state "name = 'renamed-away'"):$(count jobq_schedule_runs "name = 'renamed-away'")" "0:0" \
	"... its switch and fires are deleted"
is "$(sql "SELECT CONCAT_WS(' ', username, detail) FROM jobq_audit WHERE action = 'schedule-remove'")" "admin renamed-away" "... audited"
hit GET /api/schedules "$T/vjar"
is "$(printf '%s' "$BODY" | jget '[s["name"] for s in d["schedules"] if s["gone"]]')" '[]' "... and the list no longer has it"

# ---- the live preview ----
hit GET "/api/cron?expr=30%208%20*%20*%201-5&timezone=Europe/Paris" "$T/vjar"
is "$CODE" 200 "preview: 200"
is "$(printf '%s' "$BODY" | jget 'd["description"]')" "$("$JOBQ" cron '30 8 * * 1-5' --count 1 | head -1)" \
	"the description jobq cron prints"
is "$(printf '%s' "$BODY" | jget 'd["next"]')" \
	"$(printf '%s' "$("$JOBQ" cron '30 8 * * 1-5' --timezone Europe/Paris --count 5 | tail -n +2)" | python3 -c 'import json,sys; print(json.dumps(sys.stdin.read().split()))')" \
	"the next five fires jobq cron prints, in the zone"
hit GET "/api/cron?expr=*%20*%2032%20*%20*" "$T/vjar"
is "$CODE" 422 "preview of a bad expression: 422"
like "$(printf '%s' "$BODY" | jget 'd["error"]')" "day of month: 32 is out of range 1-31 \(column 5\)" "... naming field and column"
hit GET "/api/cron?expr=*%20*%20*%20*%20*&timezone=Mars/Olympus" "$T/vjar"
is "$CODE" 422 "preview in an unknown zone: 422"
hit GET "/api/cron" "$T/vjar"
is "$CODE" 400 "preview without expr: 400"

# Many previews in different zones at once, eight at a time on the
# server's threads, among requests for /metrics (whose next fire times
# the cron module computes too, in each schedule's zone): each answer
# must be in its own zone (the cron module switches TZ; unless every
# switch is serialised some come back in another zone).
args=()
for i in $(seq 1 400); do
	if [ $((i % 2)) = 0 ]; then z=Asia/Tokyo k=tokyo; else z=America/Los_Angeles k=la; fi
	args+=(-o "$T/par.$i.$k" "$URL/api/cron?expr=0%2012%20*%20*%20*&timezone=$z")
	args+=(-o /dev/null "$URL/metrics")
done
curl -s --parallel --parallel-max 8 -b "$T/vjar" "${args[@]}" 2>/dev/null
python3 - "$T" >"$T/par" <<'EOP'
import glob, json, re, sys
good = bad = 0
for f in glob.glob(sys.argv[1] + "/par.*.*"):
    want = r"\+09:00$" if f.endswith("tokyo") else r"-0[78]:00$"
    try:
        d = json.load(open(f))
        ok = len(d["next"]) == 5 and all(re.search(r"T12:00:00" + want, t) for t in d["next"])
    except Exception:
        ok = False
    good, bad = good + ok, bad + (not ok)
print(good, bad)
EOP
is "$(cat "$T/par")" "400 0" "400 previews in two zones, eight at a time: each in its own zone"
kill -0 "$SERVE_PID"
ok $? "the server is still up"
serve_stop
finish
