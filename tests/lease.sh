#!/bin/bash
# A job that runs three times as long as the lease (reserve_ttl 2 s, job
# 6 s), with two workers polling: the holder's heartbeat keeps extending
# the lease, so the other worker never takes the job and it runs exactly
# once.  Both reservation modes.
. "$top_srcdir/tests/lib.sh"
one_build normal "a timing test"
setup lease

for mode in skip-locked update; do
	empty_tables
	runs=$T/runs.$mode
	: >"$runs"
	write_conf <<EOC
[worker]
poll_interval = 50ms
reserve_mode = $mode
reserve_ttl = 2s

[queue default]

[handler long]
exec = $top_srcdir/tests/scale/nap.sh 6 $runs
max_attempts = 5
EOC
	logs=("$T/worker.${#BG_PIDS[@]}.log")
	start_worker
	a=$WORKER_PID
	logs+=("$T/worker.${#BG_PIDS[@]}.log")
	start_worker
	b=$WORKER_PID
	wait_for_sql 30 "SELECT COUNT(*) FROM jobq_workers" 2
	ok $? "[$mode] two workers are polling"

	id=$(jq_ enqueue long '{}')
	wait_for_sql 30 "SELECT COUNT(*) FROM jobs WHERE id = '$id' AND lease_token IS NOT NULL" 1
	ok $? "[$mode] job $id was reserved"
	token=$(sql "SELECT lease_token FROM jobs WHERE id = '$id'")

	# Past twice the lease, the job is still held on its first token and
	# its lease was extended beyond the first one.
	wait_for_sql 30 "SELECT TIMESTAMPDIFF(MICROSECOND, reserved_at, UTC_TIMESTAMP(6)) > 4500000 FROM jobs WHERE id = '$id'" 1
	is "$(sql "SELECT CONCAT_WS(' ', lease_token = '$token', attempts, lease_expires_at > UTC_TIMESTAMP(6),
		lease_expires_at > reserved_at + INTERVAL 4 SECOND) FROM jobs WHERE id = '$id'")" \
		"1 1 1 1" "[$mode] 4.5 s in: same lease token, attempt 1, lease alive and extended past 2 x reserve_ttl"

	wait_for_sql 60 "SELECT COUNT(*) FROM jobs" 0
	ok $? "[$mode] the job finished"
	for p in $a $b; do kill -TERM "$p"; done
	wait_exit 30 $a && wait_exit 30 $b
	ok $? "[$mode] both workers stop on SIGTERM with status 0"

	is "$(grep -c '^start ' "$runs")" 1 "[$mode] the handler ran once"
	is "$(grep -c '^end ' "$runs")" 1 "[$mode] and ran to its end"
	is "$(sql "SELECT CONCAT_WS(' ', COUNT(*), MIN(outcome), MIN(attempt), MIN(duration_ms) >= 6000) FROM job_runs WHERE job_id = '$id'")" \
		"1 done 1 1" "[$mode] one run row: done, attempt 1, 6 s long"
	is "$(cat "${logs[@]}" | grep -c 'lease lost')" 0 "[$mode] no worker logged a lost lease"
done
# Under --enable-sanitizers a report goes to the worker's stderr, whatever
# its exit status says.
is "$(grep -l -e 'Sanitizer' -e 'runtime error:' "$T"/worker.*.log | wc -l)" 0 \
	"no worker log holds a sanitizer report"
finish
