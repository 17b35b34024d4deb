#!/bin/bash
# rate (issue 13, item 6): `rate = 20/s` on a type: never more than 20
# starts in any one-second window (sliding, not calendar seconds) across
# every worker, in both reservation modes; jobs beyond the rate wait in
# the queue and are not charged an attempt; the rate is kept up while
# work waits.  A start is the claim (job_runs.started_at, the database's
# clock), the time the rate is enforced against.
. "$top_srcdir/tests/lib.sh"
one_build normal "a timing test"
setup flow_rate

WORKERS=4
CONC=8
RATE=20
N=200 # 10 s of work at the rate

for mode in skip-locked update; do
	empty_tables
	write_conf <<EOC
[worker]
poll_interval = 50ms
reserve_mode = $mode

[queue default]

[handler api]
exec = /bin/true
rate = $RATE/s

[handler other]
exec = /bin/true
EOC
	{
		seq $N | awk '{ printf "{\"type\": \"api\", \"payload\": {\"n\": %d}}\n", $1 }'
		seq 50 | awk '{ printf "{\"type\": \"other\", \"payload\": {\"n\": %d}}\n", $1 }'
	} | jq_ enqueue --batch >/dev/null
	pids=()
	for i in $(seq $WORKERS); do
		start_worker --concurrency $CONC --stop-when-empty
		pids+=("$WORKER_PID")
	done
	bad=0
	for p in "${pids[@]}"; do
		wait_exit $((120 * TIME_SCALE)) "$p" || bad=$((bad + 1))
	done
	is "$bad" 0 "[$mode] the workers drained the queue and exited 0"
	is "$(sql "SELECT COUNT(*) FROM job_runs WHERE type = 'api' AND outcome = 'done' AND attempt = 1")" $N \
		"[$mode] all $N api jobs done, each on its first attempt (waiting for the rate costs none)"
	worst=$(sql "SELECT MAX(c) FROM (SELECT a.id, COUNT(*) AS c FROM job_runs a JOIN job_runs b
		ON b.type = 'api' AND b.started_at >= a.started_at AND b.started_at < a.started_at + INTERVAL 1 SECOND
		WHERE a.type = 'api' GROUP BY a.id) w")
	is "$worst" $RATE "[$mode] at most $RATE starts in any 1 s window (and the rate was reached)"
	span=$(sql "SELECT TIMESTAMPDIFF(MICROSECOND, MIN(started_at), MAX(started_at)) DIV 1000 FROM job_runs WHERE type = 'api'")
	diag "[$mode] $N starts at $RATE/s spread over $span ms"
	[ "$span" -gt $(((N / RATE - 1) * 1000)) ] && [ "$span" -lt $(((N / RATE + 3) * 1000 * TIME_SCALE)) ]
	ok $? "[$mode] $N starts took $span ms: close to the rate ($(((N / RATE - 1) * 1000)) ms at the least)"
	is "$(sql "SELECT MAX(started_at) < (SELECT MAX(started_at) FROM job_runs WHERE type = 'api') FROM job_runs WHERE type = 'other'")" 1 \
		"[$mode] the unlimited type did not wait for the rate"
	# Starts are forgotten as the next claims come: none is older than
	# the window (and a margin) before the last start.
	is "$(sql "SELECT COUNT(*) FROM jobq_starts WHERE started_at < (SELECT MAX(started_at) FROM jobq_starts) - INTERVAL 2 SECOND")" 0 \
		"[$mode] starts older than the window are forgotten"
	problems=$(grep -hE '^[^ ]+ (error|warn) ' "$T"/worker.*.log | head -5)
	is "$problems" "" "[$mode] no worker logged an error or a warning"
	sql "DELETE FROM jobq_starts"
done

# Jobs a dead dependency marked to be cancelled are claimed only to be
# ended unstarted: no start, so they use none of the rate.
empty_tables
write_conf <<EOC
[worker]
poll_interval = 50ms

[queue default]

[handler api]
exec = /bin/true
rate = 2/s

[handler fail]
exec = /bin/false
max_attempts = 1
EOC
d=$(jq_ enqueue fail '{}')
for i in 1 2 3 4 5 6; do jq_ enqueue --after "$d" api "{\"n\": $i}" >/dev/null; done
start_worker --concurrency 8 --stop-when-empty
wait_exit $((30 * TIME_SCALE)) "$WORKER_PID"
is "$(sql "SELECT COUNT(*) FROM job_runs WHERE type = 'api' AND outcome = 'cancelled'")" 6 "the six jobs waiting for a dead job were cancelled"
is "$(sql "SELECT COUNT(*) FROM jobq_starts")" 0 "and none was charged to the rate (none started)"

finish
