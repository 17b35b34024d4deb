#!/bin/bash
# Pause and resume through two Galera nodes at once.  Two people (or two
# scripts) pausing one queue through two nodes write the same row of
# jobq_paused; jobq's sessions turn the server's own rerun of an
# autocommit statement off (wsrep_retry_autocommit = 0), so the one that
# loses certification gets error 1213.  `jobq pause` and `jobq resume`
# rerun it: both commands exit 0, one saying it paused (resumed), the
# other that it was already so.  Then a pause through node 1 stops the
# claims of a worker through node 2, and a resume there starts them again.
. "$top_srcdir/tests/galera_lib.sh"
galera_setup galera_audit_pause 24880 2

for i in 1 2; do
	gconf "$T/n$i.ini" "$([ $i = 1 ] && echo "$H1,$H2" || echo "$H2,$H1")" <<EOC
[worker]
poll_interval = 20ms

[queue default]

[handler echo]
exec = $HANDLERS/echo.sh
EOC
done
"$JOBQ" -c "$T/n1.ini" init >/dev/null
ok $? "jobq init on the cluster"

R=25
bad=0
said=0
for ((k = 0; k < R; k++)); do
	for cmd in pause resume; do
		both $cmd default
		# Exactly one of the two changed the state.
		[ "$(cat "$T/o1" "$T/o2" | grep -c "^queue default ${cmd}d$")" = 1 ] && said=$((said + 1))
	done
done
is "$bad" 0 "$R rounds of pause, then resume, through both nodes at once: every command exits 0, silent on stderr"
is "$said" $((2 * R)) "each time exactly one of the two says it changed the state"
is "$(gsql 2 "SELECT COUNT(*) FROM jobq_paused")" 0 "the queue ends resumed"

# A pause through node 1 is what a worker through node 2 reads.
"$JOBQ" -c "$T/n1.ini" pause default >/dev/null
start_worker_conf "$T/n2.ini"
id=$("$JOBQ" -c "$T/n2.ini" enqueue echo '{"n": 1}')
sleep 1
is "$(gsql 2 "SELECT COUNT(*) FROM job_runs WHERE job_id = $id")" 0 \
	"paused through node 1: the worker through node 2 leaves the job alone"
"$JOBQ" -c "$T/n1.ini" resume default >/dev/null
for ((i = 0; i < 100; i++)); do
	[ "$(gsql 2 "SELECT COUNT(*) FROM job_runs WHERE job_id = $id")" = 1 ] && break
	sleep 0.1
done
is "$(gsql 2 "SELECT outcome FROM job_runs WHERE job_id = $id")" done "resumed through node 1: it runs the job"
finish
