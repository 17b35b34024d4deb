#!/bin/bash
# The CLI as a newcomer meets it (issue item 18): error summaries that
# name the error (Python, PHP; how a run ended when stderr is empty),
# workers that are gone running nothing,
# `show` of a finished job, disabled schedules with no next fire, one
# meaning of -q, and one format for times.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
. "$top_srcdir/tests/operator/common.sh"
. "$top_srcdir/tests/serve_lib.sh"
setup cli_rough

PY=$(python3 -c 'import sys; print(sys.executable)')
cat >"$T/boom.py" <<'EOP'
import sys
print("charging the card", file=sys.stderr)

def charge(amount):
    raise ValueError("bad amount %d" % amount)

charge(42)
EOP
cat >"$T/boom.php" <<'EOP'
<?php
$total = $missing + 1;
throw new RuntimeException("no such invoice");
EOP
write_conf <<EOC
[worker]
poll_interval = 20ms

[queue default]

[handler echo]
exec = $HANDLERS/echo.sh

[handler pyboom]
exec = $PY $T/boom.py
max_attempts = 1

[handler phpboom]
exec = php $T/boom.php
max_attempts = 1

[handler shboom]
exec = /bin/sh -c 'echo >&2; echo "  " >&2; echo "sh: disk full" >&2; echo "more" >&2; exit 65'

[handler quiet]
exec = $top_srcdir/tests/handlers/exitwith.sh
max_attempts = 2
backoff = 100ms
queue = quietq

[handler slow]
exec = /bin/sleep 5
timeout = 300ms
max_attempts = 1
queue = quietq

[queue quietq]

[user alice]
password_hash = $PWHASH
role = admin
EOC

# ---- 1. the error's summary: the line that names it ----
py=$(jq_ enqueue pyboom '{}')
sh=$(jq_ enqueue shboom '{}')
if command -v php >/dev/null; then php=$(jq_ enqueue phpboom '{}'); else php=; fi
jq_ work --stop-when-empty --quiet 2>"$T/work.log"
is "$(where "$py")" failed "the Python handler's job is dead-lettered"
like "$(sql "SELECT exception FROM failed_jobs WHERE id = $py")" "^charging the card\\\\nTraceback \(most recent call last\):" \
	"its stderr starts with a log line and the traceback header"
run failed list
line=$(printf '%s\n' "$OUT" | awk -v id="$py" '$1 == id')
like "$line" " ValueError: bad amount 42$" "failed list: a Python error shows its last line, the exception"
line=$(printf '%s\n' "$OUT" | awk -v id="$sh" '$1 == id')
like "$line" " sh: disk full$" "failed list: otherwise the first non-blank line"
run failed list --json
is "$(printf '%s' "$OUT" | jget "[r['error'] for r in d if r['id'] == $py][0]")" "ValueError: bad amount 42" \
	"failed list --json: the same summary"
run show "$py"
like "$OUT" $'\n'" +error +ValueError: bad amount 42($|"$'\n'")" "show: the run names the Python error"
run show --json "$py"
is "$(printf '%s' "$OUT" | jget 'd["runs"][0]["error_summary"]')" "ValueError: bad amount 42" \
	"show --json: each run's error_summary"
if [ -n "$php" ]; then
	like "$(sql "SELECT exception FROM failed_jobs WHERE id = $php")" "^PHP Warning: " "PHP warns first"
	run failed list
	line=$(printf '%s\n' "$OUT" | awk -v id="$php" '$1 == id')
	like "$line" " PHP Fatal error:  Uncaught RuntimeException: no such invoice in " \
		"failed list: a PHP error shows its fatal line, not the warning before it"
else
	diag "SKIP PHP summary: php not installed"
fi
# A failed run whose handler wrote nothing on stderr is summed up by
# how it ended, as failed list sums up such a dead job by its reason.
q3=$(jq_ enqueue quiet '{"exit": 3}')
qkill=$(jq_ enqueue quiet '{"signal": "KILL"}')
qslow=$(jq_ enqueue slow '{}')
jq_ work --queue quietq --max 5 --quiet 2>>"$T/work.log"
is "$(where "$q3")/$(where "$qkill")/$(where "$qslow")" failed/failed/failed "the three quiet jobs are dead-lettered"
run show --json "$q3"
is "$(printf '%s' "$OUT" | jget '[(r["outcome"], r["error_summary"]) for r in d["runs"]]')" \
	'[["retry", "exit 3"], ["dead", "exit 3"]]' "show --json: a retry and a dead run with empty stderr, summed up by their exit"
run show --json "$qkill"
is "$(printf '%s' "$OUT" | jget '[r["error_summary"] for r in d["runs"]]')" '["killed by SIGKILL", "killed by SIGKILL"]' \
	"show --json: a run killed by a signal, by the signal"
