#!/bin/bash
# Flow control, cancel and workflows with workers through three Galera
# nodes, and a node killed (SIGKILL, a crash) mid-run:
#   - a unique key enqueued through two nodes at once gives one job, and
#     both commands print its id;
#   - max_running = 2 is never exceeded by workers through three nodes;
#   - a cancel through node 1 stops a job running through node 3;
#   - node 3 killed while its workers write outcomes: they move to the
#     next host, every job (plain, in a group, waiting --after two) runs
#     once, each group's callback runs once, each waiting job once.
. "$top_srcdir/tests/galera_lib.sh"
galera_setup galera_audit_flow 25000

ran=$T/ran
lim=$T/lim
log=$T/log
: >"$ran"
: >"$lim"
: >"$log"
for i in 1 2 3; do
	gconf "$T/n$i.ini" "$(ring $i)" <<EOC
[worker]
poll_interval = 20ms
reserve_ttl = 60s

[queue default]

[handler once]
exec = /bin/sh -c 'echo \$JOBQ_JOB_ID >>$ran'

[handler note]
exec = /bin/sh -c 'echo "\$(cat)" >>$log; echo \$JOBQ_JOB_ID >>$ran'

[handler lim]
exec = /bin/sh -c 'echo + >>$lim; sleep 0.2; echo - >>$lim'
max_running = 2

[handler slow]
exec = /bin/sh -c 'echo \$\$ >$T/slow.pid; exec sleep 60'
EOC
done
"$JOBQ" -c "$T/n1.ini" init >/dev/null
ok $? "jobq init on the cluster"

# Unique keys.
U=20
bad=0
for ((k = 1; k <= U; k++)); do
	"$JOBQ" -c "$T/n1.ini" enqueue --unique-key "k$k" once '{}' >"$T/u1" 2>/dev/null &
	a=$!
	"$JOBQ" -c "$T/n2.ini" enqueue --unique-key "k$k" once '{}' >"$T/u2" 2>/dev/null &
	b=$!
	wait $a
	r1=$?
	wait $b
	r2=$?
	[ "$r1:$r2" = 0:0 ] && [ -s "$T/u1" ] && cmp -s "$T/u1" "$T/u2" || bad=$((bad + 1))
done
is "$bad" 0 "$U unique keys, each enqueued through two nodes at once: both exit 0 and print the same id"
is "$(gsql 3 "SELECT CONCAT(COUNT(*), ' ', COUNT(DISTINCT unique_key)) FROM jobs")" "$U $U" "one job per key"
gsql 1 "DELETE FROM jobs"

# max_running across three nodes.
seq 1 40 | awk '{ print "{\"type\": \"lim\", \"payload\": {}}" }' | "$JOBQ" -c "$T/n1.ini" enqueue --batch >/dev/null
pids=()
for i in 1 2 3; do
	start_worker_conf "$T/n$i.ini" --concurrency 3 --stop-when-empty
	pids+=("$WORKER_PID")
done
bad=0
for p in "${pids[@]}"; do
	wait_exit 120 "$p" || bad=$((bad + 1))
done
is "$bad" 0 "workers through three nodes ran 40 jobs of a type with max_running = 2"
is "$(awk '{ c += ($1 == "+") ? 1 : -1; if (c > m) m = c } END { print m, NR }' "$lim")" "2 80" \
	"never more than 2 ran at once (and 2 did)"

# A cancel through node 1 of a job running through node 3.
start_worker_conf "$T/n3.ini"
wp=$WORKER_PID
id=$("$JOBQ" -c "$T/n1.ini" enqueue slow '{}')
for ((i = 0; i < 100; i++)); do
	[ "$(gsql 1 "SELECT COUNT(*) FROM jobs WHERE id = $id AND lease_token IS NOT NULL")" = 1 ] && break
	sleep 0.1
done
timeout 20 "$JOBQ" -c "$T/n1.ini" cancel "$id" >"$T/cancel.out" 2>&1
is "$?" 0 "jobq cancel through node 1 of a job running through node 3 exits 0"
is "$(gsql 2 "SELECT outcome FROM job_runs WHERE job_id = $id")" cancelled "its run ended cancelled"
for ((i = 0; i < 50; i++)); do
	kill -0 "$(cat "$T/slow.pid")" 2>/dev/null || break
	sleep 0.1
