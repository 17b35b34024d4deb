#!/bin/bash
# Promises where features meet (issue 19), in exec and persistent mode:
#   1. a follow-up written on descriptor 3 with a start time ("at")
#      commits with its parent's done outcome and starts at that time;
#   3. progress is a value, not a log: the handler guide's example
#      reporting progress for each of 100,000 rows ends done, with its
#      result, in both modes (progress lines do not fill the 64K channel);
#   2. on_dead of a persistent handler runs as a program of its own that
#      reads the dead job's JSON and ends (alerts are always exec'd);
#  13. max_memory counts the handler's whole process group: a wrapper
#      script that does not exec its interpreter no longer hides it;
#  15. sys.exit(N) inside a Python helper-based handler means what exit
#      status N means, in both modes (0 done, 75 retry, 65 dead);
#   5. schedule names that differ only in case are two schedules, each
#      with its own fires and history;
#   7. `jobq failed retry` gives a job its unique key back (and refuses
#      while another job holds the key);
#   8. a plain --unique-key enqueue is refused while an earlier
#      --unique-for window on the key is open (its job done or not);
#   9. `schedule edit --type` moves a schedule that used its type's queue
#      to the new type's queue (one given its own queue keeps it);
#  10. a removed and re-added schedule starts afresh: no fire from before
#      it existed is enqueued;
#  11. `jobq check` fails on a schedule name in the INI and the database,
#      on a database schedule whose handler left the INI, and on an
#      expression that never fires; it counts the database's schedules;
#  12. on_success loops (a -> a, a -> b -> a) are refused at load;
#  16. a worker stopped by SIGTERM with a backlog of on_dead alerts says
#      so and stops within a bound (waiting alerts are dropped, logged);
#  14. a persistent handler's status line followed by anything else on
#      the same line is a protocol violation, not a status.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
setup promises
TH=$top_srcdir/tests/handlers

for mode in exec persistent; do
	empty_tables
	write_conf <<EOC
[worker]
poll_interval = 20ms
backoff = 200ms
backoff_jitter = 0
max_attempts = 2

[queue default]

[handler child]
exec = /bin/true

[handler promise]
exec = $TH/promise.py $mode
mode = $mode
env.PYTHONPATH = $HANDLERS
env.PYTHONDONTWRITEBYTECODE = 1
EOC
	at=$(date -u -d '+3 hours' +%Y-%m-%dT%H:%M:%SZ)
	f=$(jq_ enqueue promise "{\"at\": \"$at\", \"from\": 1}")
	p=$(jq_ enqueue promise '{"rows": 100000}')
	timeout 300 "$JOBQ" -c "$CONF" work --stop-when-empty 2>"$T/work.$mode.log"
	is "$?" 0 "[$mode] the worker runs both jobs and exits"

	is "$(where "$f")" gone "[$mode] item 1: the job that wrote a follow-up with \"at\" is done"
	is "$(sql "SELECT CONCAT_WS('|', COUNT(*), MIN(DATE_FORMAT(available_at, '%Y-%m-%dT%H:%i:%sZ'))) FROM jobs WHERE type = 'child'")" \
		"1|$at" "[$mode] item 1: exactly one follow-up, starting at the time written"
	is "$(sql "SELECT COUNT(*) FROM job_runs WHERE job_id = $f AND outcome = 'done'")" 1 \
		"[$mode] item 1: one run, recorded done"
	is "$(where "$p")" gone "[$mode] item 3: 100,000 progress lines: the job is done"
	is "$(sql "SELECT CONCAT_WS('|', outcome, result) FROM job_runs WHERE job_id = $p ORDER BY id")" \
		'done|{"rows":100000}' "[$mode] item 3: one run, done, with the result written after the progress lines"
	is "$(sql "SELECT COUNT(*) FROM job_runs WHERE job_id = $p AND outcome <> 'done'")" 0 \
		"[$mode] item 3: no attempt failed on the way (the channel never overflowed)"
done

