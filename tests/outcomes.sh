#!/bin/bash
# The outcome table of DESIGN.md section 3, row by row, with real handlers
# and the real worker, in both reservation modes; then the backoff
# sequence (exponential with its cap, and a list) measured in the
# database.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
setup outcomes
TH=$top_srcdir/tests/handlers

# The run of attempt 1 of job $1: "outcome|exit_status".
run_of() {
	sql "SELECT CONCAT_WS('|', outcome, exit_status) FROM job_runs WHERE job_id = $1 ORDER BY id"
}

# Inserts a job with extra columns: ins TYPE PAYLOAD [COLUMNS VALUES]
# (COLUMNS and VALUES start with a comma); prints its id.
ins() {
	sql "INSERT INTO jobs (queue, type, payload, available_at ${3:-}) VALUES ('default', '$1', '$2', UTC_TIMESTAMP(6) ${4:-}); SELECT LAST_INSERT_ID()"
}

# A retry: still queued, lease released, attempts 1, run recorded with
# the exit words, last_error "[words] stderr", due again after the 30s
# backoff (longer than the whole worker run, so nothing runs twice).
check_retry() {
	local id=$1 words=$2 err_re=$3 what=$4 d
	is "$(where "$id")" queue "[$mode] $what: job stays in the queue"
	is "$(sql "SELECT CONCAT_WS('|', attempts, lease_token IS NULL, reserved_by IS NULL, available_at > created_at) FROM jobs WHERE id = $id")" \
		"1|1|1|1" "[$mode] $what: attempts 1, lease released, available later"
	is "$(run_of "$id")" "retry|$words" "[$mode] $what: run recorded as retry, '$words'"
	like "$(sql "SELECT last_error FROM jobs WHERE id = $id")" "^\\[$words\\] $err_re" \
		"[$mode] $what: last_error holds the exit status and stderr"
	d=$(retry_delay "$id" 1)
	ok $([ -n "$d" ] && [ "$d" -ge 29990 ] && [ "$d" -le 35000 ]; echo $?) \
		"[$mode] $what: available_at is the 30s backoff after the run (got ${d}ms)"
}

# A dead-letter: in failed_jobs with the exit words, the reason and the
# full stderr; gone from jobs.
check_dead() {
	local id=$1 words=$2 reason_re=$3 exc=$4 attempts=$5 what=$6
	is "$(where "$id")" failed "[$mode] $what: job moved to failed_jobs"
	is "$(sql "SELECT CONCAT_WS('|', exit_status, attempts) FROM failed_jobs WHERE id = $id")" \
		"$words|$attempts" "[$mode] $what: exit_status '$words', attempts $attempts"
	like "$(sql "SELECT reason FROM failed_jobs WHERE id = $id")" "$reason_re" "[$mode] $what: reason"
	if [ -n "$exc" ]; then
		is "$(sql "SELECT exception FROM failed_jobs WHERE id = $id")" "$exc" \
			"[$mode] $what: exception holds the whole stderr"
	fi
}

for mode in skip-locked update; do
	empty_tables
	write_conf <<EOC
[worker]
poll_interval = 20ms
reserve_mode = $mode
backoff = exponential 30s 4m
backoff_jitter = 0
max_attempts = 5

[queue default]

[handler x]
exec = $TH/exitwith.sh

[handler strict]
exec = $TH/exitwith.sh
permanent_stderr = ^FATAL:
retry_stderr = (?i)try again

[handler custom]
exec = $TH/exitwith.sh
permanent_exit = 3, 100
retry_exit = 65

[handler slow]
exec = $TH/sleeper.sh 30
timeout = 1s
kill_grace = 1s

