#!/bin/bash
# Workflows through two Galera nodes at once.  (1) Two batch enqueues
# into one new group through two nodes: both open the group with the same
# row (INSERT ... ON DUPLICATE KEY), and the one that loses certification
# got error 1213 and wrote nothing; it reruns, and both batches join the
# group.  (2) Workers through both nodes then end the groups' jobs, their
# last two often at once on the two nodes: each group's callback is
# enqueued and run exactly once; and each job that waits --after two
# jobs is released and run exactly once, when both are done.
. "$top_srcdir/tests/galera_lib.sh"
galera_setup galera_audit_group 24920 2

log=$T/log
: >"$log"
for i in 1 2; do
	gconf "$T/n$i.ini" "$([ $i = 1 ] && echo "$H1,$H2" || echo "$H2,$H1")" <<EOC
[worker]
poll_interval = 20ms
reserve_ttl = 30s

[queue default]

[handler step]
exec = /bin/sleep 0.1

[handler note]
exec = /bin/sh -c 'echo "\$(cat)" >>$log'
EOC
done
"$JOBQ" -c "$T/n1.ini" init >/dev/null
ok $? "jobq init on the cluster"

G=40
bad=0
for ((k = 1; k <= G; k++)); do
	for i in 1 2; do
		printf '{"type": "step", "payload": {}}\n{"type": "step", "payload": {}}\n' |
			"$JOBQ" -c "$T/n$i.ini" enqueue --batch --group "g$k" --on-complete note >/dev/null 2>"$T/e$i" &
		eval "p$i=\$!"
	done
	wait "$p1"
	r1=$?
	wait "$p2"
	r2=$?
	if [ "$r1:$r2" != 0:0 ] || [ -s "$T/e1" ] || [ -s "$T/e2" ]; then
		bad=$((bad + 1))
		[ $bad -gt 1 ] || diag "group g$k: exits $r1 $r2: $(cat "$T/e1" "$T/e2")"
	fi
done
is "$bad" 0 "$G new groups, each opened by two batches through both nodes at once: every batch exits 0, silent"
is "$(gsql 2 "SELECT CONCAT(COUNT(*), ' ', SUM(total = 4)) FROM jobq_groups")" "$G $G" \
	"$G groups of 4 jobs: both batches joined each"

# Dependents: X and Y through node 1, Z --after both.
D=20
for ((d = 1; d <= D; d++)); do
	printf '{"type": "step", "payload": {}, "ref": "x%d"}\n{"type": "step", "payload": {}, "ref": "y%d"}\n' "$d" "$d"
	printf '{"type": "note", "payload": {"d": %d}, "after": ["x%d", "y%d"]}\n' "$d" "$d" "$d"
done | "$JOBQ" -c "$T/n1.ini" enqueue --batch >/dev/null
is "$?" 0 "$D jobs, each waiting for two others, enqueued"

pids=()
for i in 1 2; do
	start_worker_conf "$T/n$i.ini" --concurrency 2 --stop-when-empty
	pids+=("$WORKER_PID")
done
bad=0
for p in "${pids[@]}"; do
	wait_exit 120 "$p" || bad=$((bad + 1))
done
is "$bad" 0 "workers through both nodes drained the queue and exited 0"
is "$(gsql 1 "SELECT COUNT(*) FROM jobs")" 0 "nothing is left in jobs"
is "$(gsql 2 "SELECT CONCAT(COUNT(*), ' ', SUM(complete_job IS NOT NULL)) FROM jobq_groups WHERE ended_at IS NOT NULL")" \
	"$G $G" "every group completed, each with its callback job"
is "$(grep -o '"group": [0-9]*' "$log" | sort -u | wc -l) $(grep -c '"group"' "$log")" "$G $G" \
	"each group's callback ran exactly once"
is "$(grep -o '"d": *[0-9]*' "$log" | sort -u | wc -l) $(grep -c '"d"' "$log")" "$D $D" \
	"each waiting job was released and ran exactly once"
is "$(gsql 1 "SELECT COUNT(*) FROM job_runs WHERE outcome <> 'done'")" 0 "every run ended done"
is "$(grep -hE '^[^ ]+ (error|warn) ' "$T"/worker.*.log | grep -vc ' lost to other workers. claims ')" 0 \
	"no worker logged an error or a warning"
finish
