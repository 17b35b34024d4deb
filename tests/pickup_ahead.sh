#!/bin/bash
# ISSUE 12, item 1: a worker reserves jobs ahead of its free slots
# (reserve_ahead) so that a slot that frees starts the next job without a
# round trip, and holds outcomes a moment so that several share one
# commit.  What must not change: at most `concurrency` handlers run; the
# jobs held ahead are started in the order they were reserved; a stopping
# worker gives them back unstarted with their attempt refunded; every job
# runs exactly once with its run row; and --once and --max take no more
# than they may.  No speed is asserted.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
setup pickup_ahead
TH=$top_srcdir/tests/handlers

conf() { # conf AHEAD
	write_conf <<EOC
[worker]
poll_interval = 20ms
reserve_ahead = $1

[queue default]

[handler nap]
exec = $TH/solo.sh 0.2 $T/solo.lock $T/overlaps

[handler x]
exec = $TH/exitwith.sh
EOC
}
fill() { # fill N TYPE
	sql "SET SESSION max_recursive_iterations = 100000;
	     INSERT INTO jobs (queue, type, payload, priority, available_at)
	     WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < $1)
	     SELECT 'default', '$2', CONCAT('{\"out\": \"j', n, '\"}'), -n, UTC_TIMESTAMP(6) FROM s"
}

# --- held ahead, given back on stop ---
conf 4
# 60 jobs of 0.2 s: the check below comes long before the last one even
# on a loaded machine.
fill 60 nap
start_worker -j 1
wait_for_sql 30 "SELECT COUNT(*) >= 2 FROM job_runs" 1 || diag "no runs yet"
held=$(sql "SELECT COUNT(*) FROM jobs WHERE lease_token IS NOT NULL")
ok $([ "$held" -ge 2 ] && [ "$held" -le 5 ] && echo 0 || echo 1) \
	"concurrency 1, reserve_ahead 4: the worker holds 2 to 5 jobs (1 running, the rest ahead): $held"
# Its registry row (jobq workers' RUNNING) lists the job it runs (and at
# most one whose outcome it is writing), not those it holds ahead.
wait_for_sql 30 "SELECT current_jobs <> '' FROM jobq_workers" 1
running=$(sql "SELECT current_jobs FROM jobq_workers")
ok $([ "$(echo "$running" | tr ',' '\n' | grep -c .)" -le 2 ] && echo 0 || echo 1) \
	"jobq workers lists the job running, not those held ahead: $running"
kill -TERM "$WORKER_PID"
wait_exit 30 "$WORKER_PID"
is "$?" "0" "SIGTERM: the worker finishes its running job and exits 0"
runs=$(sql "SELECT COUNT(*) FROM job_runs")
is "$(sql "SELECT COUNT(*) FROM jobs WHERE lease_token IS NOT NULL OR reserved_by IS NOT NULL")" "0" \
	"the jobs held ahead were given back"
is "$(sql "SELECT COUNT(*) FROM jobs WHERE attempts <> 0")" "0" "unstarted, with their attempt refunded"
is "$(sql "SELECT COUNT(*) FROM jobs")" "$((60 - runs))" "every job either ran (its run row written: $runs) or is back"
is "$(sql "SELECT COUNT(*) FROM job_runs WHERE outcome <> 'done'")" "0" "and every run is done"

