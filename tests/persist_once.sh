#!/bin/bash
# Persistent handlers, exactly once with several processes: two workers
# with concurrency 4 each run 500 jobs through long-lived Python
# processes (the helper module); every job runs once, in at most 8
# processes, and every job is recorded done once.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
setup persist_once
TH=$top_srcdir/tests/handlers
N=500

write_conf <<EOC
[worker]
poll_interval = 20ms

[queue default]

[handler p]
exec = $TH/persist_append.py
mode = persistent
env.PYTHONPATH = $HANDLERS
env.PYTHONDONTWRITEBYTECODE = 1
env.RAN = $T/ran.txt
EOC
seq 1 $N | sed 's/.*/{"type": "p", "payload": {"n": &}}/' | jq_ enqueue --batch >/dev/null
is "$(sql "SELECT COUNT(*) FROM jobs")" $N "$N jobs enqueued"
start_worker --concurrency 4 --stop-when-empty
w1=$WORKER_PID
start_worker --concurrency 4 --stop-when-empty
w2=$WORKER_PID
wait_exit $((120 * TIME_SCALE)) "$w1"
is "$?" 0 "worker 1 exits 0"
wait_exit $((120 * TIME_SCALE)) "$w2"
is "$?" 0 "worker 2 exits 0"
is "$(sql "SELECT COUNT(*) FROM jobs")" 0 "no job is left"
is "$(sql "SELECT COUNT(*), COUNT(DISTINCT job_id), SUM(outcome = 'done') FROM job_runs")" "$N	$N	$N" \
	"$N runs, one per job, all done"
is "$(wc -l <"$T/ran.txt")" $N "the handlers ran $N times"
is "$(cut -d' ' -f1 "$T/ran.txt" | sort -u | wc -l)" $N "each job ran exactly once"
np=$(cut -d' ' -f2 "$T/ran.txt" | sort -u | wc -l)
ok $([ "$np" -ge 2 ] && [ "$np" -le 8 ]; echo $?) "in 2 to 8 long-lived processes (got $np)"
alive=0
for p in $(cut -d' ' -f2 "$T/ran.txt" | sort -u); do
	kill -0 "$p" 2>/dev/null && alive=$((alive + 1))
done
is "$alive" 0 "no handler process outlives its worker"
ok $(cat "$T"/worker.*.log | grep -qE 'Sanitizer|runtime error'; [ $? = 1 ]; echo $?) "no sanitizer report"
finish
