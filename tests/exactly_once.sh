#!/bin/bash
# Many workers, one backlog: four `jobq work` processes with four slots
# each drain it, and every job runs exactly once (no job skipped, none run
# twice), in both reservation modes.  The handler appends its job id to a
# file with one short O_APPEND write, so the file is the handlers' own
# record, independent of the run history the worker writes.
. "$top_srcdir/tests/lib.sh"
one_build normal "a volume test"
setup exactly_once

WORKERS=4
CONC=4
N=$(volume 10000) # a quarter under sanitizers

for mode in skip-locked update; do
	empty_tables
	ran=$T/ran.$mode
	: >"$ran"
	write_conf <<EOC
[worker]
poll_interval = 50ms
reserve_mode = $mode
reserve_ttl = 60s

[queue default]

[handler once]
exec = /bin/sh -c 'echo \$JOBQ_JOB_ID >>$ran'
EOC
	seq 1 $N | awk '{ printf "{\"type\": \"once\", \"payload\": {\"n\": %d}}\n", $1 }' |
		jq_ enqueue --batch >/dev/null
	is "$(sql "SELECT COUNT(*) FROM jobs")" "$N" "[$mode] $N jobs enqueued"
	sql "SELECT id FROM jobs ORDER BY id" >"$T/ids.$mode"

	started=$SECONDS
	pids=()
	logs=()
	for i in $(seq $WORKERS); do
		logs+=("$T/worker.${#BG_PIDS[@]}.log")
		start_worker --concurrency $CONC --stop-when-empty
		pids+=("$WORKER_PID")
	done
	bad=0
	for i in "${!pids[@]}"; do
		wait_exit 600 "${pids[$i]}"
		st=$?
		if [ "$st" != 0 ]; then
			bad=$((bad + 1))
			diag "worker ${pids[$i]} ended with status $st; log ${logs[$i]}"
		fi
	done
	is "$bad" 0 "[$mode] the $WORKERS workers drained the queue and exited 0"
	diag "[$mode] $N jobs in $((SECONDS - started)) s by $WORKERS workers x $CONC slots"

	is "$(sql "SELECT COUNT(*) FROM jobs")" 0 "[$mode] the jobs table is empty"
	is "$(sql "SELECT COUNT(*) FROM failed_jobs")" 0 "[$mode] nothing was dead-lettered"
	is "$(wc -l <"$ran")" "$N" "[$mode] the handlers ran $N times"
	is "$(sort -u "$ran" | wc -l)" "$N" "[$mode] for $N distinct jobs"
	dups=$(sort "$ran" | uniq -d | head -5 | tr '\n' ' ')
	is "$dups" "" "[$mode] no job ran twice"
	sort -n "$ran" | cmp -s - "$T/ids.$mode"
	ok $? "[$mode] the ids that ran are exactly the ids enqueued"
	is "$(sql "SELECT CONCAT_WS(' ', COUNT(*), SUM(outcome = 'done'), COUNT(DISTINCT job_id), SUM(attempt = 1)) FROM job_runs")" \
		"$N $N $N $N" "[$mode] job_runs: $N rows, all 'done', one per job, all on attempt 1"
	is "$(sql "SELECT COUNT(*) FROM jobq_workers")" 0 "[$mode] every worker unregistered at exit"

	problems=$(grep -hE '^[^ ]+ (error|warn) ' "${logs[@]}" | head -5)
	is "$problems" "" "[$mode] no worker logged an error or a warning"
	for i in "${!pids[@]}"; do
		diag "[$mode] worker ${pids[$i]}: $(grep -c ' outcome=done ' "${logs[$i]}") jobs"
	done
	busy=0
	for l in "${logs[@]}"; do
		[ "$(grep -c ' outcome=done ' "$l")" -gt 0 ] && busy=$((busy + 1))
	done
	ok $([ $busy -ge 2 ]; echo $?) "[$mode] the work was shared ($busy of $WORKERS workers ran jobs)"
done
# Under --enable-sanitizers a report goes to the worker's stderr, whatever
# its exit status says.
is "$(grep -l -e 'Sanitizer' -e 'runtime error:' "$T"/worker.*.log | wc -l)" 0 \
	"no worker log holds a sanitizer report"
finish
