#!/bin/bash
# A stop that comes while an outcome that releases a waiting job is being
# written, in exec and persistent mode.  The write hands the released job
# to the worker in its transaction (worker_write.c: handoff_take); the
# stop, read while the write waits on a lock, found nothing to give
# back.  The worker must give that job back and exit, not keep it
# unstarted (and its lease extended) for as long as it runs; the next
# worker runs it, once.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
setup stop_handoff
TH=$top_srcdir/tests/handlers
LOG=$T/log
. "$top_srcdir/tests/deps_lib.sh"

for hmode in exec persistent; do
	empty_tables
	sql "DELETE FROM jobq_deps"
	rm -f "$LOG" "$T/gate"
	extra=""
	[ $hmode = persistent ] && extra="mode = persistent"
	# heartbeat 30 s: a wait limit of 10 s, longer than the lock held
	# below, so the write waits for it rather than failing.
	write_conf <<EOC
[worker]
poll_interval = 20ms
reserve_ttl = 90s
heartbeat = 30s

[queue default]

[handler step]
exec = $TH/deps_log.py $LOG $hmode
env.PYTHONPATH = $HANDLERS
$extra
EOC
	m="[$hmode]"
	a=$(jq_ enqueue step "{\"name\": \"A\", \"gate\": \"$T/gate\"}")
	b=$(jq_ enqueue --after "$a" step '{"name": "B"}')
	start_worker --concurrency 2
	w=$WORKER_PID
	wait_for_sql 30 "SELECT COUNT(*) FROM jobs WHERE id = $a AND lease_token IS NOT NULL" 1
	ok $? "$m A runs"
	# B's row locked for 4 s: A's outcome, which releases B, waits on it.
	sql "START TRANSACTION; SELECT id FROM jobs WHERE id = $b FOR UPDATE; DO SLEEP(4); COMMIT" >/dev/null &
	BG_PIDS+=($!)
	locker=$!
	wait_for_sql 10 "SELECT COUNT(*) FROM information_schema.INNODB_TRX WHERE trx_query LIKE 'DO SLEEP(4)%'" 1
	touch "$T/gate"
	wait_for_sql 10 "SELECT COUNT(*) FROM information_schema.INNODB_TRX WHERE trx_state = 'LOCK WAIT'" 1
	ok $? "$m A's outcome waits on B's row"
	kill -TERM "$w"
	wait "$locker"
	wait_exit 30 "$w" >/dev/null
	ok $? "$m the worker, stopped as that write waited, exits once it is written"
	kill -KILL "$w" 2>/dev/null # one that did not: the next part is not its
	is "$(sql "SELECT outcome FROM job_runs WHERE job_id = $a")" done "$m A is done"
	is "$(sql "SELECT CONCAT_WS(' ', waiting_on, lease_token IS NULL) FROM jobs WHERE id = $b")/$(starts B)" "0 1/0" \
		"$m B, released and handed to the stopping worker, is given back unstarted"
	start_worker
	wait_for_sql 30 "SELECT COUNT(*) FROM job_runs WHERE job_id = $b AND outcome = 'done'" 1
	ok $? "$m the next worker runs B"
	is "$(starts B)" 1 "$m once"
	stop_workers
done
finish
