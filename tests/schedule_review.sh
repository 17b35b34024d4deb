#!/bin/bash
# The scheduler's defects found in review, each kept as a regression
# test: payloads the worker would refuse, text the database or --list
# --json cannot hold, the deadlock paths of a fire's transaction, and
# the example handlers (backup order, prune without a terminal).
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
setup schedule_review

write_conf <<EOC
[worker]
poll_interval = 20ms
max_payload = 200

[queue default]

[handler echo]
exec = $HANDLERS/echo.sh
EOC

at() { JOBQ_SCHEDULER_NOW=$1 "$JOBQ" -c "$CONF" schedule "${@:2}"; }
snapshot() {
	sql "SELECT CONCAT_WS(',', name, fire_at, COALESCE(job_id, '-'), status) FROM jobq_schedule_runs ORDER BY name, fire_at;
		SELECT CONCAT_WS(',', name, cron, type, payload, COALESCE(queue, '-'), description) FROM jobq_schedules ORDER BY name;
		SELECT CONCAT_WS(',', id, queue, type, payload) FROM jobs ORDER BY id" | md5sum
}
jq_ schedule add base --cron '0 3 * * *' --type echo >/dev/null
before=$(snapshot)
bad_add() {
	local want=$1
	shift
	ERR=$(jq_ schedule "$@" 2>&1 >/dev/null)
	local rc=$?
	is "$rc" 65 "schedule ${*:1:2} (${want}) exits 65"
	like "$ERR" "$want" "... naming the problem"
	is "$(snapshot)" "$before" "... and changes nothing"
}

# ---- --help needs no configuration, wherever it stands ----
for args in "add x --cron @daily --help" "edit x --help" "remove -h" "add --help"; do
	OUT=$("$JOBQ" -c "$T/none.ini" schedule $args 2>&1)
	is "$?" 0 "schedule $args exits 0 without a configuration"
	like "$OUT" "^Usage: jobq schedule" "... and prints the usage"
done
like "$OUT" "Exit status: 0; 1 a schedule could not fire.*65 bad add/edit input" "the usage states the exit statuses"

# ---- payloads: what the worker would dead-letter at every fire ----
bad_add "payload: not valid JSON \\(at byte 9\\)" add p1 --cron '0 0 * * *' --type echo --payload '{"a": 1} trailing'
bad_add "payload: not a JSON object" add p2 --cron '0 0 * * *' --type echo --payload '[1, 2]'
bad_add "payload: not a JSON object" add p3 --cron '0 0 * * *' --type echo --payload '"text"'
bad_add "payload: 2[0-9]{2} bytes, more than max_payload \\(200\\)" add p4 --cron '0 0 * * *' --type echo \
	--payload "{\"a\": \"$(printf 'x%.0s' $(seq 250))\"}"
bad_add "payload: not valid JSON" edit base --payload '{} {}'

# ---- text the database column or --list --json could not hold ----
bad_add "description: not valid UTF-8 \\(at byte 3\\)" add d1 --cron '0 0 * * *' --type echo --description $'bad\xff'
bad_add "description: control character at byte 3" add d2 --cron '0 0 * * *' --type echo --description $'one\ntwo'
long=$(printf '0,%.0s' $(seq 130))0
bad_add "cron: longer than 255 bytes" add c1 --cron "$long * * * *" --type echo
bad_add "bad name" add "$(printf 'n%.0s' $(seq 65))" --cron '0 0 * * *' --type echo
bad_add "bad name" add 'Büro' --cron '0 0 * * *' --type echo

jq_ schedule add uni --cron '*/15 * * * *' --type echo --description 'Büro ☕ "quoted" \ back' >/dev/null
is "$?" 0 "a unicode description with quotes and a backslash is accepted"
JSON=$(jq_ schedule --list --json)
is "$(printf '%s' "$JSON" | /usr/bin/python3 -c '
import json, re, sys
d = {s["name"]: s for s in json.load(sys.stdin)}
iso = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d$")
print(d["uni"]["description"], all(iso.match(s["next_fire"]) for s in d.values()))')" \
	'Büro ☕ "quoted" \ back True' "--list --json is valid JSON with the description intact and ISO 8601 times"