# 14: trailing garbage after the status line.
empty_tables
write_conf <<EOC
[worker]
poll_interval = 20ms
backoff = exponential 30s 4m
backoff_jitter = 0
mode = persistent

[queue default]

[handler raw]
exec = $TH/persist_raw.py
EOC
g=$(jq_ enqueue raw '{"garbage": "{\"status\": 0} trailing garbage\n"}')
timeout 60 "$JOBQ" -c "$CONF" work --stop-when-empty 2>"$T/work.garbage.log"
is "$(where "$g")" queue "item 14: {\"status\": 0} followed by garbage is not a done reply: the job is retried"
like "$(sql "SELECT last_error FROM jobs WHERE id = $g")" "protocol violation" \
	"item 14: last_error names the protocol violation"

# 2: on_dead with mode = persistent, set on the handler and in [worker].
empty_tables
cat >"$T/alert.sh" <<'EOA'
#!/bin/sh
# Appends the dead job's JSON to $1, one line per alert.
{ cat; echo; } >>"$1"
EOA
chmod +x "$T/alert.sh"
write_conf <<EOC
[worker]
poll_interval = 20ms
mode = persistent
concurrency = 1
on_dead = $T/alert.sh $T/alerts.worker

[queue default]

[handler raw]
exec = $TH/persist_raw.py

[handler raw_own]
exec = $TH/persist_raw.py
on_dead = $T/alert.sh $T/alerts.own
EOC
d2=$(jq_ enqueue raw_own '{"exit": 65}')
d1=$(jq_ enqueue raw '{"exit": 65, "pid": 1}')
ok1=$(jq_ enqueue raw '{"pid": 1}')
start=$(date +%s)
timeout 60 "$JOBQ" -c "$CONF" work --stop-when-empty 2>"$T/work.alert.log"
took=$(($(date +%s) - start))
is "$(where "$d1"),$(where "$d2")" "failed,failed" "item 2: both jobs are dead-lettered"
# The alert's first line: the dead job's id and whether failed_at is a
# top-level key (a persistent request line carries the JSON inside).
alert_of() {
	python3 -c 'import json, sys; d = json.loads(open(sys.argv[1]).readline()); print("%s,%s" % (d.get("id"), "failed_at" in d))' "$1" 2>/dev/null
}
is "$(alert_of "$T/alerts.worker")" "$d1,True" \
	"item 2: [worker] on_dead read the dead job's JSON (not a request line) and ended"
is "$(alert_of "$T/alerts.own")" "$d2,True" \
	"item 2: the handler's on_dead read the dead job's JSON and ended"
ok "$([ "$took" -lt 20 ]; echo $?)" "item 2: the worker did not wait on an alert that never ends (took ${took}s)"
is "$(sql "SELECT COUNT(DISTINCT output) FROM job_runs WHERE job_id IN ($d1, $ok1)")" 1 \
	"item 2: the dead job's alert did not replace the warm handler (one pid served both jobs)"
# 13: max_memory through a wrapper that does not exec.
empty_tables
cat >"$T/wrapper.sh" <<EOW
#!/bin/sh
# Runs the handler as a child, not with exec: the worker's own pid is the shell.
$TH/persist_raw.py
EOW
chmod +x "$T/wrapper.sh"
write_conf <<EOC
[worker]
poll_interval = 20ms
concurrency = 1

[queue default]

[handler big]
exec = $T/wrapper.sh
mode = persistent
max_memory = 60M
EOC
m1=$(jq_ enqueue big '{"mem": 120, "pid": 1}')
m2=$(jq_ enqueue big '{"pid": 1}')
timeout 60 "$JOBQ" -c "$CONF" work --stop-when-empty 2>"$T/work.mem.log"
is "$(where "$m1"),$(where "$m2")" "gone,gone" "item 13: both jobs are done"
like "$(cat "$T/work.mem.log")" "is recycled: resident memory [0-9]+ KiB is over max_memory" \
	"item 13: the group's memory (the interpreter under a non-exec wrapper) recycles the process"
is "$(sql "SELECT COUNT(DISTINCT output) FROM job_runs WHERE job_id IN ($m1, $m2)")" 2 \
	"item 13: the next job ran in a fresh process"
