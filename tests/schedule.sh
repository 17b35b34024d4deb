#!/bin/bash
# The scheduler against a real MariaDB: exactly once per fire across
# concurrent ticks, missed fires after downtime, catch_up, overlap, an
# expired lease, --run, --dry-run, and the schedules kept in the database.
#
# JOBQ_SCHEDULER_NOW (a test hook read only by the scheduler) stands in
# for the database's clock when deciding what is due, so hours of
# schedule play out in seconds; exactly-once is the database's key either
# way.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
setup schedule

base_conf() {
	write_conf <<EOC
[worker]
poll_interval = 20ms

[queue default]
[queue low]

[handler echo]
exec = $HANDLERS/echo.sh
$1
EOC
}

at() { JOBQ_SCHEDULER_NOW=$1 "$JOBQ" -c "$CONF" schedule "${@:2}"; }
reset() { empty_tables; sql "DELETE FROM jobq_schedule_runs; DELETE FROM jobq_schedule_state; DELETE FROM jobq_schedules"; }
nruns() { sql "SELECT COUNT(*) FROM jobq_schedule_runs WHERE name = '$1'${2:+ AND status = '$2'}"; }
njobs() { sql "SELECT COUNT(*) FROM jobs"; }
# Everything the scheduler may write, as one string.
snapshot() {
	sql "SELECT CONCAT_WS(',', name, fire_at, COALESCE(job_id, '-'), status) FROM jobq_schedule_runs ORDER BY name, fire_at;
		SELECT CONCAT_WS(',', name, COALESCE(enabled, '-'), COALESCE(checked_until, '-')) FROM jobq_schedule_state ORDER BY name;
		SELECT CONCAT_WS(',', name, cron, type, payload, COALESCE(queue, '-'), priority, COALESCE(timezone, '-'), overlap, catch_up_ms, description) FROM jobq_schedules ORDER BY name;
		SELECT CONCAT_WS(',', id, queue, type, payload) FROM jobs ORDER BY id" | md5sum
}