# --- the rest, in order, at most one at a time, each once ---
jq_ work -j 1 --stop-when-empty 2>"$T/drain.log"
is "$?" "0" "a second worker drains the rest"
is "$(sql "SELECT COUNT(*) FROM job_runs")" "60" "60 runs for 60 jobs"
is "$(sql "SELECT COUNT(DISTINCT job_id) FROM job_runs")" "60" "each job ran once"
# The handler itself holds a lock while it lives: exact, whatever the load.
is "$(cat "$T/overlaps" 2>/dev/null)" "" "concurrency 1: no two handlers ran at the same time"
# A run's started_at is its claim's database time moved on by how long
# the job then waited held ahead, so it trails the true start by that
# claim's commit and answer (tens of milliseconds, more under ASan on a
# loaded machine): two runs of different claims can seem to overlap by
# the difference, at most once per claim (12 to 15 claims here).  Were
# it the claim's time, not moved, every job held ahead would seem to
# overlap the ones before it: far more than 30 pairs.
overlap=$(sql "SELECT COUNT(*) FROM job_runs a JOIN job_runs b ON a.id < b.id
	AND b.started_at < a.started_at + INTERVAL a.duration_ms * 1000 - 50000 MICROSECOND
	AND a.started_at < b.started_at + INTERVAL b.duration_ms * 1000 - 50000 MICROSECOND")
ok $([ "$overlap" -lt 30 ] && echo 0 || echo 1) \
	"started_at counts from the start, not the claim: under 30 pairs of runs seem to overlap by over 50 ms: $overlap"

# --- short jobs, auto: order kept among the jobs held ahead ---
empty_tables
conf auto
fill 40 x
jq_ work -j 1 --stop-when-empty 2>"$T/auto.log"
is "$?" "0" "reserve_ahead auto drains 40 short jobs"
want=$(seq -s ' ' 40 -1 1 | sed -E 's/([0-9]+)/j\1/g')
is "$(sql "SELECT GROUP_CONCAT(TRIM(TRAILING '\n' FROM output) ORDER BY id SEPARATOR ' ') FROM job_runs")" "$want" \
	"one worker at concurrency 1 ran them in priority order, those held ahead included"

# --- --once and --max never take more ---
empty_tables
fill 30 x
jq_ work -j 4 --once 2>"$T/once.log"
is "$(sql "SELECT COUNT(*) FROM job_runs")" "1" "--once with reserve_ahead: one job"
is "$(sql "SELECT COUNT(*) FROM jobs WHERE attempts <> 0 OR lease_token IS NOT NULL")" "0" "and no other job touched"
jq_ work -j 2 --max 5 2>"$T/max.log"
is "$(sql "SELECT COUNT(*) FROM job_runs")" "6" "--max 5: five more"
is "$(sql "SELECT COUNT(*) FROM jobs WHERE attempts <> 0 OR lease_token IS NOT NULL")" "0" "and no other job touched"

# --- a stop while the database is answering ---
# The worker serves its handlers while a statement is in flight (see
# poll_db_wait in worker_poll.c), so a SIGTERM can arrive in the middle of
# a claim: the jobs that claim brings must be given back too, or the
# worker would wait for them forever.
write_conf <<EOC
[worker]
poll_interval = 20ms

[queue default]

[handler t]
exec = /bin/true
EOC
empty_tables
fill 4000 t
stuck=0 bad=0
# SIGTERM is caught (or held until it is) from the start of `jobq work`;
# the loader's time before that, long on a loaded machine, is not ours.
stop_handled() {
	local blk cgt
	blk=$(sed -n 's/^SigBlk:\t//p' "/proc/$1/status" 2>/dev/null)
	cgt=$(sed -n 's/^SigCgt:\t//p' "/proc/$1/status" 2>/dev/null)
	[ -n "$blk" ] && (((0x$blk | 0x$cgt) & 0x4000))
}
for i in $(seq 1 12); do
	start_worker -j 4
	for ((k = 0; k < 200; k++)); do stop_handled "$WORKER_PID" && break; sleep 0.01; done
	sleep "0.$((RANDOM % 5 + 1))"
	kill -TERM "$WORKER_PID"
	wait_exit 15 "$WORKER_PID"
	rc=$?
	if [ "$rc" = 124 ]; then
		stuck=$((stuck + 1))
		kill -KILL "$WORKER_PID"
		wait "$WORKER_PID"
	elif [ "$rc" != 0 ]; then
		bad=$((bad + 1))
		diag "worker $WORKER_PID exited $rc: $(tail -2 "$T/worker.$((${#BG_PIDS[@]} - 1)).log")"
	fi
done
is "$stuck" 0 "12 SIGTERMs at random moments of a busy worker: none hung"
is "$bad" 0 "each worker exited 0"
is "$(sql "SELECT COUNT(*) FROM jobs WHERE lease_token IS NOT NULL")" 0 "no job is left held"
is "$(sql "SELECT (SELECT COUNT(*) FROM jobs) + (SELECT COUNT(*) FROM job_runs WHERE outcome = 'done')")" 4000 \
	"every job ran once (a done run row) or is queued"
is "$(sql "SELECT COUNT(*) FROM (SELECT job_id FROM job_runs GROUP BY job_id HAVING COUNT(*) > 1) d")" 0 "none ran twice"

# --- bad values ---
conf 2000
out=$(jq_ check 2>&1)
is "$?" "78" "reserve_ahead over 1024 is a configuration error"
like "$out" "reserve_ahead" "naming the key"
finish