# 15: sys.exit(N) inside the Python helper, in both modes.
for mode in exec persistent; do
	empty_tables
	write_conf <<EOC
[worker]
poll_interval = 20ms
backoff = exponential 30s 4m
backoff_jitter = 0

[queue default]

[handler ex]
exec = $TH/helper_exit.py
mode = $mode
env.PYTHONPATH = $HANDLERS
env.PYTHONDONTWRITEBYTECODE = 1

[handler phpex]
exec = /usr/bin/php $TH/helper_exit.php
mode = $mode
env.HANDLER_LIB = $HANDLERS
EOC
	e0=$(jq_ enqueue ex '{"exit": 0}')
	e75=$(jq_ enqueue ex '{"exit": 75}')
	e65=$(jq_ enqueue ex '{"exit": 65}')
	p0=$(jq_ enqueue phpex '{"exit": 0}')
	p75=$(jq_ enqueue phpex '{"exit": 75}')
	p65=$(jq_ enqueue phpex '{"exit": 65}')
	timeout 60 "$JOBQ" -c "$CONF" work --stop-when-empty 2>"$T/work.exit.$mode.log"
	is "$(where "$e0"),$(where "$e75"),$(where "$e65")" "gone,queue,failed" \
		"[$mode] item 15: sys.exit(0) is done, sys.exit(75) retried, sys.exit(65) dead-lettered"
	is "$(where "$p0"),$(where "$p75"),$(where "$p65")" "gone,queue,failed" \
		"[$mode] item 15: PHP exit(0) is done, exit(75) retried, exit(65) dead-lettered"
	is "$(sql "SELECT CONCAT_WS('|', outcome, exit_status) FROM job_runs WHERE job_id = $p0")" "done|exit 0" \
		"[$mode] item 15: PHP exit(0) is recorded as exec mode records it"
done
# 12: on_success loops are refused when the configuration is read.
write_conf <<EOC
[queue default]
[handler a]
exec = /bin/true
on_success = b
[handler b]
exec = /bin/true
on_success = a
[handler self]
exec = /bin/true
on_success = self
[handler c]
exec = /bin/true
on_success = a
[handler end]
exec = /bin/true
[handler chain]
exec = /bin/true
on_success = end
EOC
out=$(jq_ check 2>&1 >/dev/null; echo "rc=$?")
like "$out" "jobq.ini:[0-9]+: on_success: a -> b -> a is a loop" "item 12: a -> b -> a is refused with its line"
like "$out" "jobq.ini:[0-9]+: on_success: self -> self is a loop" "item 12: self -> self is refused"
like "$out" "rc=78" "item 12: ... exit 78 (configuration error)"
is "$(grep -c 'is a loop' <<<"$out")" 2 "item 12: each loop is reported once; a chain into a loop and a plain chain are not loops"
# 5: [schedule Report] and [schedule report] both fire, each its own history.
empty_tables
write_conf <<EOC
[queue default]
[handler echo]
exec = /bin/true
[schedule Report]
cron = 0 * * * *
type = echo
payload = {"which": "Report"}
[schedule report]
cron = 0 * * * *
type = echo
payload = {"which": "report"}
EOC
JOBQ_SCHEDULER_NOW=2026-01-05T10:00:05Z jq_ schedule --quiet 2>"$T/tick.case.log"
is "$(sql "SELECT GROUP_CONCAT(payload ORDER BY BINARY payload SEPARATOR ' ') FROM jobs WHERE type = 'echo'")" \
	'{"which": "Report"} {"which": "report"}' "item 5: Report and report both fire at 10:00"
is "$(sql "SELECT GROUP_CONCAT(name ORDER BY BINARY name SEPARATOR ' ') FROM jobq_schedule_runs")" "Report report" \
	"item 5: each has its own run row"
