#!/bin/bash
# A node fails mid-run: 2,000 jobs of about 100 ms on a 3-node cluster,
# two workers per node (each host list starts at its own node); node 3 is
# stopped while they run.  Its workers move to the next host of their
# list, keep their leases and write the outcomes they held; nothing is
# lost, no job runs twice, every job ends done; node 3 rejoins and the
# run goes on.
. "$top_srcdir/tests/galera_lib.sh"
galera_setup galera_failover 24640

N=2000
ran=$T/ran
: >"$ran"
for i in 1 2 3; do
	gconf "$T/n$i.ini" "$(ring $i)" <<EOC
[worker]
poll_interval = 50ms
reserve_ttl = 60s

[queue default]

[handler slow]
exec = /bin/sh -c 'sleep 0.1; echo \$JOBQ_JOB_ID >>$ran'
EOC
done
"$JOBQ" -c "$T/n1.ini" init >/dev/null
seq 1 "$N" | awk '{ printf "{\"type\": \"slow\", \"payload\": {\"n\": %d}}\n", $1 }' |
	"$JOBQ" -c "$T/n1.ini" enqueue --batch >/dev/null
is "$(gsql 1 "SELECT COUNT(*) FROM jobs")" "$N" "$N jobs enqueued"

pids=()
logs=()
for w in 1 2 3 4 5 6; do
	logs+=("$T/worker.${#BG_PIDS[@]}.log")
	start_worker_conf "$T/n$(((w - 1) % 3 + 1)).ini" --concurrency 4 --stop-when-empty
	pids+=("$WORKER_PID")
done
# Node 3's workers are logs 2 and 5 (0-based).
i=0
until [ "$(gsql 1 "SELECT COUNT(*) FROM job_runs")" -ge 300 ] || [ $i -ge 600 ]; do
	sleep 0.1
	i=$((i + 1))
done
before=$(gsql 1 "SELECT COUNT(*) FROM job_runs")
diag "$before jobs done when node 3 stops"
"$CLUSTER_SCRIPT" stop-node "$CLUSTER" 3
ok $? "node 3 stopped mid-run"
sleep 3
"$CLUSTER_SCRIPT" start-node "$CLUSTER" 3 >"$T/rejoin.log" 2>&1
ok $? "node 3 rejoined and is Synced again"
bad=0
for p in "${pids[@]}"; do
	wait_exit 300 "$p" || bad=$((bad + 1))
done
is "$bad" 0 "the 6 workers drained the queue and exited 0"
is "$(gsql 3 "SELECT COUNT(*) FROM jobs")" 0 "the jobs table is empty (seen from the rejoined node 3)"
is "$(gsql 1 "SELECT COUNT(*) FROM failed_jobs")" 0 "nothing was dead-lettered"
is "$(sort -u "$ran" | wc -l)" "$N" "every one of the $N jobs ran"
is "$(sort "$ran" | uniq -d | head -5 | tr '\n' ' ')" "" "no job ran twice"
is "$(gsql 2 "SELECT CONCAT_WS(' ', COUNT(DISTINCT job_id), SUM(outcome = 'done'), SUM(outcome <> 'done'))
	FROM job_runs")" "$N $N 0" "job_runs: every job done once, no other outcome"
moved=0
for l in "${logs[2]}" "${logs[5]}"; do
	grep -q "database connection restored after .* (to $H1)" "$l" && moved=$((moved + 1))
done
is "$moved" 2 "both of node 3's workers moved to node 1, the next host of their list"
is "$(grep -h ' lease lost ' "${logs[@]}" | head -3)" "" "no worker lost a lease"
# Under --enable-sanitizers a report goes to the worker's stderr.
is "$(grep -l -e 'Sanitizer' -e 'runtime error:' "$T"/worker.*.log | wc -l)" 0 \
	"no worker log holds a sanitizer report"
finish