# ---- three concurrent ticks, many fire times: each fire once ----
base_conf "
[schedule every5]
cron = */5 * * * *
type = echo
overlap = allow
payload = {\"n\": 5}"
reset
for i in $(seq 0 19); do
	m=$((i * 5))
	now=$(date -u -d "2026-01-05 10:00:00 UTC + $m minutes + 7 seconds" +%Y-%m-%dT%H:%M:%SZ)
	for k in 1 2 3; do at "$now" --quiet >"$T/tick.$i.$k" 2>&1 & done
	wait
done
is "$(nruns every5)" 20 "three concurrent ticks at 20 fire times: 20 run rows"
is "$(njobs)" 20 "... and 20 jobs, one per fire"
is "$(sql "SELECT COUNT(DISTINCT job_id) FROM jobq_schedule_runs WHERE job_id IN (SELECT id FROM jobs)")" 20 \
	"... each row names its own job"
is "$(sql "SELECT COUNT(*) FROM jobs WHERE payload = '{\"n\": 5}' AND type = 'echo' AND queue = 'default'")" 20 \
	"... with the schedule's type, queue and payload"
is "$(cat "$T"/tick.* | grep -c .)" 0 "--quiet prints nothing for on-time fires"
at 2026-01-05T10:00:30Z >/dev/null
is "$(njobs)" 20 "a tick again in an old minute enqueues nothing"

# ---- two workers with --schedule: the fire once, run once ----
reset
JOBQ_SCHEDULER_NOW=2026-01-05T10:00:07Z start_worker --schedule --stop-when-empty
w1=$WORKER_PID
JOBQ_SCHEDULER_NOW=2026-01-05T10:00:07Z start_worker --schedule --stop-when-empty
w2=$WORKER_PID
wait_exit 60 "$w1"; r1=$?
wait_exit 60 "$w2"; r2=$?
is "$r1:$r2" "0:0" "two workers with --schedule exit 0"
is "$(nruns every5)" 1 "two ticking workers: one run row"
is "$(sql "SELECT COUNT(*) FROM job_runs")" 1 "... and the fire's job ran once"
is "$(njobs)" 0 "... and is done"

# ---- a worker ticks at most once a minute (by the database's clock) ----
reset
while [ "$(sql "SELECT SECOND(UTC_TIMESTAMP())")" -gt 45 ]; do sleep 1; done
start_worker --schedule
wait_for_sql 30 "SELECT COUNT(*) FROM jobq_schedule_state WHERE name = 'every5'" 1
ok $? "a worker with --schedule ticks when it starts"
first=$(sql "SELECT checked_until FROM jobq_schedule_state WHERE name = 'every5'")
sleep 3
is "$(sql "SELECT checked_until FROM jobq_schedule_state WHERE name = 'every5'")" "$first" \
	"... and not again within the same minute"
kill -TERM "$WORKER_PID"
wait_exit 30 "$WORKER_PID" >/dev/null

# ---- downtime: the missed fire once, reported; catch_up ----
base_conf "
[schedule hourly]
cron = 0 * * * *
type = echo
[schedule tight]
cron = 0 * * * *
type = echo
catch_up = 10m
[schedule never-late]
cron = 0 * * * *
type = echo
catch_up = 0"
reset
at 2026-01-05T09:59:00Z >/dev/null
OUT=$(at 2026-01-05T13:20:00Z 2>&1)
rc=$?
is "$rc" 0 "a tick after 3h of downtime exits 0"
is "$(nruns hourly)" 1 "downtime: one run row for hourly, not one per missed fire"
is "$(sql "SELECT COUNT(*) FROM jobs")" 1 "... one job in all (tight and never-late are beyond catch_up)"
like "$OUT" "hourly: missed 13:00 fire enqueued late at 13:20" "... reported as enqueued late"
like "$OUT" "hourly: 3 earlier fires from 10:00 on were missed" "... earlier fires reported"
is "$(sql "SELECT status FROM jobq_schedule_runs WHERE name = 'tight'")" missed "catch_up 10m: a 20 min late fire is recorded as missed"
like "$OUT" "tight: missed 13:00 fire not enqueued: 20 min late" "... and reported"
at 2026-01-05T13:20:30Z >/dev/null
is "$(sql "SELECT COUNT(*) FROM jobs")" 1 "a second tick after the downtime enqueues nothing more"
sql "DELETE FROM jobs"
at 2026-01-05T14:00:40Z >/dev/null
is "$(nruns never-late enqueued)" 1 "catch_up 0: an on-time fire still runs"
sql "DELETE FROM jobs"
at 2026-01-05T15:01:30Z >/dev/null
is "$(sql "SELECT status FROM jobq_schedule_runs WHERE name = 'never-late' ORDER BY fire_at DESC LIMIT 1")" missed \
	"catch_up 0: a fire 90 s late is missed"
is "$(sql "SELECT status FROM jobq_schedule_runs WHERE name = 'hourly' ORDER BY fire_at DESC LIMIT 1")" enqueued \
	"... while catch_up 1h enqueues it"

# catch_up = all after downtime, the job of an earlier tick still queued
# (its queue paused): every fire of the catch-up is skipped, as an on-time
# fire would be, not only the first; once it is done, the next downtime's
# fires are enqueued together (the overlap rule does not hold them up
# against each other).
base_conf "
[schedule pile]
cron = * * * * *
type = echo
catch_up = all 1h"
reset
jq_ pause default >/dev/null
at 2026-01-05T10:00:05Z >/dev/null
OUT=$(at 2026-01-05T10:04:05Z --dry-run 2>&1)
is "$(grep -c 'pile: would skip the 10:0[1-4] fire' <<<"$OUT"):$(grep -c 'would enqueue' <<<"$OUT")" "4:0" \
	"catch_up = all, the last job still queued: --dry-run says the 4 fires would be skipped"
OUT=$(at 2026-01-05T10:04:05Z 2>&1)
is "$(nruns pile enqueued):$(nruns pile skipped)" "1:4" \
	"catch_up = all, the last job still queued: the 4 fires of the catch-up are all skipped"
like "$OUT" "pile: 10:04 fire skipped: job [0-9]+ of its last fire" "... the on-time one too, and says so"
is "$(njobs)" 1 "... one job in the paused queue, not five"
jq_ resume default >/dev/null
sql "DELETE FROM jobs"
OUT=$(at 2026-01-05T10:07:05Z --dry-run 2>&1)
is "$(grep -c 'pile: would enqueue the 10:0[5-7] fire' <<<"$OUT")" 3 \
	"... with it done, --dry-run says the 3 fires of the next catch-up would be enqueued"
at 2026-01-05T10:07:05Z >/dev/null
is "$(nruns pile enqueued)" 4 "with that job done, the fires of the next catch-up are enqueued together"

# catch_up = all with more fires due than one tick takes (1000): the
# rest are left to the next tick, said so, and enqueued by it, not lost.
base_conf "
[schedule many]
cron = * * * * *
type = echo
overlap = allow
catch_up = all 1d"
reset
at 2026-01-05T00:00:05Z >/dev/null
OUT=$(at 2026-01-05T23:00:05Z --quiet 2>&1)
is "$(nruns many enqueued)" 1001 "catch_up = all, 1380 fires due: the tick enqueues 1000 of them"
like "$OUT" "many: 1000 fires a tick at most: those from 16:41 on are left to the next tick" \
	"... and says the rest are left to the next tick"
at 2026-01-05T23:00:30Z >/dev/null
is "$(nruns many enqueued):$(njobs)" "1381:1381" "... which enqueues them: every fire once, none lost"

# ---- overlap ----
base_conf "
[schedule lock]
cron = * * * * *
type = echo
[schedule free]
cron = * * * * *
type = echo
overlap = allow"
reset
at 2026-01-05T10:00:05Z >/dev/null
OUT=$(at 2026-01-05T10:01:05Z)
is "$(nruns lock enqueued):$(nruns lock skipped)" "1:1" "overlap skip: the next fire is skipped while the last job is queued"
like "$OUT" "lock: 10:01 fire skipped: job [0-9]+ of its last fire is still queued or running" "... and says so"
is "$(nruns free enqueued)" 2 "overlap allow: enqueued anyway"
lock_job=$(sql "SELECT job_id FROM jobq_schedule_runs WHERE name = 'lock' AND job_id IS NOT NULL")
sql "UPDATE jobs SET lease_token = REPEAT('a', 32), reserved_by = 'w', reserved_at = UTC_TIMESTAMP(6),
	lease_expires_at = UTC_TIMESTAMP(6) + INTERVAL 1 HOUR WHERE id = $lock_job"
at 2026-01-05T10:02:05Z >/dev/null
is "$(nruns lock skipped)" 2 "a job running under a live lease blocks the next fire"
sql "UPDATE jobs SET lease_expires_at = UTC_TIMESTAMP(6) - INTERVAL 1 SECOND WHERE id = $lock_job"
at 2026-01-05T10:03:05Z >/dev/null
is "$(nruns lock enqueued)" 2 "a job whose lease expired (worker died) does not block"
sql "DELETE FROM jobs WHERE id IN (SELECT job_id FROM jobq_schedule_runs WHERE name = 'lock')"
at 2026-01-05T10:04:05Z >/dev/null
is "$(nruns lock enqueued)" 3 "once the last job is done, the schedule fires again"
lock_job2=$(sql "SELECT MAX(job_id) FROM jobq_schedule_runs WHERE name = 'lock'")

# ---- --run and --dry-run ----
before=$(snapshot)
OUT=$(at 2026-01-05T10:09:05Z --dry-run)
is "$(snapshot)" "$before" "--dry-run writes nothing"
like "$OUT" "free: would enqueue the 10:09 fire" "--dry-run says what it would enqueue"
# lock's last job is still queued: the tick would skip its fire, and
# --dry-run says so rather than that it would enqueue it
like "$OUT" "lock: would skip the 10:09 fire: job $lock_job2 of its last fire is still queued" \
	"--dry-run says which fire the overlap rule would skip"
! grep -q "lock: would enqueue" <<<"$OUT"
ok $? "... and not that it would enqueue it"
like "$OUT" "lock: 4 earlier fires" "--dry-run reports missed fires too"
OUT=$(at 2026-01-05T10:09:05Z --run lock --dry-run)
is "$(snapshot)" "$before" "--run --dry-run writes nothing"
n=$(njobs)
OUT=$(at 2026-01-05T10:09:05Z --run lock)
is "$?:$(njobs)" "0:$((n + 1))" "--run enqueues now, though the last job is still queued"
like "$OUT" "lock: enqueued now as job [0-9]+" "... and says which job"
is "$(sql "SELECT COUNT(*) FROM jobq_schedule_runs WHERE name = 'lock' AND manual = 1")" 1 "... recorded as a manual run"
jq_ schedule disable lock >/dev/null
at 2026-01-05T10:09:05Z --run lock >/dev/null
is "$(sql "SELECT COUNT(*) FROM jobq_schedule_runs WHERE name = 'lock' AND manual = 1")" 2 "--run works on a disabled schedule"
at 2026-01-05T10:09:05Z --run nosuch >/dev/null 2>&1
is "$?" 65 "--run with an unknown name exits 65"

# ---- schedules in the database ----
reset
base_conf "
[schedule inifile]
cron = 0 3 * * *
type = echo"
# Added at 10:05 on the schedules' clock: its first fire is 10:10.
JOBQ_SCHEDULER_NOW=2026-01-05T10:05:00Z jq_ schedule add db1 --cron '*/10 * * * *' --type echo --payload '{"db": 1}' \
	--queue low --description 'from the db' >/dev/null
is "$?" 0 "schedule add exits 0"
is "$(sql "SELECT CONCAT_WS('|', cron, type, payload, queue, overlap) FROM jobq_schedules WHERE name = 'db1'")" \
	'*/10 * * * *|echo|{"db": 1}|low|skip' "... and stores the schedule"
at 2026-01-05T10:10:05Z >/dev/null
is "$(sql "SELECT CONCAT_WS('|', queue, payload) FROM jobs")" 'low|{"db": 1}' "a database schedule fires like an INI one"
before=$(snapshot)
bad_add() {
	local want=$1
	shift
	ERR=$(jq_ schedule "$@" 2>&1 >/dev/null)
	local rc=$?
	is "$rc" 65 "schedule $* exits 65"
	like "$ERR" "$want" "... naming the problem"
	is "$(snapshot)" "$before" "... and changes nothing"
}
bad_add "cron: day of month: 32 is out of range 1-31 \\(column 5\\)" add db2 --cron '0 0 32 * *' --type echo
bad_add "type: unknown job type 'rm_rf'" add db2 --cron '0 0 * * *' --type rm_rf
bad_add "queue: unknown queue 'nope'" add db2 --cron '0 0 * * *' --type echo --queue nope
bad_add "payload: not valid JSON" add db2 --cron '0 0 * * *' --type echo --payload '{"a":'
bad_add "timezone: unknown time zone 'Mars/Olympus'" add db2 --cron '0 0 * * *' --type echo --timezone Mars/Olympus
bad_add "overlap: expected skip or allow" add db2 --cron '0 0 * * *' --type echo --overlap sometimes
bad_add "has no type" add db2 --cron '0 0 * * *'
bad_add "already exists" add db1 --cron '0 0 * * *' --type echo
bad_add "is defined in .*jobq.ini:[0-9]+" add inifile --cron '0 0 * * *' --type echo
bad_add "cron: minute: step 0" edit db1 --cron '*/0 * * * *'
bad_add "no schedule 'nosuch' in the database" edit nosuch --cron '0 0 * * *'
bad_add "is defined in .*jobq.ini" edit inifile --cron '0 0 * * *'
bad_add "no schedule 'nosuch'" remove nosuch
bad_add "is defined in .*jobq.ini:[0-9]+; remove it there" remove inifile
bad_add "no schedule 'nosuch'" disable nosuch
bad_add "bad name" add 'a b' --cron '0 0 * * *' --type echo

jq_ schedule edit db1 --cron '0 12 * * *' --overlap allow >/dev/null
is "$(sql "SELECT CONCAT_WS('|', cron, payload, overlap) FROM jobq_schedules WHERE name = 'db1'")" \
	'0 12 * * *|{"db": 1}|allow' "schedule edit changes only what it is given"
jq_ schedule disable db1 >/dev/null
jq_ schedule disable inifile >/dev/null
is "$(sql "SELECT GROUP_CONCAT(CONCAT(name, '=', enabled) ORDER BY name) FROM jobq_schedule_state WHERE enabled IS NOT NULL")" \
	"db1=0,inifile=0" "disable works on database and INI schedules; the switch is in the database"
n=$(njobs)
at 2026-01-05T12:00:05Z >/dev/null
at 2026-01-05T03:00:05Z >/dev/null
is "$(njobs)" "$n" "disabled schedules do not fire"
at 2026-01-05T12:00:10Z enable inifile >/dev/null # on the tests' clock: enable starts it from then
at 2026-01-06T03:00:05Z >/dev/null
is "$(njobs)" "$((n + 1))" "an enabled INI schedule fires again (once: the disabled time is not caught up)"
jq_ schedule remove db1 >/dev/null
is "$(sql "SELECT COUNT(*) FROM jobq_schedules WHERE name = 'db1'"):$(sql "SELECT COUNT(*) FROM jobq_schedule_state WHERE name = 'db1'")" \
	"0:0" "schedule remove deletes the schedule and its switch"

# An INI schedule its file says enabled = no stays off: the switch in
# the database (left on before the file said no) does not turn it on,
# and enable is refused, naming the file's line.
sed -i '/^\[schedule inifile\]$/a enabled = no' "$CONF"
n=$(njobs)
at 2026-01-07T03:00:05Z >/dev/null
is "$(sql "SELECT enabled FROM jobq_schedule_state WHERE name = 'inifile'")/$(njobs)" "1/$n" \
	"enabled = no in the file: no fire, though the database's switch says on"
like "$(jq_ schedule --list | grep '^inifile ')" "^inifile +ini +off " "--list says it is off"
OUT=$(jq_ schedule enable inifile 2>&1)
is "$?" 65 "schedule enable of an INI schedule the file turns off: exit 65"
like "$OUT" "schedule enable: 'inifile' says enabled = no in .*jobq.ini:[0-9]+: turn it on there" \
	"... naming the file's line"
sed -i '/^enabled = no$/d' "$CONF"

# -c FILE after the subcommand, or before it, is the file read (with
# $JOBQ_CONFIG naming another, or none): every command takes -c after
# its name.
run_c() { env JOBQ_CONFIG="$T/none.ini" "$JOBQ" "$@"; }
run_c schedule add cpos -c "$CONF" --cron '0 3 * * *' --type echo --description -cool >/dev/null
is "$?" 0 "schedule add NAME -c FILE: the file after the name is read"
is "$(sql "SELECT description FROM jobq_schedules WHERE name = 'cpos'")" "-cool" "... and an option's value that looks like -c stays a value"
run_c schedule -c "$CONF" disable cpos >/dev/null
is "$?" 0 "schedule -c FILE disable NAME: the file before the subcommand too"
run_c schedule enable cpos --config "$CONF" >/dev/null
is "$?" 0 "schedule enable NAME --config FILE"
run_c schedule remove --config="$CONF" cpos >/dev/null
is "$?" 0 "schedule remove --config=FILE NAME"
is "$(sql "SELECT COUNT(*) FROM jobq_schedules WHERE name = 'cpos'")" 0 "... removed from the file's database"
# Read as getopt reads them: abbreviated, and a value that looks like -c.
run_c schedule add cab --conf "$CONF" --cron '0 3 * * *' --type echo --desc -cool >/dev/null
is "$?:$(sql "SELECT description FROM jobq_schedules WHERE name = 'cab'")" "0:-cool" "schedule add NAME --conf FILE ... --desc -cool (abbreviated options)"
run_c schedule --conf "$CONF" remove cab >/dev/null
is "$?:$(sql "SELECT COUNT(*) FROM jobq_schedules WHERE name = 'cab'")" "0:0" "schedule --conf FILE remove NAME"
out=$(run_c schedule remove cab --cron x -c "$CONF" 2>&1)
is "$?" 64 "schedule remove NAME --cron: exit 64 (remove takes no such option)"

# ---- a name in both places; a database schedule the INI no longer allows ----
JOBQ_SCHEDULER_NOW=2026-01-06T00:59:30Z jq_ schedule add twice --cron '0 0 * * *' --type echo >/dev/null
base_conf "
[schedule twice]
cron = 0 1 * * *
type = echo"
JOBQ_SCHEDULER_NOW=2026-01-06T00:59:30Z jq_ schedule add other-db --cron '0 1 * * *' --type echo >/dev/null
n=$(njobs)
ERR=$(at 2026-01-06T01:00:05Z 2>&1)
is "$?" 1 "a name both in the INI and in the database makes the tick exit 1"
like "$ERR" "twice: cannot fire: defined twice: the section at .*jobq.ini:[0-9]+ fires, this database copy never fires" "... naming both places"
is "$(njobs)" "$((n + 2))" "... the file's section fires, and so does every other schedule"
is "$(nruns twice):$(nruns other-db)" "1:1" "... one fire each"
like "$(jq_ schedule --list 2>&1)" "twice .*PROBLEM: defined twice" "... --list shows the database copy's problem"
ERR=$(jq_ check 2>&1)
is "$?" 78 "... jobq check fails (78)"
like "$ERR" "database schedule 'twice': defined twice" "... naming it"
jq_ schedule remove other-db >/dev/null
base_conf "
[handler other]
exec = $HANDLERS/echo.sh"
sql "UPDATE jobq_schedules SET cron = '* * * * *'"
JOBQ_SCHEDULER_NOW=2026-01-06T03:59:30Z jq_ schedule add good --cron '* * * * *' --type other >/dev/null
sql "UPDATE jobq_schedules SET type = 'vanished' WHERE name = 'twice'" # its handler left the INI
n=$(njobs)
OUT=$(at 2026-01-06T04:00:05Z 2>&1)
is "$?" 1 "a database schedule whose handler left the INI makes the tick exit 1"
like "$OUT" "twice: cannot fire: type: unknown job type 'vanished'" "... naming the schedule and the reason"
is "$(njobs)" "$((n + 1))" "... and the other schedules still fire"
like "$(jq_ schedule --list)" "twice .*PROBLEM: type: unknown job type 'vanished'" "--list shows the problem"

# ---- --list: next and last fire, the outcome of the last job, counts ----
reset
base_conf "
[schedule done-one]
cron = 0 3 * * *
type = echo
timezone = Europe/Berlin
description = nightly report
[schedule failed-one]
cron = 0 3 * * *
type = echo
[schedule retry-one]
cron = 0 3 * * *
type = echo
[schedule run-one]
cron = 0 3 * * *
type = echo
[schedule skip-one]
cron = */30 * * * *
type = echo
[schedule miss-one]
cron = 0 3 * * *
type = echo
catch_up = 0"
jq_ schedule disable miss-one >/dev/null
now=$(sql "SELECT DATE_FORMAT(UTC_TIMESTAMP(), '%Y-%m-%dT%H:%i:%sZ')")
day=$(sql "SELECT DATE_FORMAT(UTC_TIMESTAMP() - INTERVAL 1 DAY, '%Y-%m-%d')")
at "${day}T01:59:00Z" >/dev/null
at "${day}T02:00:10Z" >/dev/null # Berlin's 03:00 (done-one)
at "${day}T03:00:10Z" >/dev/null
jid() { sql "SELECT job_id FROM jobq_schedule_runs WHERE name = '$1' AND job_id IS NOT NULL ORDER BY fire_at DESC LIMIT 1"; }
sql "DELETE FROM jobs WHERE id = $(jid done-one)"
sql "INSERT INTO failed_jobs (id, queue, type, payload, exception) SELECT id, queue, type, payload, 'boom' FROM jobs WHERE id = $(jid failed-one); DELETE FROM jobs WHERE id = $(jid failed-one)"
sql "UPDATE jobs SET attempts = 1, available_at = UTC_TIMESTAMP(6) + INTERVAL 1 HOUR WHERE id = $(jid retry-one)"
sql "UPDATE jobs SET attempts = 1, lease_token = REPEAT('b', 32), lease_expires_at = UTC_TIMESTAMP(6) + INTERVAL 1 HOUR WHERE id = $(jid run-one)"
at "${day}T03:30:10Z" >/dev/null # skip-one's 03:30 is skipped: its 03:00 job is queued
jq_ schedule enable miss-one >/dev/null
at "${day}T05:00:10Z" >/dev/null # miss-one: the 03:00 fire... never seen while disabled
sql "INSERT INTO jobq_schedule_runs (name, fire_at, status) VALUES ('miss-one', '${day} 04:00:00', 'missed')"
LIST=$(JOBQ_SCHEDULER_NOW=$now jq_ schedule --list)
echo "$LIST" | sed 's/^/# /'
row() { echo "$LIST" | grep "^$1 "; }
like "$(row done-one)" "^done-one +ini +on +0 3 \* \* \* +[0-9-]+ 03:00:00 \+0[12]:00 +${day} 03:00:00 \+01:00 +done +1/0 +nightly report$" \
	"--list: an INI schedule, next fire and last fire in its zone, outcome done, 1 run, description"
like "$(row failed-one)" " failed +1/1 +at 03:00$" "--list: a dead-lettered job is failed and counted as a failure"
is "$(echo "$LIST" | grep -A1 "^failed-one " | tail -1 | sed 's/^ *//')" "job $(jid failed-one): boom" \
	"--list: its job and error on the line under it"
is "$(echo "$LIST" | grep -c "^ .*job [0-9]*:")" 1 "--list: no such line under a schedule whose last job did not fail"
like "$(row retry-one)" " retrying +1/0 " "--list: a job waiting out a backoff is retrying"
like "$(row run-one)" " running +1/0 " "--list: a job under a live lease is running"
like "$(row skip-one)" " skipped +1/0 +every 30 minutes$" "--list: a skipped last fire is skipped"
like "$(row miss-one)" "^miss-one +ini +on .* missed +0/0 " "--list: a missed last fire is missed; the switch shows on"
like "$LIST" "over the last 7d" "--list says the window"
JSON=$(JOBQ_SCHEDULER_NOW=$now jq_ schedule --list --json)
is "$(echo "$JSON" | /usr/bin/python3 -c 'import json,sys; d={s["name"]: s for s in json.load(sys.stdin)}; s=d["failed-one"]; print(s["source"], s["enabled"], s["last_outcome"], s["runs"], s["failures"], s["when"], s["last_error"], d["done-one"]["last_error"])')" \
	"ini True failed 1 1 at 03:00 boom None" "--list --json carries the same facts"

# ---- an INI section renamed: what the old name left ----
# The new name is a schedule the ticks have not seen: it may take the
# fire of the last minute (jobq(1)).  The old name's switch and fires
# stay, shown by --list as gone with the command that deletes them; the
# ticks keep it looked at, so that a name that comes back (renamed back)
# does not catch up the fires of the time it was gone.
ini_hourly() { base_conf "
[schedule $1]
cron = 0 * * * *
type = echo
overlap = allow
catch_up = all 1d"; }
reset
ini_hourly old
at 2026-01-10T10:00:05Z >/dev/null
ini_hourly new
at 2026-01-10T10:00:20Z >/dev/null
is "$(nruns old):$(nruns new)" "1:1" "renamed within the minute of a fire: the new name takes it too (as jobq(1) says)"
like "$(jq_ schedule --list | grep '^old ')" "^old +- +- +- +gone +[0-9-]+ [0-9:]+ .*GONE: in neither the file nor the database .*'jobq schedule remove old'" \
	"--list shows the old name as gone, with its last fire and how to delete what is left"
at 2026-01-10T14:59:30Z >/dev/null
ini_hourly old
OUT=$(at 2026-01-10T15:00:05Z)
is "$(nruns old)" 2 "renamed back hours later: the old name fires 15:00 only, not the fires of the time it was gone"
is "$(grep -cE 'missed|late' <<<"$OUT")" 0 "... and reports none of them as missed or late"
OUT=$(jq_ schedule remove new)
is "$?:$OUT" "0:schedule 'new' removed" "schedule remove of a gone name: exit 0"
is "$(nruns new):$(sql "SELECT COUNT(*) FROM jobq_schedule_state WHERE name = 'new'")" "0:0" "... its fires and switch are deleted"
is "$(jq_ schedule --list | grep -c '^new ')" 0 "... and --list no longer shows it"
jq_ schedule remove new >/dev/null 2>&1
is "$?" 65 "... removed again: no such schedule (65)"
# Two hosts mid-deploy, one still with the old file: the new file's tick
# first in the minute does not keep the old file's from its fire.
cp "$CONF" "$T/old.ini"
ini_hourly new
at 2026-01-10T16:00:10Z >/dev/null
JOBQ_SCHEDULER_NOW=2026-01-10T16:00:30Z "$JOBQ" -c "$T/old.ini" schedule >/dev/null
is "$(sql "SELECT COUNT(*) FROM jobq_schedule_runs WHERE fire_at = '2026-01-10 16:00:00'")" 2 \
	"a host still ticking the old file fires 16:00 under the old name, after the new file's tick"
ini_hourly a-name-longer-than-the-rest
at 2026-01-10T16:30:05Z >/dev/null
ini_hourly new
list=$(jq_ schedule --list)
is "$(grep '^a-name-longer' <<<"$list" | awk '{ print index($0, " - ") }')" \
	"$(sed -n 1p <<<"$list" | awk '{ print index($0, " SRC ") }')" "--list: a gone name longer than the others widens the name column"

# The gone names (old, a-name-longer-than-the-rest) are in --list
# --json, each with every key, and jobq check warns of each, exit 0.
JSON=$(JOBQ_SCHEDULER_NOW=2026-01-10T16:40:00Z jq_ schedule --list --json)
is "$(echo "$JSON" | /usr/bin/python3 -c 'import json,sys; print(" ".join(s["name"] for s in json.load(sys.stdin) if s["gone"]))')" \
	"a-name-longer-than-the-rest old" "--list --json: the gone names, after the schedules"
is "$(echo "$JSON" | /usr/bin/python3 -c 'import json,sys; d={s["name"]: s for s in json.load(sys.stdin)}; o=d["old"]; print(sorted(o) == sorted(d["new"]), d["new"]["gone"], o["source"], o["enabled"], o["cron"], o["type"], o["next_fire"], o["last_fire"][:16], o["last_outcome"], o["runs"], "jobq schedule remove old" in o["problem"])')" \
	"True False None False None None None 2026-01-10T16:00 queued 3 True" \
	"... with every key a schedule has: no source, switch, cron or next fire; its last fire, counts, and how to delete it"
OUT=$(jq_ check 2>"$T/check.err")
is "$?" 0 "jobq check with gone names: exit 0 (a warning, no error)"
is "$(grep -c "^jobq: warning: schedule '\(old\|a-name-longer-than-the-rest\)' is gone: in neither the file nor the database .*'jobq schedule remove \(old\|a-name-longer-than-the-rest\)'" "$T/check.err")" 2 \
	"... one warning line per gone name, with the command that deletes what it left" || diag "$(cat "$T/check.err")"
jq_ schedule remove a-name-longer-than-the-rest >/dev/null
jq_ schedule remove old >/dev/null
jq_ check >/dev/null 2>"$T/check.err"
is "$(grep -c 'is gone' "$T/check.err")" 0 "... and none once they are removed"

# ---- enabled = no and back to yes: the time a tick saw it off is not downtime ----
ini_onoff() { base_conf "
[schedule onoff]
cron = 0 * * * *
type = echo
overlap = allow
catch_up = all 1d
enabled = $1"; }
ini_seen() { sql "SELECT COALESCE(ini_enabled, '-') FROM jobq_schedule_state WHERE name = 'onoff'"; }
reset
ini_onoff yes
at 2026-01-12T10:00:05Z >/dev/null
ini_onoff no
at 2026-01-12T11:00:05Z >/dev/null
is "$(nruns onoff):$(ini_seen)" "1:0" "enabled = no: no fire, and the tick records that it read no"
ini_onoff yes
at 2026-01-12T13:59:50Z --dry-run >/dev/null
is "$(ini_seen)" 0 "... a --dry-run records nothing"
OUT=$(at 2026-01-12T14:00:05Z)
is "$(nruns onoff):$(ini_seen)" "2:1" \
	"back to yes, no tick between: the first tick that reads yes fires 14:00 only, not 12:00 and 13:00 (catch_up = all)"
is "$(grep -cE 'missed|late' <<<"$OUT")" 0 "... and reports none of them as missed or late"
at 2026-01-12T17:00:05Z >/dev/null
is "$(nruns onoff)" 5 "a downtime after a tick read yes is caught up as before (15:00, 16:00, 17:00)"
# Turned off and back on with no tick between: nothing recorded it off,
# and the file does not say when it changed, so that time is downtime
# (jobq.ini(5), enabled).
ini_onoff no
ini_onoff yes
at 2026-01-12T20:00:05Z >/dev/null
is "$(nruns onoff)" 8 "off and back on between two ticks: not known to have been off, its fires are caught up (18:00-20:00)"

# ---- INI validation of the schedule keys (exit 78, FILE:LINE) ----
bad_ini() {
	local line=$1 want=$2 body=$3
	base_conf "$body"
	ERR=$(jq_ check 2>&1 >/dev/null)
	is "$?" 78 "INI: $want exits 78"
	like "$ERR" "jobq.ini:$line: .*$want" "... with FILE:LINE"
}
# base_conf puts the body after line 13
bad_ini 17 "timezone: unknown time zone 'Europe/Atlantis'" "
[schedule s]
cron = 0 3 * * *
timezone = Europe/Atlantis
type = echo"
bad_ini 17 "overlap: expected skip or allow, not 'never'" "
[schedule s]
cron = 0 3 * * *
overlap = never
type = echo"
bad_ini 17 "catch_up: " "
[schedule s]
cron = 0 3 * * *
catch_up = soon
type = echo"
bad_ini 17 "enabled: expected yes or no" "
[schedule s]
cron = 0 3 * * *
enabled = maybe
type = echo"
bad_ini 15 "\\[schedule s\\] has no type" "
[schedule s]
cron = 0 3 * * *"

# ---- upgrade: a version-1 database with run rows gets the scheduler's columns ----
base_conf ""
schema_v1
sql "INSERT INTO jobq_schedule_runs (name, fire_at, job_id) VALUES ('old', '2025-01-01 03:00:00', 7)"
jq_ init >/dev/null
is "$?" 0 "jobq init upgrades a version-1 database"
is "$(sql "SELECT CONCAT_WS('|', name, fire_at, job_id, status, manual) FROM jobq_schedule_runs")" \
	"old|2025-01-01 03:00:00.000000|7|enqueued|0" "... keeping its run rows"

finish