# 8: a plain key while a window on it is open.
empty_tables
write_conf <<EOC
[worker]
poll_interval = 20ms
[queue default]
[handler echo]
exec = /bin/true
EOC
w=$(jq_ enqueue --unique-key w8 --unique-for 1h echo '{}')
timeout 60 "$JOBQ" -c "$CONF" work --stop-when-empty 2>/dev/null
is "$(where "$w")" gone "item 8: the job that opened the window is done"
out=$(jq_ enqueue --unique-key w8 echo '{}' 2>"$T/err8")
is "$out" "$w" "item 8: a plain --unique-key enqueue during the window prints the holder, enqueues nothing"
like "$(cat "$T/err8")" "its --unique-for window is still open" "item 8: ... and says why"
is "$(sql "SELECT COUNT(*) FROM jobs")" 0 "item 8: no job was queued"
sql "UPDATE jobq_unique SET expires_at = UTC_TIMESTAMP(6) - INTERVAL 1 SECOND WHERE unique_key = 'w8'"
n=$(jq_ enqueue --unique-key w8 echo '{}' 2>/dev/null)
is "$(where "$n")" queue "item 8: once the window has passed the key is free"
# 7: a dead job keeps its unique key through `failed retry`.
empty_tables
write_conf <<EOC
[worker]
poll_interval = 20ms
[queue default]
[handler dies]
exec = /bin/sh -c 'exit 65'
EOC
k=$(jq_ enqueue --unique-key k7 dies '{}')
timeout 60 "$JOBQ" -c "$CONF" work --stop-when-empty 2>/dev/null
is "$(where "$k")" failed "item 7: the keyed job is dead-lettered"
other=$(jq_ enqueue --unique-key k7 dies '{}' 2>/dev/null)
like "$(jq_ failed retry "$k" 2>&1)" "unique key is held by another job" \
	"item 7: retry while another job holds the key: refused, saying why"
is "$(where "$k")" failed "item 7: ... and the job stays dead-lettered"
sql "DELETE FROM jobs WHERE id = $other"
jq_ failed retry "$k" >/dev/null 2>&1
is "$(sql "SELECT unique_key FROM jobs WHERE id = $k")" k7 "item 7: the retried job has its unique key back"
is "$(jq_ enqueue --unique-key k7 dies '{}' 2>/dev/null)" "$k" "item 7: a second job with the key is refused (the retried job holds it)"
# 9: schedule edit --type and the queue.
write_conf <<EOC
[queue default]
[queue qa]
[queue qb]
[queue qx]
[handler a]
exec = /bin/true
queue = qa
[handler b]
exec = /bin/true
queue = qb
EOC
sql "DELETE FROM jobq_schedules"
jq_ schedule add s9 --cron '0 * * * *' --type a >/dev/null
jq_ schedule add s9x --cron '0 * * * *' --type a --queue qx >/dev/null
jq_ schedule edit s9 --type b >/dev/null
jq_ schedule edit s9x --type b >/dev/null
is "$(sql "SELECT GROUP_CONCAT(CONCAT(name, ':', type, ':', queue) ORDER BY name) FROM jobq_schedules")" \
	"s9:b:qb,s9x:b:qx" "item 9: edit --type takes the new type's queue, unless the schedule had its own"