done
kill -0 "$(cat "$T/slow.pid")" 2>/dev/null
is "$?" 1 "its handler was stopped"
kill -TERM "$wp"
wait_exit 30 "$wp"
gsql 1 "DELETE FROM job_runs"

# Node 3 killed mid-run.
G=100
P=600
for ((g = 1; g <= G; g++)); do
	printf '{"type": "once", "payload": {}}\n{"type": "once", "payload": {}}\n' |
		"$JOBQ" -c "$T/n1.ini" enqueue --batch --group "g$g" --on-complete note >/dev/null
done
for ((d = 1; d <= G; d++)); do
	printf '{"type": "once", "payload": {}, "ref": "x%d"}\n{"type": "once", "payload": {}, "ref": "y%d"}\n' "$d" "$d"
	printf '{"type": "note", "payload": {"d": %d}, "after": ["x%d", "y%d"]}\n' "$d" "$d" "$d"
done | "$JOBQ" -c "$T/n1.ini" enqueue --batch >/dev/null
seq 1 $P | awk '{ print "{\"type\": \"once\", \"payload\": {}}" }' | "$JOBQ" -c "$T/n1.ini" enqueue --batch >/dev/null
total=$((2 * G + 3 * G + P + G))
is "$(gsql 2 "SELECT COUNT(*) FROM jobs")" $((total - G)) "$((total - G)) jobs enqueued"
: >"$ran"
pids=()
logs=()
for w in 1 2 3 4 5 6; do
	logs+=("$T/worker.${#BG_PIDS[@]}.log")
	start_worker_conf "$T/n$(((w - 1) % 3 + 1)).ini" --concurrency 3 --stop-when-empty
	pids+=("$WORKER_PID")
done
for ((i = 0; i < 600; i++)); do
	[ "$(gsql 1 "SELECT COUNT(*) FROM job_runs")" -ge 200 ] && break
	sleep 0.05
done
"$CLUSTER_SCRIPT" kill-node "$CLUSTER" 3
ok $? "node 3 killed mid-run ($(gsql 1 "SELECT COUNT(*) FROM job_runs") jobs done)"
sleep 2
"$CLUSTER_SCRIPT" start-node "$CLUSTER" 3 >"$T/rejoin.log" 2>&1
ok $? "node 3 rejoined"
bad=0
for p in "${pids[@]}"; do
	wait_exit 300 "$p" || bad=$((bad + 1))
done
is "$bad" 0 "the 6 workers drained the queue and exited 0"
is "$(gsql 3 "SELECT COUNT(*) FROM jobs")" 0 "nothing is left in jobs (seen from node 3)"
is "$(gsql 1 "SELECT COUNT(*) FROM failed_jobs")" 0 "nothing was dead-lettered"
is "$(sort "$ran" | uniq -d | head -5 | tr '\n' ' ')" "" "no job ran twice"
is "$(sort -u "$ran" | wc -l)" "$total" "all $total jobs ran (callbacks included)"
is "$(gsql 2 "SELECT CONCAT_WS(' ', COUNT(DISTINCT job_id), SUM(outcome = 'done'), SUM(outcome <> 'done')) FROM job_runs")" \
	"$total $total 0" "job_runs: every job done once, no other outcome"
is "$(grep -o '"group": [0-9]*' "$log" | sort -u | wc -l) $(grep -c '"group"' "$log")" "$G $G" \
	"each group's callback ran exactly once"
is "$(grep -o '"d": *[0-9]*' "$log" | sort -u | wc -l) $(grep -c '"d"' "$log")" "$G $G" \
	"each waiting job was released and ran exactly once"
moved=0
for l in "${logs[2]}" "${logs[5]}"; do
	grep -q "database connection restored after .* (to $H1)" "$l" && moved=$((moved + 1))
done
is "$moved" 2 "both of node 3's workers moved to node 1, the next host of their list"
is "$(grep -h ' lease lost ' "${logs[@]}" | head -3)" "" "no worker lost a lease"
finish