[handler until]
exec = $TH/exitwith.sh
retry_until = 1m
EOC
	done0=$(jq_ enqueue x '{"out":"hello from the handler","err":"just a warning","exit":0}')
	ex75=$(jq_ enqueue x '{"err":"upstream timed out","exit":75}')
	ex65=$(jq_ enqueue x '{"err":"bad data: no field to\nsecond line","exit":65}')
	ex78=$(jq_ enqueue x '{"err":"config broken","exit":78}')
	ex64=$(jq_ enqueue x '{"exit":64}')
	ex1=$(jq_ enqueue x '{"err":"oops","exit":1}')
	ex3=$(jq_ enqueue x '{"err":"three","exit":3}')
	segv=$(jq_ enqueue x '{"err":"about to crash","signal":"SEGV"}')
	slow=$(jq_ enqueue slow '{}')
	perm=$(jq_ enqueue strict '{"err":"FATAL: mailbox does not exist","exit":1}')
	notperm=$(jq_ enqueue strict '{"err":"not FATAL: busy","exit":1}')
	retrymatch=$(jq_ enqueue strict '{"err":"server busy, please try again later","exit":65}')
	strict65=$(jq_ enqueue strict '{"err":"bad input","exit":65}')
	usedup=$(ins x '{"err":"still failing","exit":75}' ", attempts" ", 4")
	jobmax=$(ins x '{"err":"only once","exit":75}' ", max_attempts" ", 1")
	old=$(ins until '{"err":"too late","exit":75}' ", created_at" ", UTC_TIMESTAMP(6) - INTERVAL 2 MINUTE")
	young=$(jq_ enqueue until '{"err":"in time","exit":75}')
	unknown=$(ins nosuch '{}')
	c3=$(jq_ enqueue custom '{"err":"custom three","exit":3}')
	c100=$(jq_ enqueue custom '{"exit":100}')
	c65=$(jq_ enqueue custom '{"err":"custom 65","exit":65}')
	c66=$(jq_ enqueue custom '{"err":"custom 66","exit":66}')
	total=$(sql "SELECT COUNT(*) FROM jobs")
	is "$total" 22 "[$mode] 22 jobs enqueued"

	log=$T/work.$mode.log
	timeout 120 "$JOBQ" -c "$CONF" work --stop-when-empty 2>"$log"
	is "$?" 0 "[$mode] jobq work --stop-when-empty exits 0 once only backing-off jobs remain"
	like "$(head -n 1 "$log")" "worker started .*reserve_mode=$mode" "[$mode] the worker uses reserve_mode $mode"
	is "$(sql "SELECT COUNT(DISTINCT job_id) FROM job_runs")" 21 "[$mode] every job but the unknown type ran once"

	# exit 0: done
	is "$(where "$done0")" gone "[$mode] exit 0: job deleted"
	is "$(run_of "$done0")" "done|exit 0" "[$mode] exit 0: run recorded as done"
	is "$(sql "SELECT CONCAT_WS('|', output, error, attempt) FROM job_runs WHERE job_id = $done0")" \
		'hello from the handler\n|just a warning\n|1' "[$mode] exit 0: run keeps stdout, stderr and the attempt"
	like "$(grep "job=$done0 " "$log")" "info +job job=$done0 type=x queue=default attempt=1/5 outcome=done ms=[0-9]+ exit=\"exit 0\"" \
		"[$mode] exit 0: logged as done"

	check_retry "$ex75" "exit 75" "upstream timed out" "exit 75"
	like "$(grep "job=$ex75 " "$log")" "outcome=retry ms=[0-9]+ exit=\"exit 75\" retry_in=30s" "[$mode] exit 75: logged with retry_in=30s"

	check_dead "$ex65" "exit 65" "exit 65 is a permanent failure" 'bad data: no field to\nsecond line\n' 1 "exit 65"
	is "$(run_of "$ex65")" "dead|exit 65" "[$mode] exit 65: run recorded as dead"
	like "$(grep "job=$ex65 " "$log")" "outcome=dead .*reason=\"exit 65 is a permanent failure\"" "[$mode] exit 65: logged with the reason"
	check_dead "$ex78" "exit 78" "permanent" 'config broken\n' 1 "exit 78"
	check_dead "$ex64" "exit 64" "permanent" "" 1 "exit 64"

	check_retry "$ex1" "exit 1" "oops" "exit 1"
	check_retry "$ex3" "exit 3" "three" "exit 3"
	check_retry "$segv" "killed by SIGSEGV" "about to crash" "SIGSEGV"
	check_retry "$slow" "timed out after 1s" "" "timeout"
	ms=$(sql "SELECT duration_ms FROM job_runs WHERE job_id = $slow")
	ok $([ "$ms" -ge 950 ] && [ "$ms" -lt 10000 ]; echo $?) "[$mode] timeout: the 30 s handler was stopped after ~1s (${ms}ms)"

	check_dead "$perm" "exit 1" "stderr matched permanent_stderr" 'FATAL: mailbox does not exist\n' 1 "permanent_stderr with exit 1"
	check_retry "$notperm" "exit 1" "not FATAL" "exit 1, permanent_stderr not matching"
	check_retry "$retrymatch" "exit 65" "server busy" "retry_stderr with exit 65"
	check_dead "$strict65" "exit 65" "permanent failure" 'bad input\n' 1 "exit 65, retry_stderr not matching"

	check_dead "$usedup" "exit 75" "^attempts used up \(5 of 5" 'still failing\n' 5 "attempt 5 of max_attempts 5"
	check_dead "$jobmax" "exit 75" "^attempts used up \(1 of 1" 'only once\n' 1 "the job's own max_attempts 1"
	check_dead "$old" "exit 75" "^retry_until passed" 'too late\n' 1 "retry_until passed"
	check_retry "$young" "exit 75" "in time" "retry_until not yet passed"

	check_dead "$unknown" "not run" "^unknown job type" "" 1 "unknown type"
	like "$(sql "SELECT exception FROM failed_jobs WHERE id = $unknown")" "unknown job type 'nosuch'" \
		"[$mode] unknown type: the exception names the type"

	check_dead "$c3" "exit 3" "permanent" 'custom three\n' 1 "permanent_exit = 3, 100: exit 3"
	check_dead "$c100" "exit 100" "permanent" "" 1 "permanent_exit = 3, 100: exit 100"
	check_retry "$c65" "exit 65" "custom 65" "retry_exit = 65: exit 65"
	check_retry "$c66" "exit 66" "custom 66" "permanent_exit replaces 64-78: exit 66"

	is "$(sql "SELECT COUNT(*) FROM jobs WHERE lease_token IS NOT NULL OR reserved_at IS NOT NULL")" 0 \
		"[$mode] no job is left reserved"
	ok $(grep -qE 'Sanitizer|runtime error' "$log"; [ $? = 1 ]; echo $?) "[$mode] no sanitizer report in the worker log"

	# Backoff sequences: after each retry, measure the delay, then make
	# the job due at once instead of waiting it out.
	empty_tables
	write_conf <<EOC