# 10: remove, then add again under the same name.
write_conf <<EOC
[queue default]
[handler echo]
exec = /bin/true
EOC
empty_tables
sql "DELETE FROM jobq_schedules; DELETE FROM jobq_schedule_state; DELETE FROM jobq_schedule_runs"
# Each add on the schedules' clock, as the ticks read it.
JOBQ_SCHEDULER_NOW=2026-01-05T09:59:00Z jq_ schedule add s10 --cron '0 * * * *' --type echo >/dev/null
JOBQ_SCHEDULER_NOW=2026-01-05T10:00:05Z jq_ schedule --quiet
is "$(sql "SELECT COUNT(*) FROM jobs")" 1 "item 10: the schedule fires at 10:00"
jq_ schedule remove s10 >/dev/null
JOBQ_SCHEDULER_NOW=2026-01-05T10:45:00Z jq_ schedule add s10 --cron '30 * * * *' --type echo >/dev/null
JOBQ_SCHEDULER_NOW=2026-01-05T10:45:05Z jq_ schedule --quiet 2>"$T/tick10.log"
is "$(sql "SELECT COUNT(*) FROM jobs")" 1 "item 10: re-added at 10:45, it does not enqueue the 10:30 fire from before it existed"
JOBQ_SCHEDULER_NOW=2026-01-05T11:30:05Z jq_ schedule --quiet
is "$(sql "SELECT COUNT(*) FROM jobs")" 2 "item 10: ... and fires at 11:30"
# 16: SIGTERM with 40 alerts of 2 s each waiting.
empty_tables
cat >"$T/slow_alert.sh" <<'EOA'
#!/bin/sh
cat >/dev/null
sleep 2
EOA
chmod +x "$T/slow_alert.sh"
write_conf <<EOC
[worker]
poll_interval = 20ms
concurrency = 8
[queue default]
[handler dies]
exec = /bin/sh -c 'exit 65'
on_dead = $T/slow_alert.sh
EOC
for i in $(seq 40); do echo '{"type": "dies", "payload": {}}'; done >"$T/dies.jsonl"
jq_ enqueue --batch <"$T/dies.jsonl" >/dev/null
start_worker
wait_for_sql 60 "SELECT COUNT(*) FROM failed_jobs WHERE type = 'dies'" 40
t0=$(date +%s%N)
kill -TERM "$WORKER_PID"
wait_exit 30 "$WORKER_PID" >/dev/null
ms=$((($(date +%s%N) - t0) / 1000000))
log16=$(cat "$T"/worker.*.log)
ok "$([ "$ms" -lt 8000 ]; echo $?)" "item 16: SIGTERM with 40 slow alerts waiting: the worker stops in ${ms} ms (bound 5 s + a kill_grace)"
like "$log16" "waiting at most 5 s for [0-9]+ alert programs? still running" "item 16: it says what it waits for"
like "$log16" "on_dead .* not run: the worker stops \\(the job stays dead-lettered\\)" "item 16: each dropped alert is logged"
# 11: what `jobq check` says about schedules.
sql "DELETE FROM jobq_schedules; DELETE FROM jobq_schedule_state; DELETE FROM jobq_schedule_runs"
write_conf <<EOC
[queue default]
[handler echo]
exec = /bin/true
[handler gone]
exec = /bin/true
[schedule ini1]
cron = 0 * * * *
type = echo
EOC
jq_ schedule add db1 --cron '0 * * * *' --type echo >/dev/null
jq_ schedule add db2 --cron '0 * * * *' --type gone >/dev/null
like "$(jq_ check 2>&1; echo "rc=$?")" "schedules: 3 \\(1 in the configuration, 2 in the database, 0 disabled\\): ok.*rc=0" \
	"item 11: check counts the database's schedules too"
write_conf <<EOC
[queue default]
[handler echo]
exec = /bin/true
[schedule ini1]
cron = 0 * * * *
type = echo
[schedule db1]
cron = 0 * * * *
type = echo
EOC
like "$(jq_ check 2>&1; echo "rc=$?")" "defined twice.*rc=78" "item 11: a name in the INI and the database: check fails (78)"
write_conf <<EOC
[queue default]
[handler echo]
exec = /bin/true
[schedule ini1]
cron = 0 0 31 2 *
type = echo
EOC
out=$(jq_ check 2>&1; echo "rc=$?")
like "$out" "jobq.ini:[0-9]+: cron: '0 0 31 2 \\*' names no date that exists" \
	"item 11: an expression that never fires: the file is refused at its line"
like "$out" "rc=78" "item 11: ... and check exits 78"
write_conf <<EOC
[queue default]
[handler echo]
exec = /bin/true
[schedule ini1]
cron = 0 * * * *
type = echo
EOC
out=$(jq_ check 2>&1; echo "rc=$?")
like "$out" "database schedule 'db2': .*gone.*it never fires" "item 11: a database schedule whose handler left the INI: check says so"
like "$out" "rc=78" "item 11: ... and exits 78"
finish
