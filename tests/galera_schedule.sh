#!/bin/bash
# The scheduler across Galera nodes: three `jobq schedule` ticks at once,
# one per node, at 10 fire times: each fire enqueued exactly once (the
# unique (name, fire_at) row certifies across the cluster).
# JOBQ_SCHEDULER_NOW is the scheduler's test hook for "now".
. "$top_srcdir/tests/galera_lib.sh"
galera_setup galera_schedule 24720

for i in 1 2 3; do
	gconf "$T/n$i.ini" "$(ring $i)" <<EOC
[queue default]

[handler echo]
exec = $HANDLERS/echo.sh

[schedule every5]
cron = */5 * * * *
type = echo
overlap = allow
payload = {"n": 5}
EOC
done
"$JOBQ" -c "$T/n1.ini" init >/dev/null
# Each tick's own pid is waited for (not `wait -n`, which can report a
# job that another call already reaped), and its status named.
fails=""
for m in $(seq 0 9); do
	now=$(date -u -d "2026-01-05 10:00:00 UTC + $((m * 5)) minutes + 7 seconds" +%Y-%m-%dT%H:%M:%SZ)
	pids=()
	for i in 1 2 3; do
		JOBQ_SCHEDULER_NOW=$now "$JOBQ" -c "$T/n$i.ini" schedule --quiet >"$T/tick.$m.$i" 2>&1 &
		pids+=($!)
	done
	for i in 1 2 3; do
		wait "${pids[$((i - 1))]}"
		st=$?
		[ $st = 0 ] || fails+=" tick $m on node $i exited $st;"
	done
done
# A tick whose transaction loses to another node's is aborted, and when
# that happens while the node loads the counting triggers of jobs (the
# first INSERT on each node after init) the node keeps a copy of jobs
# whose triggers count as unparsable (1064, "... has an error in its
# body"); jobq flushes it and reruns (galera_trigger_mend.sh makes one on
# purpose).  So nothing may fail here.
is "$fails" "" "30 ticks (3 at once, one per node, at 10 fire times) exit 0"
is "$(cat "$T"/tick.* | head -3)" "" "... and print nothing"
is "$(gsql 1 "SELECT COUNT(*) FROM jobq_schedule_runs WHERE name = 'every5'")" 10 "10 run rows, one per fire"
is "$(gsql 2 "SELECT COUNT(*) FROM jobs WHERE type = 'echo'")" 10 "10 jobs, one per fire"
is "$(gsql 3 "SELECT COUNT(DISTINCT job_id) FROM jobq_schedule_runs WHERE job_id IN (SELECT id FROM jobs)")" 10 \
	"each run row names its own job"
finish
