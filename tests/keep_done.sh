#!/bin/bash
# keep_done (issue 21, item 1): a finished job stays visible as its runs
# for keep_done, then the workers prune it, in chunks, oldest first; the
# runs of a job still queued (retrying) or dead-lettered stay while the
# job does; keep_done = 0 prunes nothing; a bad value is refused with
# file:line.  Jobs run by real handlers in exec and persistent mode.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
. "$top_srcdir/tests/operator/common.sh"
setup keep_done

TH=$top_srcdir/tests/handlers
conf() { # conf KEEP_DONE
	write_conf <<EOC
[worker]
poll_interval = 20ms
keep_done = $1

[queue default]

[handler exec]
exec = $HANDLERS/echo.sh

[handler persist]
exec = $TH/done_py.py
mode = persistent
env.PYTHONPATH = $HANDLERS
env.PYTHONDONTWRITEBYTECODE = 1
EOC
}

# Bad values: one line with file:line, exit 78, nothing started.
for bad in soon 500ms -1s; do
	conf "$bad"
	jq_ check >/dev/null 2>"$T/err"
	st=$?
	is "$st:$(grep -c "jobq.ini:8: keep_done" "$T/err")" "78:1" "keep_done = $bad: refused at jobq.ini:8 ($(head -1 "$T/err"))"
done

conf 0
jq_ init >/dev/null
# Old runs (an hour ago): of a finished job (5001), of a dead-lettered
# job (5002), of a job still retrying (5003), and 2,500 of finished jobs
# (more than two chunks).
old="UTC_TIMESTAMP(6) - INTERVAL 1 HOUR"
plant() {
	sql "INSERT INTO job_runs (job_id, queue, type, attempt, worker, started_at, duration_ms, outcome, exit_status)
	       VALUES (5001, 'default', 'exec', 1, 'w', $old, 1, 'done', 'exit 0'),
	              (5002, 'default', 'exec', 1, 'w', $old, 1, 'dead', 'exit 65'),
	              (5003, 'default', 'exec', 1, 'w', $old, 1, 'retry', 'exit 1');
	     INSERT INTO job_runs (job_id, queue, type, attempt, worker, started_at, duration_ms, outcome, exit_status)
	       SELECT 10000 + seq, 'default', 'exec', 1, 'w', $old - INTERVAL seq SECOND, 1, 'done', 'exit 0'
	       FROM seq_1_to_2500"
}
plant
sql "INSERT INTO failed_jobs (id, queue, type, payload, attempts, exception) VALUES (5002, 'default', 'exec', '{}', 1, 'x');
     INSERT INTO jobs (id, queue, type, payload, available_at, attempts) VALUES (5003, 'default', 'exec', '{}', $old + INTERVAL 2 HOUR, 1)"

# keep_done = 0: a worker running 3 s prunes nothing.
start_worker
sleep 3
kill -TERM "$WORKER_PID"
wait_exit 20 "$WORKER_PID"
is "$(sql "SELECT COUNT(*) FROM job_runs")" 2503 "keep_done = 0: every finished job is kept"

# keep_done = 4s: jobs done by both handler modes are visible, then gone.
conf 4s
a=$(jq_ enqueue exec '{"n": "exec one"}')
b=$(jq_ enqueue persist '{"n": 7, "who": "persistent"}')
start_worker
wait_for_sql 20 "SELECT COUNT(*) FROM job_runs WHERE job_id IN ($a, $b) AND outcome = 'done'" 2
ok $? "the two jobs are done"
jq_ show "$a" >"$T/show" 2>&1
is "$?:$(grep -c '^ *"n": "exec one"$' "$T/show")" "0:1" "jobq show of the done job: its payload, kept"
wait_for_sql 10 "SELECT COUNT(*) FROM job_runs WHERE job_id = 5001 OR job_id > 10000" 0
ok $? "the old finished runs are pruned within seconds, 1,000 a statement (2,501 of them)"
is "$(sql "SELECT GROUP_CONCAT(job_id ORDER BY job_id) FROM job_runs WHERE job_id IN (5002, 5003)")" "5002,5003" \
	"the runs of the dead-lettered job and of the job still retrying stay"
is "$(sql "SELECT COUNT(*) FROM job_runs WHERE job_id IN ($a, $b)")" 2 "the jobs done a moment ago stay"
wait_for_sql 12 "SELECT COUNT(*) FROM job_runs WHERE job_id IN ($a, $b)" 0
ok $? "past keep_done (4s) they are pruned too, both modes"
jq_ show "$a" >/dev/null 2>"$T/err"
is "$?:$(cat "$T/err")" "65:jobq: no job $a (not queued, not dead-lettered, no runs on record)" "jobq show: no such job any more"
kill -TERM "$WORKER_PID"
wait_exit 20 "$WORKER_PID"
is "$?" 0 "the worker stops cleanly"

# A worker that drains and stops at once never prunes: its first pass
# is a quarter of keep_done after its start.
plant
jq_ enqueue exec '{"n": 1}' >/dev/null
jq_ work --stop-when-empty 2>"$T/drain.log"
is "$(sql "SELECT COUNT(*) FROM job_runs WHERE job_id = 5001 OR job_id > 10000")" 2501 "a worker that only drains prunes nothing"

finish