run show --json "$qslow"
is "$(printf '%s' "$OUT" | jget '[r["error_summary"] for r in d["runs"]]')" '["timed out after 300ms"]' \
	"show --json: a run that timed out, by its timeout"
run show --runs 2 "$q3"
is "$(printf '%s\n' "$OUT" | grep -cE '^  [0-9]+ .* (retry|dead) +exit 3$')/$(printf '%s\n' "$OUT" | grep -c '^ *error ')" 2/0 \
	"show --runs: each failed run says exit 3 in its EXIT column, and no error line repeats it"
run failed list --json
like "$(printf '%s' "$OUT" | jget "[r['error'] for r in d if r['id'] == $q3][0]")" "exit 3" \
	"failed list --json sums up the same job by its reason"
serve_start
login alice "$T/a.jar"
hit GET "/api/jobs/$q3" "$T/a.jar"
is "$(printf '%s' "$BODY" | jget '[r["error_summary"] for r in d["runs"]]')" '["exit 3", "exit 3"]' \
	"dashboard: the job page's runs are summed up by their exit too"
hit GET /api/failed "$T/a.jar"
is "$(printf '%s' "$BODY" | jget "[f['summary'] for f in d['failed'] if f['id'] == $py][0]")" "ValueError: bad amount 42" \
	"dashboard: the dead letter's summary comes from the server"
hit GET "/api/jobs/$py" "$T/a.jar"
is "$(printf '%s' "$BODY" | jget 'd["runs"][0]["error_summary"]')" "ValueError: bad amount 42" \
	"dashboard: a run's error_summary too"
is "$(grep -c firstLine "$top_srcdir"/src/www/*.js | awk -F: '{ s += $2 } END { print s }')" 0 \
	"no page computes a summary of its own"
serve_stop

# ---- 2. a worker that is gone runs nothing and its uptime stops ----
# Killed an hour ago after running an hour, in the middle of job 17.
sql "INSERT INTO jobq_workers (id, host, pid, queues, concurrency, heartbeat_ms, started_at, last_seen_at,
	current_jobs, version) VALUES ('old:1:ab', 'old', 1, 'default', 2, 1000,
	UTC_TIMESTAMP(6) - INTERVAL 2 HOUR, UTC_TIMESTAMP(6) - INTERVAL 1 HOUR, '17:pyboom', 'x')"
run workers
line=$(printf '%s\n' "$OUT" | grep '^old:1:ab ')
like "$line" "^old:1:ab +gone +2 +1h +" "workers: a gone worker is 'gone', its uptime the hour it ran"
like "$line" " -$" "workers: and it runs nothing"
is "$(printf '%s\n' "$OUT" | grep -c '17:pyboom')" 0 "workers: the job it held is not listed as running"
run workers --json
is "$(printf '%s' "$OUT" | jget '[(w["state"], w["uptime_seconds"], w["current_jobs"]) for w in d["workers"] if w["id"] == "old:1:ab"]')" \
	'[["gone", 3600, ""]]' "workers --json: gone, uptime 3600 s, no current jobs"
serve_start
login alice "$T/a.jar"
hit GET /api/workers "$T/a.jar"
is "$(printf '%s' "$BODY" | jget '[(w["alive"], w["current_jobs"]) for w in d["workers"] if w["id"] == "old:1:ab"]')" \
	'[[false, ""]]' "dashboard: the gone worker runs nothing either"
serve_stop
sql "DELETE FROM jobq_workers"

# ---- 3. show of a done job: what the run history keeps ----
done_id=$(jq_ enqueue echo '{"to": "ann@example.com", "n": 7}')
created=$(sql "SELECT DATE_FORMAT(created_at, '%Y-%m-%d %H:%i:%s') FROM jobs WHERE id = $done_id")
jq_ work --stop-when-empty --quiet 2>>"$T/work.log"
is "$(where "$done_id")" gone "the echo job is done and has left the queue"
run show "$done_id"
is "$RC" 0 "show of a done job exits 0"
like "$OUT" "^job $done_id: done" "show: it is done"
like "$OUT" $'\n'"payload:"$'\n'" +\\{"$'\n'" +\"to\": \"ann@example.com\"," "show: its payload"
like "$OUT" $'\n'" +created +$created" "show: the time it was enqueued"
like "$OUT" $'\n'"runs:"$'\n' "show: and its runs"
run show --json "$done_id"
is "$(printf '%s' "$OUT" | jget '(d["state"], d["payload"], d["created_at"][:19])')" \
	"[\"done\", {\"to\": \"ann@example.com\", \"n\": 7}, \"${created/ /T}\"]" \
	"show --json: state, payload and created_at of the done job"

# ---- 4. a disabled schedule has no next fire ----
cat >>"$CONF" <<EOC

[schedule nightly]
cron = 0 3 * * *
type = echo

