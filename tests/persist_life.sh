#!/bin/bash
# Persistent handlers: the life of their processes.  A job over its
# timeout kills its process and a fresh one takes the next job; output
# is bounded per job as in exec mode; a process is recycled after
# max_jobs jobs and when its memory passes max_memory; garbage on
# descriptor 3 is a protocol violation that fails the job with a clear
# error and replaces the process; an idle process that dies is replaced;
# idle_timeout stops idle processes; none outlives the worker.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
setup persist_life
TH=$top_srcdir/tests/handlers

# The pid the handler printed for job $1.
pid_of() {
	sql "SELECT output FROM job_runs WHERE job_id = $1" | grep -o 'pid=[0-9]*' | head -n 1 | cut -d= -f2
}
run_of() {
	sql "SELECT CONCAT_WS('|', outcome, exit_status) FROM job_runs WHERE job_id = $1 ORDER BY id"
}

write_conf <<EOC
[worker]
poll_interval = 20ms
backoff = exponential 30s 4m
backoff_jitter = 0

[queue default]

[handler x]
exec = $TH/persist_raw.py
mode = persistent
timeout = 2s
kill_grace = 1s
max_jobs = 3
stdout_limit = 4K
stderr_limit = 4K

[handler m]
exec = $TH/persist_raw.py
mode = persistent
max_memory = 64M
EOC
j1=$(jq_ enqueue x '{"pid":true}')
j2=$(jq_ enqueue x '{"pid":true,"sleep":60}')
j3=$(jq_ enqueue x '{"pid":true}')
j4=$(jq_ enqueue x '{"pid":true,"bigout":1000000,"bigerr":1000000}')
j5=$(jq_ enqueue x '{"pid":true}')
j6=$(jq_ enqueue x '{"pid":true}')
j7=$(jq_ enqueue x '{"pid":true,"garbage":"this is not json\n"}')
j8=$(jq_ enqueue x '{"pid":true,"twice":true}')
j9=$(jq_ enqueue x '{"pid":true}')
m1=$(jq_ enqueue m '{"pid":true}')
m2=$(jq_ enqueue m '{"pid":true,"mem":100}')
m3=$(jq_ enqueue m '{"pid":true}')

log=$T/work.log
timeout 120 "$JOBQ" -c "$CONF" work --stop-when-empty --concurrency 1 -v 2>"$log"
is "$?" 0 "the worker exits 0"
is "$(run_of "$j1")" "done|exit 0" "job 1: done"
like "$(run_of "$j2")" "^retry\\|timed out after 2s$" "a job over its timeout: killed, retried"
d=$(sql "SELECT duration_ms FROM job_runs WHERE job_id = $j2")
ok $([ "$d" -ge 1900 ] && [ "$d" -lt $((20000 * TIME_SCALE)) ]; echo $?) "the timeout stopped it after ~2s (${d}ms)"
is "$(pid_of "$j2")" "$(pid_of "$j1")" "the job that timed out ran in the warm process"
is "$(run_of "$j3")" "done|exit 0" "the job after the timeout: done"
ok $([ -n "$(pid_of "$j3")" ] && [ "$(pid_of "$j3")" != "$(pid_of "$j2")" ]; echo $?) \
	"the job after the timeout ran in a fresh process ($(pid_of "$j2") -> $(pid_of "$j3"))"
is "$(run_of "$j4")" "done|exit 0" "1 MB to stdout and stderr: done"
is "$(pid_of "$j4")" "$(pid_of "$j3")" "the big-output job ran in the same process"
ok $([ "$(sql "SELECT LENGTH(output) <= 8192 AND LENGTH(error) <= 8192 AND LENGTH(output) > 1000 FROM job_runs WHERE job_id = $j4")" = 1 ]; echo $?) \
	"its stdout and stderr are kept within the limits ($(sql "SELECT CONCAT(LENGTH(output), '/', LENGTH(error)) FROM job_runs WHERE job_id = $j4") bytes)"
is "$(pid_of "$j5")" "$(pid_of "$j3")" "the third job of a process (max_jobs = 3) ran in it"
ok $([ -n "$(pid_of "$j6")" ] && [ "$(pid_of "$j6")" != "$(pid_of "$j5")" ]; echo $?) \
	"after max_jobs = 3 jobs the process was recycled ($(pid_of "$j5") -> $(pid_of "$j6"))"
like "$(grep "recycled after 3 jobs" "$log")" "persistent handler 'x' \\(pid $(pid_of "$j5")\\) is recycled after 3 jobs \\(max_jobs\\)" \
	"the recycling is logged"
is "$(run_of "$j7")" "retry|protocol violation" "garbage on descriptor 3: a handler failure, retried"
like "$(sql "SELECT last_error FROM jobs WHERE id = $j7")" \
	"^\\[protocol violation\\] .*jobq: protocol violation by persistent handler \\(pid [0-9]+\\): descriptor 3 got a line that is not a JSON object or a valid status line: 'this is not json'" \
	"garbage on descriptor 3: the error says so and quotes it"