# The same checks for the INI (exit 78 with FILE:LINE).
cp "$CONF" "$T/good.ini"
printf '[schedule bad-ini]\ncron = 0 0 * * *\ntype = echo\npayload = {"a": 1} trailing\n' >>"$CONF"
ERR=$(jq_ check 2>&1)
is "$?" 78 "an INI schedule whose payload has trailing text is a configuration error"
like "$ERR" "jobq.ini:[0-9]+: payload: not valid JSON" "... with FILE:LINE"
cp "$T/good.ini" "$CONF"
printf '[schedule bad-ini]\ncron = 0 0 * * *\ntype = echo\ndescription = bad\xff\n' >>"$CONF"
ERR=$(jq_ check 2>&1)
is "$?" 78 "an INI description that is not UTF-8 is a configuration error"
cp "$T/good.ini" "$CONF"

# ---- deadlocks inside a fire's transaction (1213), made by triggers ----
# A user variable, not a table, remembers that the trigger fired: a
# rollback cannot undo it, so each trigger fails its statement once per
# connection, the way a real deadlock would.
sql "DELETE FROM jobq_schedules; DELETE FROM jobq_schedule_runs; DELETE FROM jobs"
DEADLOCK="SIGNAL SQLSTATE '40001' SET MYSQL_ERRNO = 1213, MESSAGE_TEXT = 'test deadlock'"
trigger() { sql "
DELIMITER //
$1 //
DELIMITER ;"; }
printf '[schedule dl]\ncron = * * * * *\ntype = echo\noverlap = allow\n' >>"$CONF"
trigger "CREATE TRIGGER dl_jobs BEFORE INSERT ON jobs FOR EACH ROW
	IF @dl_jobs IS NULL THEN SET @dl_jobs = 1; $DEADLOCK; END IF"
at 2026-01-05T10:00:05Z >"$T/dl1.out" 2>&1
is "$?" 0 "a deadlock on the job's INSERT: the tick exits 0"
is "$(sql "SELECT COUNT(*) FROM jobs"):$(sql "SELECT COUNT(*) FROM jobq_schedule_runs")" "1:1" "... one job and one run row"
is "$(sql "SELECT COUNT(*) FROM jobq_schedule_runs r JOIN jobs j ON j.id = r.job_id")" 1 "... and the row names the job"
sql "DROP TRIGGER dl_jobs"
trigger "CREATE TRIGGER dl_runs BEFORE UPDATE ON jobq_schedule_runs FOR EACH ROW
	IF @dl_runs IS NULL THEN SET @dl_runs = 1; $DEADLOCK; END IF"
at 2026-01-05T10:01:05Z >"$T/dl2.out" 2>&1
is "$?" 0 "a deadlock on the run row's UPDATE (after the job's INSERT): the tick exits 0"
is "$(sql "SELECT COUNT(*) FROM jobs"):$(sql "SELECT COUNT(*) FROM jobq_schedule_runs")" "2:2" "... no job without its row"
is "$(sql "SELECT COUNT(*) FROM jobq_schedule_runs r JOIN jobs j ON j.id = r.job_id")" 2 "... each row names its job"
sql "DROP TRIGGER dl_runs"
trigger "CREATE TRIGGER dl_always BEFORE INSERT ON jobs FOR EACH ROW $DEADLOCK"
at 2026-01-05T10:02:05Z >"$T/dl3.out" 2>&1
is "$?" 69 "a deadlock on every attempt: the tick gives up with 69"
is "$(sql "SELECT COUNT(*) FROM jobs"):$(sql "SELECT COUNT(*) FROM jobq_schedule_runs")" "2:2" "... leaving neither a row nor a job"
sql "DROP TRIGGER dl_always"
at 2026-01-05T10:02:30Z >/dev/null 2>&1
is "$(sql "SELECT COUNT(*) FROM jobq_schedule_runs r JOIN jobs j ON j.id = r.job_id")" 3 "... and the next tick enqueues that fire"
cp "$T/good.ini" "$CONF"

# ---- the DST policy through the scheduler itself (Europe/Berlin) ----
# Ticks every 15 minutes through both 2025 change nights; the run rows
# (UTC) must show: the skipped 02:30 once at 03:00+02:00 (01:00Z), the
# repeated 02:30 once (the first, 00:30Z), hourly every 60 real minutes,
# and */15 of hour 2 not at all in spring and in both passes in autumn.
cp "$T/good.ini" "$CONF"
for s in "fixed|30 2 * * *" "hourly|0 * * * *" "quarter|*/15 2 * * *"; do
	printf '[schedule %s]\ncron = %s\ntype = echo\ntimezone = Europe/Berlin\noverlap = allow\n' "${s%%|*}" "${s#*|}" >>"$CONF"
done
fires() { sql "SELECT COALESCE(GROUP_CONCAT(DATE_FORMAT(fire_at, '%H:%i') ORDER BY fire_at SEPARATOR ' '), '-')
	FROM jobq_schedule_runs WHERE name = '$1' AND status = 'enqueued' AND fire_at BETWEEN '$2' AND '$2' + INTERVAL 4 HOUR"; }
for night in 2025-03-29 2025-10-25; do
	for m in $(seq 0 15 195); do
		at "$(date -u -d "$night 23:00:30 UTC + $m minutes" +%Y-%m-%dT%H:%M:%SZ)" --quiet >/dev/null
	done
done
is "$(fires fixed '2025-03-29 23:00')" "01:00" "spring: the skipped 02:30 runs once, at 03:00+02:00"
is "$(fires hourly '2025-03-29 23:00')" "23:00 00:00 01:00 02:00" "spring: hourly stays 60 real minutes apart"
is "$(fires quarter '2025-03-29 23:00')" "-" "spring: */15 2 * * * has no 02:xx run"
is "$(fires fixed '2025-10-25 23:00')" "00:30" "autumn: the repeated 02:30 runs once, the first time"
is "$(fires hourly '2025-10-25 23:00')" "23:00 00:00 01:00 02:00" "autumn: hourly stays 60 real minutes apart"
is "$(fires quarter '2025-10-25 23:00')" "00:00 00:15 00:30 00:45 01:00 01:15 01:30 01:45" \
	"autumn: */15 2 * * * follows the wall clock through both passes"
cp "$T/good.ini" "$CONF"

# ---- a schedule switched back on starts from then ----
# The fires due while it was off are not caught up, however it spent
# that time: ticked while its type was gone from the INI (the ticks
# skip such a schedule), or with nothing ticking at all.  catch_up is
# for downtime: `enable` of a schedule already on changes nothing.
cp "$T/good.ini" "$CONF"
sql "DELETE FROM jobq_schedules; DELETE FROM jobq_schedule_state; DELETE FROM jobq_schedule_runs; DELETE FROM jobs"
printf '[handler gone]\nexec = %s/echo.sh\n' "$HANDLERS" >>"$CONF"
at 2026-02-02T19:30:00Z add reen --cron '0 * * * *' --type gone --overlap allow >/dev/null
jq_ schedule disable reen >/dev/null
cp "$T/good.ini" "$CONF" # [handler gone] leaves the file while the schedule is off
for t in 20:00:10 21:00:10 21:30:10; do at "2026-02-02T${t}Z" >/dev/null; done
is "$(sql "SELECT checked_until FROM jobq_schedule_state WHERE name = 'reen'")" "2026-02-02 21:30:10.000000" \
	"the ticks look at a disabled schedule that cannot fire as at any disabled one"
printf '[handler gone]\nexec = %s/echo.sh\n' "$HANDLERS" >>"$CONF"
at 2026-02-02T21:30:15Z enable reen >/dev/null
OUT=$(at 2026-02-02T21:30:20Z 2>&1)
is "$(sql "SELECT COUNT(*) FROM jobq_schedule_runs WHERE name = 'reen'")" 0 \
	"re-enabled after its type came back: no fire from the time it was off"
is "$(echo "$OUT" | grep -c reen)" 0 "... and the tick says nothing of it"
at 2026-02-02T22:30:00Z disable reen >/dev/null
at 2026-02-02T23:30:15Z enable reen >/dev/null # nothing ticked while it was off
at 2026-02-02T23:30:20Z >/dev/null
is "$(sql "SELECT COUNT(*) FROM jobq_schedule_runs WHERE name = 'reen'")" 0 \
	"re-enabled with no tick while it was off: its 22:00 and 23:00 fires are not caught up"
at 2026-02-03T01:19:00Z enable reen >/dev/null # already on: downtime is still caught up
at 2026-02-03T01:20:00Z >/dev/null
is "$(sql "SELECT CONCAT(fire_at, ' ', status) FROM jobq_schedule_runs WHERE name = 'reen'")" \
	"2026-02-03 01:00:00.000000 enqueued" "enable of a schedule already on: the fire missed by downtime is caught up"
at 2026-02-03T02:00:05Z >/dev/null
is "$(sql "SELECT COUNT(*) FROM jobq_schedule_runs WHERE name = 'reen'")" 2 "... and the next fire is on time"
cp "$T/good.ini" "$CONF"

# ---- backup.py keeps the newest 5, also with same-second names ----
sql "DELETE FROM jobs"
mkdir -p "$T/src" "$T/bk"
echo data >"$T/src/f"
for n in "" -1 -2 -3 -4; do
	touch "$T/bk/dir-src-20000101T000000Z$n.tar.gz"
done
# The payload names two folders under the build tree, whose length is the
# checkout's: lift the 200-byte max_payload of the tests above.
sed 's/^max_payload = 200$/max_payload = 64k/' "$T/good.ini" >"$CONF"
printf '[handler backup]\nexec = %s/backup.py\n' "$HANDLERS" >>"$CONF"
is "$(jq_ enqueue backup "{\"kind\": \"directory\", \"dir\": \"$T/src\", \"dest\": \"$T/bk\", \"keep\": 5}" 2>&1 >/dev/null)" "" "backup: the job is enqueued"
jq_ work --stop-when-empty 2>"$T/backup.log"
is "$(ls "$T/bk" | sed 's/20[2-9][0-9]\{5\}T[0-9]\{6\}Z/STAMP/' | sort | tr '\n' ' ')" \
	"dir-src-20000101T000000Z-1.tar.gz dir-src-20000101T000000Z-2.tar.gz dir-src-20000101T000000Z-3.tar.gz dir-src-20000101T000000Z-4.tar.gz dir-src-STAMP.tar.gz " \
	"backup: of one second's backups the unnumbered (first) one goes first"

# ---- prune.sh runs jobq prune without a terminal, dead letters too ----
empty_tables
cp "$T/good.ini" "$CONF"
printf '[handler prune]\nexec = %s/prune.sh\nenv.CONFIG = %s\nenv.PROGRAM = %s\n' "$HANDLERS" "$CONF" "$JOBQ" >>"$CONF"
sql "INSERT INTO failed_jobs (id, queue, type, payload, exception, failed_at) VALUES
	(900, 'default', 'echo', '{}', 'old', UTC_TIMESTAMP() - INTERVAL 40 DAY),
	(901, 'default', 'echo', '{}', 'new', UTC_TIMESTAMP())"
jq_ enqueue prune '{"older_than": "30d"}' >/dev/null
jq_ work --stop-when-empty 2>"$T/prune.log"
is "$(sql "SELECT outcome FROM job_runs WHERE type = 'prune'")" done "prune.sh: the prune job is done"
is "$(sql "SELECT GROUP_CONCAT(id) FROM failed_jobs")" 901 "... and dead letters older than older_than are gone"
empty_tables
sql "INSERT INTO failed_jobs (id, queue, type, payload, exception, failed_at) VALUES
	(902, 'default', 'echo', '{}', 'old', UTC_TIMESTAMP() - INTERVAL 40 DAY)"
jq_ enqueue prune '{"older_than": "30d", "keep_failed": true}' >/dev/null
jq_ work --stop-when-empty 2>>"$T/prune.log"
is "$(sql "SELECT outcome FROM job_runs WHERE type = 'prune'"):$(sql "SELECT COUNT(*) FROM failed_jobs")" "done:1" \
	"... keep_failed: true keeps them"
finish
