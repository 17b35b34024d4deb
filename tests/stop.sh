#!/bin/bash
# Stopping a worker, in both reservation modes.
#  - A first SIGTERM takes no new job, lets the running one (2 s) finish
#    and record 'done', then exits 0.
#  - A second SIGTERM during that graceful stop terminates the running
#    handlers (SIGTERM to their group, SIGKILL after kill_grace for one
#    that ignores SIGTERM) and hands their jobs straight back: the worker
#    exits within kill_grace and a few seconds, the jobs are ready at
#    once with their attempt count as before the run (not charged), and
#    their runs say 'interrupted'.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
setup stop

GRACE=2 # kill_grace, seconds

ms() { echo $(($(date +%s%N) / 1000000)); }

# Waits up to $1 seconds until file $2 has $3 lines starting with $4.
wait_lines() {
	local i=0
	while [ "$(grep -c "^$4" "$2")" -lt "$3" ]; do
		i=$((i + 1))
		[ $i -le $(($1 * 10)) ] || { waited_out "$1" "wait_lines $*"; return 1; }
		sleep 0.1
	done
}

ins() {
	sql "INSERT INTO jobs (queue, type, payload, available_at, attempts) VALUES ('default', '$1', '{}', UTC_TIMESTAMP(6), $2); SELECT LAST_INSERT_ID()"
}

for mode in skip-locked update; do
	empty_tables
	runs=$T/runs.$mode
	: >"$runs"
	write_conf <<EOC
[worker]
poll_interval = 50ms
reserve_mode = $mode
reserve_ttl = 10s

[queue default]

[handler short]
exec = $top_srcdir/tests/scale/nap.sh 2 $runs
max_attempts = 5

[handler long]
exec = $top_srcdir/tests/scale/nap.sh 30 $runs
kill_grace = ${GRACE}s
max_attempts = 5

[handler stubborn]
exec = $top_srcdir/tests/scale/nap.sh 30 $runs ignore-term
kill_grace = ${GRACE}s
max_attempts = 5
EOC

	# ---- one SIGTERM: the running job finishes, no new one starts ----
	first=$(ins short 0)
	second=$(ins short 0)
	start_worker --concurrency 1
	w=$WORKER_PID
	wait_lines 30 "$runs" 1 "start $first "
	ok $? "[$mode] graceful: the worker started job $first"
	kill -TERM $w
	sleep 0.5
	kill -0 $w 2>/dev/null
	ok $? "[$mode] graceful: after SIGTERM the worker waits for its running handler"
	wait_exit 30 $w
	is "$?" 0 "[$mode] graceful: then exits 0"
	is "$(grep -c "^end $first " "$runs")" 1 "[$mode] graceful: the handler ran to its end"
	is "$(sql "SELECT CONCAT_WS(' ', COUNT(*), MIN(outcome)) FROM job_runs WHERE job_id = $first")" "1 done" \
		"[$mode] graceful: its run is recorded as done"
	is "$(sql "SELECT COUNT(*) FROM jobs WHERE id = $first")" 0 "[$mode] graceful: and the job is gone"
	is "$(sql "SELECT CONCAT_WS(' ', attempts, lease_token IS NULL) FROM jobs WHERE id = $second")" "0 1" \
		"[$mode] graceful: the next job was not taken"
	is "$(sql "SELECT COUNT(*) FROM jobq_workers")" 0 "[$mode] graceful: the worker unregistered"

	# ---- two SIGTERMs: handlers terminated, jobs handed back ----
	sql "DELETE FROM jobs; DELETE FROM job_runs"
	: >"$runs"
	# Each job had one attempt before (a retry), so a charged run would
	# leave attempts at 2.
	j1=$(ins long 1)
	j2=$(ins stubborn 1)
	start_worker --concurrency 2
	w=$WORKER_PID
	wait_lines 30 "$runs" 2 "start "
	ok $? "[$mode] hard stop: both handlers are running"
	is "$(sql "SELECT GROUP_CONCAT(attempts ORDER BY id) FROM jobs")" "2,2" \
		"[$mode] hard stop: each reservation counted an attempt"
	kill -TERM $w
	sleep 1
	kill -0 $w 2>/dev/null
	ok $? "[$mode] hard stop: the first SIGTERM leaves the 30 s handlers running"
	t0=$(ms)
	kill -TERM $w
	wait_exit $((GRACE + 30)) $w
	st=$?
	elapsed=$(($(ms) - t0))
	ok $([ $st != 124 ] && [ $elapsed -lt $(((GRACE + 3) * 1000)) ]; echo $?) \
		"[$mode] hard stop: the second SIGTERM ends the worker within kill_grace + 3 s (${elapsed} ms, status $st)"
	ok $([ $elapsed -ge $((GRACE * 1000 - 200)) ]; echo $?) \
		"[$mode] hard stop: after waiting out kill_grace for the handler that ignores SIGTERM"
	now=$(sql "SELECT GROUP_CONCAT(CONCAT_WS(' ', id, attempts, lease_token IS NULL, reserved_by IS NULL,
		available_at <= UTC_TIMESTAMP(6)) ORDER BY id) FROM jobs")
	is "$now" "$j1 1 1 1 1,$j2 1 1 1 1" \
		"[$mode] hard stop: both jobs are ready again at once, attempts back to 1, no lease"
	is "$(sql "SELECT GROUP_CONCAT(CONCAT_WS(' ', job_id, attempt, outcome) ORDER BY job_id) FROM job_runs")" \
		"$j1 2 interrupted,$j2 2 interrupted" "[$mode] hard stop: their runs are recorded as interrupted"
	is "$(grep -c '^end ' "$runs")" 0 "[$mode] hard stop: neither handler ran to its end"
	alive=0
	for pid in $(awk '/^start /{ print $4 }' "$runs"); do
		kill -0 "$pid" 2>/dev/null && alive=$((alive + 1))
	done
	is "$alive" 0 "[$mode] hard stop: both handler processes are gone (the stubborn one killed)"
	is "$(sql "SELECT COUNT(*) FROM jobq_workers")" 0 "[$mode] hard stop: the worker unregistered"
	sql "DELETE FROM jobs"
done
# Under --enable-sanitizers a report goes to the worker's stderr, whatever
# its exit status says.
is "$(grep -l -e 'Sanitizer' -e 'runtime error:' "$T"/worker.*.log | wc -l)" 0 \
	"no worker log holds a sanitizer report"
finish
