#!/bin/bash
# Applications that use the tables directly, and the old-server claim
# path (reserve_mode = update).
#
# An application enqueues with a plain INSERT inside its own transaction
# (README, "Enqueue from your application"), and that transaction may
# stay open a while.  In update mode the claim was one UPDATE ... ORDER
# BY ... LIMIT n, which locks the rows it scans: it waited for the
# application's uncommitted row, so no worker claimed anything from the
# queue (every claim timed out with an error) until the application
# committed.  Here jobs enqueued meanwhile must run while it is open, in
# both modes and under a flow gate, and the application's job once it
# commits.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
setup sql_audit

# hold SECS SQL: runs SQL in a transaction kept open SECS seconds, in
# the background, as an application would; sets HOLD_PID.
hold() {
	db_client "$JOBQ_TESTDB" -N -B "$DB" -e "SET time_zone = '+00:00'; START TRANSACTION; $2;
		SELECT SLEEP($1); COMMIT" >/dev/null &
	HOLD_PID=$!
	BG_PIDS+=("$HOLD_PID")
}

for mode in skip-locked update; do
	empty_tables
	write_conf <<EOC
[worker]
poll_interval = 50ms
reserve_mode = $mode
reserve_ttl = 10s

[queue default]

[handler rec]
exec = /bin/sh -c 'echo \$JOBQ_JOB_ID >>$T/ran.$mode'

[handler gated]
exec = /bin/sh -c 'echo \$JOBQ_JOB_ID >>$T/ran.$mode'
max_running = 2
EOC
	: >"$T/ran.$mode"
	wlog=$T/worker.${#BG_PIDS[@]}.log
	start_worker --concurrency 2
	w=$WORKER_PID
	# A committed delayed job: with it, the index entries around the
	# application's delayed one hold so few rows that the server chose
	# to stamp through the due_at index rather than by primary key.
	sql "INSERT INTO jobs (queue, type, payload, available_at)
		VALUES ('default', 'rec', '{}', UTC_TIMESTAMP() + INTERVAL 1 HOUR)"
	for type in rec gated; do
		# One job due now, one an hour later (its index entries lie
		# past the due ones, where a scan of them ends).
		hold 3 "INSERT INTO jobs (queue, type, payload, available_at)
			VALUES ('default', '$type', '{\"app\": 1}', UTC_TIMESTAMP()),
			('default', '$type', '{\"app\": 2}', UTC_TIMESTAMP() + INTERVAL 1 HOUR)"
		wait_for_sql 5 "SELECT COUNT(*) FROM information_schema.innodb_trx WHERE trx_mysql_thread_id <> CONNECTION_ID()
			AND trx_rows_modified > 0" 1
		ids=$(for i in 1 2 3; do jq_ enqueue "$type" "{\"n\": $i}"; done | sort -n | tr '\n' ' ')
		t0=$SECONDS
		wait_for_sql 3 "SELECT COUNT(*) FROM job_runs WHERE type = '$type'" 3
		ok $? "[$mode] $type: jobs enqueued while an application's INSERT is uncommitted run meanwhile"
		is "$(tail -3 "$T/ran.$mode" | sort -n | tr '\n' ' ')" "$ids" \
			"[$mode] $type: the three jobs, each once"
		ok $([ $((SECONDS - t0)) -lt 3 ]; echo $?) "[$mode] $type: before the application committed"
		wait "$HOLD_PID"
		wait_for_sql 5 "SELECT COUNT(*) FROM job_runs WHERE type = '$type'" 4
		ok $? "[$mode] $type: the application's job runs once it committed"
	done
	kill -TERM "$w"
	wait_exit 10 "$w"
	is "$?" 0 "[$mode] the worker stops cleanly"
	is "$(grep -cE '^[^ ]+ (error|warn) ' "$wlog")" 0 \
		"[$mode] it logged no error or warning (no claim waited for the application)"
	is "$(sql "SELECT COUNT(*) FROM job_runs WHERE outcome = 'done' AND attempt = 1")/$(sql "SELECT COUNT(*) FROM jobs WHERE attempts = 0")" \
		"8/3" "[$mode] eight runs, all done on their first attempt; the three delayed jobs wait, untouched"
	BG_PIDS=()
done
finish
