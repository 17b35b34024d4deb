#!/bin/bash
# Exactly once on a 3-node Galera cluster: 2 workers per node at
# concurrency 4 drain a backlog, every job runs once (none lost, none
# twice), in both documented topologies: (a) every worker writes through
# node 1, the others standing by (the same host list everywhere), and
# (b) the workers spread over the three nodes (each list starts at its
# own node); the job counts kept by triggers end at zero.  10,000 jobs
# per topology, a quarter under sanitizers (GALERA_JOBS=N to change it);
# about 20 s each on two cores.
. "$top_srcdir/tests/galera_lib.sh"
galera_setup galera_exactly_once 24600

N=${GALERA_JOBS:-$(volume 10000)}
ran=$T/ran
for i in 1 2 3; do
	gconf "$T/n$i.ini" "$(ring $i)" <<EOC
[worker]
poll_interval = 50ms
reserve_ttl = 60s

[queue default]

[handler once]
exec = /bin/sh -c 'echo \$JOBQ_JOB_ID >>$ran'
EOC
done
"$JOBQ" -c "$T/n1.ini" init >/dev/null
ok $? "jobq init on the cluster"

for topo in one spread; do
	: >"$ran"
	seq 1 "$N" | awk '{ printf "{\"type\": \"once\", \"payload\": {\"n\": %d}}\n", $1 }' |
		"$JOBQ" -c "$T/n1.ini" enqueue --batch >/dev/null
	is "$(gsql 2 "SELECT COUNT(*) FROM jobs")" "$N" "[$topo] $N jobs enqueued (seen from node 2)"
	gsql 1 "SELECT id FROM jobs ORDER BY id" >"$T/ids"
	started=$SECONDS
	pids=()
	logs=()
	for w in 1 2 3 4 5 6; do
		if [ $topo = one ]; then c=$T/n1.ini; else c=$T/n$(((w - 1) % 3 + 1)).ini; fi
		logs+=("$T/worker.${#BG_PIDS[@]}.log")
		start_worker_conf "$c" --concurrency 4 --stop-when-empty
		pids+=("$WORKER_PID")
	done
	bad=0
	for p in "${pids[@]}"; do
		wait_exit 300 "$p" || bad=$((bad + 1))
	done
	is "$bad" 0 "[$topo] 6 workers drained the queue and exited 0"
	diag "[$topo] $N jobs in $((SECONDS - started)) s"
	is "$(gsql 3 "SELECT COUNT(*) FROM jobs")" 0 "[$topo] the jobs table is empty"
	# The counting triggers (sql/010-counts.sql) ran on every node that
	# wrote, each in its own band of shard rows.
	is "$(gsql 2 "SELECT COALESCE(SUM(jobs), 0) FROM jobq_counts")" 0 "[$topo] and the job counts say so"
	[ $topo = spread ] && is "$(gsql 1 "SELECT COUNT(DISTINCT shard DIV 64) FROM jobq_counts WHERE shard > 0")" 3 \
		"[$topo] the three nodes counted in three bands of shard rows"
	is "$(gsql 1 "SELECT COUNT(*) FROM failed_jobs")" 0 "[$topo] nothing was dead-lettered"
	is "$(wc -l <"$ran")" "$N" "[$topo] the handlers ran $N times"
	is "$(sort "$ran" | uniq -d | head -5 | tr '\n' ' ')" "" "[$topo] no job ran twice"
	sort -n "$ran" | cmp -s - "$T/ids"
	ok $? "[$topo] the ids that ran are exactly the ids enqueued"
	is "$(gsql 2 "SELECT CONCAT_WS(' ', COUNT(*), SUM(outcome = 'done'), COUNT(DISTINCT job_id), SUM(attempt = 1))
		FROM job_runs")" "$N $N $N $N" "[$topo] job_runs: one 'done' run per job, all on attempt 1"
	is "$(grep -h ' lease lost ' "${logs[@]}" | head -3)" "" "[$topo] no worker lost a lease"
	# A claim that lost certification on every rerun claimed nothing: it
	# is contention, logged at debug, not an error.
	is "$(grep -hE '^[^ ]+ error ' "${logs[@]}" | head -3)" "" "[$topo] no worker logged an error"
	gsql 1 "DELETE FROM job_runs"
done
# Under --enable-sanitizers a report goes to the worker's stderr.
is "$(grep -l -e 'Sanitizer' -e 'runtime error:' "$T"/worker.*.log | wc -l)" 0 \
	"no worker log holds a sanitizer report"
finish