like "$(grep "protocol violation" "$log")" "warn.*protocol violation.*killing it" "the violation is logged"
is "$(run_of "$j8")" "done|exit 0" "a status line written twice: the job stands"
ok $([ "$(pid_of "$j8")" != "$(pid_of "$j7")" ] && [ "$(pid_of "$j9")" != "$(pid_of "$j8")" ]; echo $?) \
	"after garbage and after a second status line the process is replaced"
is "$(run_of "$j9")" "done|exit 0" "the job after those: done"
is "$(pid_of "$m2")" "$(pid_of "$m1")" "max_memory: a process under it takes the next job"
ok $([ -n "$(pid_of "$m3")" ] && [ "$(pid_of "$m3")" != "$(pid_of "$m2")" ]; echo $?) \
	"max_memory = 64M: after a job that left 100 MB resident the process was recycled"
like "$(grep "max_memory" "$log")" "persistent handler 'm' \\(pid $(pid_of "$m2")\\) is recycled: resident memory [0-9]+ KiB is over max_memory \\(65536 KiB\\)" \
	"the memory recycling is logged"
alive=0
for j in $j1 $j3 $j6 $j8 $j9 $m1 $m3; do
	p=$(pid_of "$j")
	[ -n "$p" ] && kill -0 "$p" 2>/dev/null && alive=$((alive + 1))
done
is "$alive" 0 "no handler process outlives the worker"
ok $(grep -qE 'Sanitizer|runtime error' "$log"; [ $? = 1 ]; echo $?) "no sanitizer report in the worker log"

# A worker that stays up: an idle process killed from outside is
# replaced at the next job; idle_timeout stops an idle process.
empty_tables
write_conf <<EOC
[worker]
poll_interval = 20ms

[queue default]

[handler i]
exec = $TH/persist_raw.py
mode = persistent
idle_timeout = 2s
EOC
start_worker --concurrency 2
i1=$(jq_ enqueue i '{"pid":true}')
wait_for_sql 30 "SELECT COUNT(*) FROM job_runs WHERE job_id = $i1" 1
p1=$(pid_of "$i1")
kill -KILL "$p1"
sleep 0.5
i2=$(jq_ enqueue i '{"pid":true}')
wait_for_sql 30 "SELECT COUNT(*) FROM job_runs WHERE job_id = $i2" 1
p2=$(pid_of "$i2")
is "$(run_of "$i2")" "done|exit 0" "after its idle process was killed, the next job is done"
ok $([ -n "$p2" ] && [ "$p2" != "$p1" ]; echo $?) "in a new process ($p1 -> $p2)"
like "$(grep "ended between jobs" "$T/worker.0.log")" "persistent handler 'i' \\(pid $p1\\) ended between jobs \\(killed by signal 9\\)" \
	"the death of an idle process is logged"
i=0
while kill -0 "$p2" 2>/dev/null && [ $i -lt $((100 * TIME_SCALE)) ]; do
	sleep 0.1
	i=$((i + 1))
done
ok $(! kill -0 "$p2" 2>/dev/null; echo $?) "idle_timeout = 2s: the idle process is stopped (after $((i / 10))s)"
i3=$(jq_ enqueue i '{"pid":true}')
wait_for_sql 30 "SELECT COUNT(*) FROM job_runs WHERE job_id = $i3" 1
is "$(run_of "$i3")" "done|exit 0" "after idle_timeout a new process takes the next job"
p3=$(pid_of "$i3")
kill -TERM "$WORKER_PID"
wait_exit 30 "$WORKER_PID"
is "$?" 0 "the worker exits 0 on SIGTERM"
ok $(! kill -0 "$p3" 2>/dev/null; echo $?) "its idle process is stopped with it"
# A hard stop (two SIGTERMs) during a persistent job: its process is
# terminated and the job handed back without charging the attempt.
empty_tables
start_worker --concurrency 1
h1=$(jq_ enqueue i '{"pid":true,"sleep":60}')
wait_for_sql 30 "SELECT COUNT(*) FROM jobs WHERE id = $h1 AND attempts = 1 AND lease_token IS NOT NULL" 1
sleep 1
hp=$(pgrep -f "$TH/persist_raw.py" -P "$WORKER_PID" | head -n 1)
kill -TERM "$WORKER_PID"
sleep 0.5
kill -TERM "$WORKER_PID"
wait_exit 30 "$WORKER_PID"
is "$?" 0 "hard stop: the worker exits 0"
is "$(sql "SELECT CONCAT_WS(' ', attempts, lease_token IS NULL) FROM jobs WHERE id = $h1")" "0 1" \
	"hard stop: the job is handed back, its attempt refunded"
ok $([ -n "$hp" ] && ! kill -0 "$hp" 2>/dev/null; echo $?) "hard stop: its process ($hp) is gone"
finish