[schedule hourly]
cron = 0 * * * *
type = echo
EOC
jq_ schedule disable nightly >/dev/null
run schedule --list
like "$(printf '%s\n' "$OUT" | grep '^nightly ')" "^nightly +ini +off +0 3 \* \* \* +disabled " \
	"schedule --list: a disabled schedule's next fire is 'disabled'"
like "$(printf '%s\n' "$OUT" | grep '^hourly ')" "^hourly +ini +on +0 \* \* \* \* +[0-9]{4}-" \
	"schedule --list: an enabled one still has its next fire"
run schedule --list --json
is "$(printf '%s' "$OUT" | jget '[(s["name"], s["enabled"], s["next_fire"]) for s in d if s["name"] == "nightly"]')" \
	'[["nightly", false, null]]' "schedule --list --json: next_fire is null when disabled"
serve_start
login alice "$T/a.jar"
hit GET /api/schedules "$T/a.jar"
is "$(printf '%s' "$BODY" | jget '[(s["enabled"], s["next_fire"]) for s in d["schedules"] if s["name"] == "nightly"]')" \
	'[[false, null]]' "dashboard: no next fire for the disabled schedule"
serve_stop

# ---- 5. -q is --queue everywhere, schedule too ----
cat >>"$CONF" <<EOC
[queue mail]
EOC
run schedule add weekly --cron '0 4 * * 1' -t echo -q mail
is "$RC" 0 "schedule add: -t TYPE -q QUEUE are accepted"
run schedule --list --json
is "$(printf '%s' "$OUT" | jget '[(s["type"], s["queue"]) for s in d if s["name"] == "weekly"]')" '[["echo", "mail"]]' \
	"schedule add: -q set the queue, -t the type"
run schedule edit weekly -q default
is "$(printf '%s' "$(jq_ schedule --list --json)" | jget '[s["queue"] for s in d if s["name"] == "weekly"]')" '["default"]' \
	"schedule edit: -q sets the queue"
run schedule -q
is "$RC" 64 "schedule -q (once --quiet) is a usage error, not a silent tick"
like "$ERR" "-q is --queue.*--quiet" "and says what to use"
run schedule --quiet
is "$RC/$OUT" "0/" "schedule --quiet: the tick, quiet"
for cmd in enqueue status work failed schedule; do
	like "$(jq_ "$cmd" --help)" "-q(, --queue | QUEUE)" "$cmd --help: -q is the queue"
done
is "$(jq_ schedule --help | grep -c -- '-q, --quiet')" 0 "schedule --help: no -q for --quiet"

# ---- 6. one format for times: people's and --json's ----
run show "$py"
like "$OUT" $'\n'"  created +[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2} \\+00:00 \\([0-9.hms]+ ago\\)"$'\n' \
	"show: local time with offset, and how long ago"
like "$OUT" $'\n'"  failed +[0-9-]{10} [0-9:]{8} \\+00:00 \\([0-9.hms]+ ago\\)"$'\n' "show: failed, the same way"
like "$OUT" $'\n'"  1 +[0-9-]{10} [0-9:]{8} \\+00:00 +[^ ]+ +[0-9]+ +dead " "show: a run's start, the same way"
run failed list
like "$(printf '%s\n' "$OUT" | awk -v id="$py" '$1 == id')" "^$py +[0-9-]{10} [0-9:]{8} \\+00:00 +default " \
	"failed list: the same format"
run show --json "$py"
like "$(printf '%s' "$OUT" | jget '" ".join([d["created_at"], d["failed_at"], d["runs"][0]["started_at"]])')" \
	"^([0-9-]{10}T[0-9:]{8}\\.[0-9]{6}\\+00:00( |$)){3}" "show --json: ISO 8601 with its offset, in UTC"
# A named zone is converted by jobq itself (the server needs no time
# zone tables): Asia/Kolkata is UTC+05:30 all year.
sed -i 's/^poll_interval = 20ms$/poll_interval = 20ms\ntimezone = Asia\/Kolkata/' "$CONF"
utc=$(sql "SELECT DATE_FORMAT(created_at, '%Y-%m-%d %H:%i:%s') FROM failed_jobs WHERE id = $py")
ist=$(sql "SELECT DATE_FORMAT(created_at + INTERVAL 330 MINUTE, '%Y-%m-%d %H:%i:%s') FROM failed_jobs WHERE id = $py")
run show "$py"
like "$OUT" $'\n'"  created +$ist \\+05:30 \\(" "show: in [worker] timezone, with its offset"
run show --json "$py"
is "$(printf '%s' "$OUT" | jget 'd["created_at"][:19]')" "${utc/ /T}" "show --json: still UTC"
run failed list
like "$(printf '%s\n' "$OUT" | awk -v id="$py" '$1 == id')" "^$py +[0-9-]{10} [0-9:]{8} \\+05:30 " \
	"failed list: in [worker] timezone too"

finish
