#!/bin/bash
# The order in which a worker takes jobs, in both reservation modes:
# queues in the order --queue names them (a job arriving in an earlier
# queue goes ahead of the rest of a later one), then priority (smaller
# first), then the oldest due first; delayed jobs wait until they are due
# and do not keep --stop-when-empty from exiting.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
setup order
TH=$top_srcdir/tests/handlers

# The names the handlers printed, in the order they ran (one worker,
# one job at a time, so job_runs ids follow the runs).
ran() {
	sql "SELECT COALESCE(GROUP_CONCAT(TRIM(TRAILING '\n' FROM output) ORDER BY id SEPARATOR ' '), '') FROM job_runs"
}

# Inserts a job: ins QUEUE PRIORITY NAME AVAILABLE_AT_EXPR; prints its id.
ins() {
	sql "INSERT INTO jobs (queue, type, payload, priority, available_at) VALUES ('$1', 'x', '{\"out\":\"$3\"}', $2, $4); SELECT LAST_INSERT_ID()"
}

for mode in skip-locked update; do
	empty_tables
	sed -e "s|@T@|$T|g" -e "s|@TH@|$TH|g" -e "s|@MODE@|$mode|g" -e "s|@JOBQ@|$JOBQ|g" -e "s|@CONF@|$CONF|g" <<'EOC' | write_conf
[worker]
poll_interval = 20ms
reserve_mode = @MODE@
concurrency = 1
# strict order: no job is reserved before a slot is free to run it
reserve_ahead = 0

[queue default]
[queue a]
[queue b]

[handler x]
exec = @TH@/exitwith.sh

[handler spawn]
exec = @TH@/enqueue.sh b1 a x '{"out":"a-late"}'
queue = b
env.TJOBQ = @JOBQ@
env.TCONF = @CONF@
EOC

	# --- queues: a before b, whatever their priorities and ages ---
	for order in a,b b,a; do
		empty_tables
		jq_ enqueue spawn '{}' >/dev/null               # b1: prio 0, oldest
		jq_ enqueue -q b -p -5 x '{"out":"b2"}' >/dev/null
		jq_ enqueue -q b x '{"out":"b3"}' >/dev/null
		jq_ enqueue -q a x '{"out":"a1"}' >/dev/null
		jq_ enqueue -q a -p 3 x '{"out":"a2"}' >/dev/null
		timeout 60 "$JOBQ" -c "$CONF" work --queue $order --stop-when-empty 2>>"$T/work.$mode.log"
		is "$?" 0 "[$mode] --queue $order: the worker drains both and exits 0"
		if [ $order = a,b ]; then
			want="a1 a2 b2 b1 a-late b3"
			why="a first; a job enqueued into a while b drains goes next"
		else
			want="b2 b1 b3 a1 a-late a2"
			why="b first, then a (a-late, priority 0, before a2, priority 3)"
		fi
		is "$(ran)" "$want" "[$mode] --queue $order: $why"
	done

	# --- one queue: priority, then oldest due first, never a delayed job ---
	empty_tables
	# Ids grow in the opposite order of due times, so only due time can
	# give the expected order.
	p0new=$(ins default 0 p0-new "UTC_TIMESTAMP(6) - INTERVAL 1 SECOND")
	ins default 0 p0-mid "UTC_TIMESTAMP(6) - INTERVAL 10 SECOND" >/dev/null
	ins default 0 p0-old "UTC_TIMESTAMP(6) - INTERVAL 30 SECOND" >/dev/null
	ins default 5 p5-oldest "UTC_TIMESTAMP(6) - INTERVAL 1 HOUR" >/dev/null
	ins default -3 pneg-newest "UTC_TIMESTAMP(6)" >/dev/null
	later1=$(ins default -10 delayed-sql "UTC_TIMESTAMP(6) + INTERVAL 1 HOUR")
	later2=$(jq_ enqueue -q default -p -10 --delay 1h x '{"out":"delayed-cli"}')
	ins default 32767 plast "UTC_TIMESTAMP(6) - INTERVAL 1 DAY" >/dev/null
	ins default -32768 pfirst "UTC_TIMESTAMP(6) - INTERVAL 1 SECOND" >/dev/null
	timeout 60 "$JOBQ" -c "$CONF" work --queue default --stop-when-empty 2>>"$T/work.$mode.log"
	is "$?" 0 "[$mode] --stop-when-empty exits 0 with only delayed jobs left"
	is "$(ran)" "pfirst pneg-newest p0-old p0-mid p0-new p5-oldest plast" \
		"[$mode] smaller priority first; within a priority the oldest due first"
	is "$(sql "SELECT COUNT(*) FROM jobs WHERE id IN ($later1, $later2) AND attempts = 0 AND lease_token IS NULL")" 2 \
		"[$mode] delayed jobs (available_at in the future, --delay 1h) were not taken"
	is "$(sql "SELECT COUNT(*) FROM job_runs WHERE job_id IN ($later1, $later2)")" 0 "[$mode] ... and never ran"

	# --- a delayed job runs once it is due, not before ---
	empty_tables
	start_worker --queue default
	id=$(jq_ enqueue --delay 2s x '{"out":"soon"}')
	due=$(sql "SELECT available_at FROM jobs WHERE id = $id")
	is "$(sql "SELECT TIMESTAMPDIFF(MICROSECOND, created_at, available_at) BETWEEN 1990000 AND 2010000 FROM jobs WHERE id = $id")" 1 \
		"[$mode] --delay 2s sets available_at 2s after created_at"
	wait_for_sql 30 "SELECT COUNT(*) FROM job_runs WHERE job_id = $id" 1
	ok $? "[$mode] a running worker takes the delayed job when it is due"
	is "$(sql "SELECT started_at >= '$due', TIMESTAMPDIFF(MICROSECOND, '$due', started_at) < 3000000 FROM job_runs WHERE job_id = $id")" "1	1" \
		"[$mode] ... not before available_at, and promptly after it"
	kill -TERM "$WORKER_PID"
	wait_exit 30 "$WORKER_PID"
	is "$?" 0 "[$mode] the worker exits 0 on SIGTERM"
	ok $(grep -qE 'Sanitizer|runtime error' "$T/work.$mode.log" "$T"/worker.*.log; [ $? = 1 ]; echo $?) \
		"[$mode] no sanitizer report in the worker logs"
done
finish
