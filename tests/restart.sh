#!/bin/bash
# The database server restarts under running workers, in both reservation
# modes.  The shared test server must stay up for the other tests, so
# this test starts a private server of its own ($T/db2), stops it while
# two workers are busy with a backlog of 50 ms jobs, waits, starts it
# again.  The workers live through it: they log the loss and the
# reconnection and then finish every job.  Delivery is at-least-once, so
# the test asserts that no job is lost and only reports duplicates.
. "$top_srcdir/tests/lib.sh"
one_build normal "a timing test"
setup restart

N=500
db2_use

# Waits up to $1 seconds until every file $3... matches pattern $2.
wait_logs() {
	local secs=$1 re=$2 i=0 f
	shift 2
	for f in "$@"; do
		while ! grep -q "$re" "$f"; do
			i=$((i + 1))
			[ $i -le $((secs * 10)) ] || { waited_out "$1" "wait_logs $*"; return 1; }
			sleep 0.1
		done
	done
}

# A small server: the test needs little memory and no large redo log.
JOBQ_TESTDB_OPTS="--innodb-buffer-pool-size=64M --innodb-log-file-size=48M" \
	"$TESTDB_SCRIPT" start "$DB2" || { echo "Bail out! cannot start a second MariaDB in $DB2"; exit 99; }
# From here on write_conf points the configuration at the private server.
SOCKET=$("$TESTDB_SCRIPT" socket "$DB2")

for mode in skip-locked update; do
	ran=$T/ran.$mode
	: >"$ran"
	write_conf <<EOC
[worker]
poll_interval = 50ms
reserve_mode = $mode
reserve_ttl = 10s

[queue default]

[handler nap]
exec = /bin/sh -c 'sleep 0.05; echo \$JOBQ_JOB_ID >>$ran'
max_attempts = 5
EOC
	jq_ init >/dev/null
	ok $? "[$mode] schema on the private server"
	sql2 "DELETE FROM jobs; DELETE FROM job_runs; DELETE FROM failed_jobs; DELETE FROM jobq_workers"
	seq 1 $N | awk '{ printf "{\"type\": \"nap\", \"payload\": {\"n\": %d}}\n", $1 }' |
		jq_ enqueue --batch >/dev/null
	is "$(sql2 "SELECT COUNT(*) FROM jobs")" "$N" "[$mode] $N jobs enqueued"

	logs=()
	pids=()
	for i in 1 2; do
		logs+=("$T/worker.${#BG_PIDS[@]}.log")
		start_worker --concurrency 2
		pids+=("$WORKER_PID")
	done
	wait_for_sql2 60 "SELECT COUNT(*) >= 100 FROM job_runs" 1
	ok $? "[$mode] the workers are under way"
	pending=$(sql2 "SELECT CONCAT_WS(' ', COUNT(*), SUM(lease_token IS NOT NULL)) FROM jobs")
	ok $([ "${pending%% *}" -gt 0 ]; echo $?) "[$mode] jobs are still pending when the server goes (pending, reserved: $pending)"

	"$TESTDB_SCRIPT" stop "$DB2"
	! "$TESTDB_SCRIPT" status "$DB2"
	ok $? "[$mode] server stopped"
	wait_logs 30 'database connection lost' "${logs[@]}"
	ok $? "[$mode] both workers logged the lost connection"
	sleep 3
	alive=0
	for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=$((alive + 1)); done
	is "$alive" 2 "[$mode] both workers are still running without a server"
	JOBQ_TESTDB_OPTS="--innodb-buffer-pool-size=64M --innodb-log-file-size=48M" \
		"$TESTDB_SCRIPT" start "$DB2"
	ok $? "[$mode] server started again"

	wait_logs 60 'database connection restored' "${logs[@]}"
	ok $? "[$mode] both workers logged the reconnection"
	wait_for_sql2 180 "SELECT COUNT(*) FROM jobs" 0
	ok $? "[$mode] the workers emptied the queue"
	bad=0
	for p in "${pids[@]}"; do
		kill -TERM "$p"
		wait_exit 30 "$p" || bad=$((bad + 1))
	done
	is "$bad" 0 "[$mode] both workers stop on SIGTERM with status 0"

	is "$(sql2 "SELECT COUNT(*) FROM failed_jobs")" 0 "[$mode] nothing was dead-lettered"
	is "$(sql2 "SELECT COUNT(DISTINCT job_id) FROM job_runs WHERE outcome = 'done'")" "$N" \
		"[$mode] each of the $N jobs has a 'done' run: none lost"
	is "$(sort -u "$ran" | wc -l)" "$N" "[$mode] the handlers ran for all $N jobs"
	diag "[$mode] handler runs: $(wc -l <"$ran") for $N jobs; run rows by outcome:" \
		"$(sql2 "SELECT GROUP_CONCAT(CONCAT(outcome, '=', n)) FROM (SELECT outcome, COUNT(*) n FROM job_runs GROUP BY outcome) x")"
	diag "[$mode] jobs run more than once (at-least-once): $(sort "$ran" | uniq -d | wc -l)"
	for l in "${logs[@]}"; do
		diag "[$mode] $(basename "$l"): $(grep -cE '^[^ ]+ (warn|error) ' "$l") warnings/errors, e.g.:"
		grep -E '^[^ ]+ (warn|error) ' "$l" | head -4 | sed 's/^/#   /'
	done
done
# Under --enable-sanitizers a report goes to the worker's stderr, whatever
# its exit status says.
is "$(grep -l -e 'Sanitizer' -e 'runtime error:' "$T"/worker.*.log | wc -l)" 0 \
	"no worker log holds a sanitizer report"
finish
