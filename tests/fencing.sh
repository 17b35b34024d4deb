#!/bin/bash
# Fencing: worker A takes a 4 s job (reserve_ttl 1 s, heartbeat 300 ms)
# and is then frozen with SIGSTOP for longer than its lease.  Worker B,
# already polling, takes the job once A's lease has expired and runs it.
# A is thawed while B holds the job; A's handler (which asks for a retry
# on attempt 1) has ended meanwhile, or A stops it at once (its lease is
# long gone), and A tries to write its outcome: the write is fenced by
# A's lease token, so it changes nothing.  A logs the lost lease; the job
# ends exactly as B left it (done), not back in the queue as A's retry.
# Both reservation modes.
. "$top_srcdir/tests/lib.sh"
one_build normal "a timing test"
setup fencing

for mode in skip-locked update; do
	empty_tables
	runs=$T/runs.$mode
	: >"$runs"
	write_conf <<EOC
[worker]
poll_interval = 100ms
reserve_mode = $mode
reserve_ttl = 1s
heartbeat = 300ms

[queue default]

[handler fence]
exec = $top_srcdir/tests/scale/fence.sh 4 $runs
max_attempts = 5
backoff = 60s
EOC
	alog=$T/worker.${#BG_PIDS[@]}.log
	start_worker
	a=$WORKER_PID
	id=$(jq_ enqueue fence '{}')
	wait_for_sql 30 "SELECT reserved_by LIKE '%:$a:%' FROM jobs WHERE id = '$id'" 1
	ok $? "[$mode] worker A ($a) took job $id"

	blog=$T/worker.${#BG_PIDS[@]}.log
	start_worker
	b=$WORKER_PID
	wait_for_sql 30 "SELECT COUNT(*) FROM jobq_workers WHERE pid = $b" 1
	ok $? "[$mode] worker B ($b) is running"

	# A's lease only moves forward, so its expiry read before the freeze
	# is a floor; read after the freeze it is exact, as long as the row is
	# still A's.  On a loaded machine A's heartbeat can be late enough
	# that B claims before the second read: keep the floor then.
	a_expiry=$(sql "SELECT lease_expires_at FROM jobs WHERE id = '$id'")
	kill -STOP $a
	stopped_at=$SECONDS
	a_now=$(sql "SELECT lease_expires_at FROM jobs WHERE id = '$id' AND reserved_by LIKE '%:$a:%'")
	[ -n "$a_now" ] && a_expiry=$a_now
	wait_for_sql 60 "SELECT reserved_by LIKE '%:$b:%' FROM jobs WHERE id = '$id'" 1
	ok $? "[$mode] with A frozen, B took the job"
	is "$(sql "SELECT CONCAT_WS(' ', attempts, reserved_at >= '$a_expiry') FROM jobs WHERE id = '$id'")" \
		"2 1" "[$mode] as attempt 2, once A's lease had expired"
	# Keep A frozen for 3 s at least, then thaw it while B holds the job.
	while [ $((SECONDS - stopped_at)) -lt 3 ]; do sleep 0.2; done
	is "$(sql "SELECT reserved_by LIKE '%:$b:%' FROM jobs WHERE id = '$id'")" 1 \
		"[$mode] B still holds the job when A is thawed"
	kill -CONT $a

	# B's handler ends; A's is gone (ended while A was frozen, or stopped
	# by A once thawed); then stop both workers, which writes what is left.
	a_pid=$(sed -n "s/^start $id 1 //p" "$runs")
	i=0
	while { [ "$(grep -c "^end $id 2 " "$runs")" -lt 1 ] || kill -0 "$a_pid" 2>/dev/null; } &&
		[ $i -lt 600 ]; do
		i=$((i + 1))
		sleep 0.1
	done
	is "$(grep -c "^end $id 2 " "$runs")" 1 "[$mode] B's handler ran to its end"
	kill -0 "$a_pid" 2>/dev/null
	ok $((!$?)) "[$mode] A's handler (pid $a_pid) is gone"
	wait_for_sql 30 "SELECT COUNT(*) FROM jobs WHERE id = '$id'" 0
	ok $? "[$mode] the job left the queue"
	kill -TERM $a $b
	wait_exit 30 $a
	is "$?" 0 "[$mode] worker A exits 0 on SIGTERM"
	wait_exit 30 $b
	is "$?" 0 "[$mode] worker B exits 0 on SIGTERM"

	like "$(cat "$alog")" "job $id: lease lost" "[$mode] A logged that it lost the lease of job $id"
	is "$(grep -c 'lease lost' "$blog")" 0 "[$mode] B did not"
	is "$(grep -c "^start $id 1 " "$runs") $(grep -c "^start $id 2 " "$runs")" "1 1" \
		"[$mode] the handler ran for attempt 1 (A) and attempt 2 (B)"
	is "$(sql "SELECT COUNT(*) FROM jobs WHERE id = '$id'")" 0 "[$mode] A's retry did not put the job back"
	is "$(sql "SELECT COUNT(*) FROM failed_jobs")" 0 "[$mode] nor in failed_jobs"
	is "$(sql "SELECT GROUP_CONCAT(CONCAT_WS(' ', attempt, outcome, exit_status) ORDER BY id) FROM job_runs WHERE worker LIKE '%:$b:%'")" \
		"2 done exit 0" "[$mode] B's run is recorded: attempt 2, done"
	a_runs=$(sql "SELECT GROUP_CONCAT(CONCAT_WS(' ', attempt, outcome, exit_status) ORDER BY id) FROM job_runs WHERE worker LIKE '%:$a:%'")
	like "$a_runs" "^(NULL|1 lost (exit 75|killed by SIGTERM|killed by SIGKILL))$" \
		"[$mode] A's run is recorded as lost, or not at all"
	is "$(sql "SELECT COUNT(*) FROM job_runs WHERE outcome NOT IN ('done', 'lost')")" 0 \
		"[$mode] no run claims any other outcome"
done
# Under --enable-sanitizers a report goes to the worker's stderr, whatever
# its exit status says.
is "$(grep -l -e 'Sanitizer' -e 'runtime error:' "$T"/worker.*.log | wc -l)" 0 \
	"no worker log holds a sanitizer report"
finish