[worker]
poll_interval = 20ms
reserve_mode = $mode
backoff_jitter = 0
max_attempts = 10

[queue default]

[handler expo]
exec = $TH/exitwith.sh
backoff = exponential 5s 20s

[handler list]
exec = $TH/exitwith.sh
backoff = 5s,15s,10s
EOC
	start_worker
	for type in expo list; do
		id=$(jq_ enqueue $type '{"err":"again","exit":75}')
		seq=
		for k in 1 2 3 4; do
			if ! wait_for_sql 30 "SELECT COUNT(*) FROM job_runs WHERE job_id = $id AND outcome = 'retry'" "$k"; then
				seq="$seq timeout"
				break
			fi
			seq="$seq $(retry_delay "$id" $k)"
			[ $k = 4 ] || sql "UPDATE jobs SET available_at = UTC_TIMESTAMP(6) WHERE id = $id AND lease_token IS NULL"
		done
		# Round each delay to its nominal value when it is within
		# [nominal - 10ms, nominal + 900ms].
		got=
		for d in $seq; do
			n=$d
			for nominal in 5000 10000 15000 20000 40000; do
				if [[ $d =~ ^[0-9]+$ ]] && [ "$d" -ge $((nominal - 10)) ] && [ "$d" -le $((nominal + 900)) ]; then
					n=$nominal
				fi
			done
			got="$got $n"
		done
		# Backoffs of seconds leave a loaded machine time to read each
		# delay before the test makes the job due again (the waits cost
		# nothing: the test does not sit them out).
		want=" 5000 10000 20000 20000" want_log="5s 10s 20s 20s"
		[ $type = list ] && want=" 5000 15000 10000 10000" want_log="5s 15s 10s 10s"
		is "$got" "$want" "[$mode] backoff $type: delays after attempts 1-4 (raw:$seq)"
		is "$(grep "job=$id " "$T/worker.$((${#BG_PIDS[@]} - 1)).log" | sed -n 's/.*retry_in=\([^ ]*\).*/\1/p' | paste -sd' ')" \
			"$want_log" "[$mode] backoff $type: logged retry_in values"
		is "$(sql "SELECT attempts FROM jobs WHERE id = $id")" 4 "[$mode] backoff $type: 4 attempts charged"
	done
	kill -TERM "$WORKER_PID"
	wait_exit 30 "$WORKER_PID"
	is "$?" 0 "[$mode] the backoff worker exits 0 on SIGTERM"
done
finish
