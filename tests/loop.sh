#!/bin/bash
# The worker loop's stop conditions, in both reservation modes: --once,
# --max N, --max-time, --stop-when-empty, and SIGTERM (first: finish the
# running handler, write its outcome, take nothing new, exit 0; second:
# terminate it and give the job back without charging the attempt).
# Signals are sent only once the worker has logged that it started: a
# signal that reaches the forked child before it execs jobq would run
# this shell's EXIT trap (cleanup) in the child.
. "$top_srcdir/tests/lib.sh"
one_build normal "a timing test"
setup loop
TH=$top_srcdir/tests/handlers

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# Runs jobq work ARGS in the foreground (60 s safety net); sets RC and
# ELAPSED_MS.
work() {
	local t0
	t0=$(now_ms)
	timeout 60 "$JOBQ" -c "$CONF" work "$@" 2>>"$T/work.$mode.log"
	RC=$?
	ELAPSED_MS=$(($(now_ms) - t0))
}

# Waits up to $1 seconds for file $2 to exist.
wait_file() {
	local i=0
	while [ ! -e "$2" ]; do
		i=$((i + 1))
		[ $i -le $(($1 * 10)) ] || { waited_out "$1" "wait_file $*"; return 1; }
		sleep 0.1
	done
}

# Waits up to $1 seconds for file $2 to contain $3.
wait_log() {
	local i=0
	while ! grep -q -- "$3" "$2" 2>/dev/null; do
		i=$((i + 1))
		[ $i -le $(($1 * 10)) ] || { waited_out "$1" "wait_log $*"; return 1; }
		sleep 0.1
	done
}

nruns() { sql "SELECT COUNT(*) FROM job_runs"; }
njobs() { sql "SELECT COUNT(*) FROM jobs"; }

enqueue_n() {
	local i
	for i in $(seq "$1"); do jq_ enqueue x "{\"out\":\"job $i\"}" >/dev/null; done
}

for mode in skip-locked update; do
	empty_tables
	rm -f "$T"/*.started
	write_conf <<EOC
[worker]
poll_interval = 20ms
reserve_mode = $mode
concurrency = 1

[queue default]

[handler x]
exec = $TH/exitwith.sh

[handler fail]
exec = $TH/exitwith.sh
backoff = 1h

[handler slow]
exec = $TH/sleeper.sh 3 $T/slow.started

[handler slow30]
exec = $TH/sleeper.sh 30 $T/slow30.started
EOC

	# --- --once ---
	first=$(jq_ enqueue x '{"out":"first"}')
	enqueue_n 2
	work --once
	is "$RC" 0 "[$mode] --once exits 0"
	is "$(nruns) $(njobs)" "1 2" "[$mode] --once ran exactly one of three jobs"
	is "$(sql "SELECT job_id FROM job_runs")" "$first" "[$mode] --once ran the oldest"
	enqueue_n 2
	work --once -j 3
	is "$RC" 0 "[$mode] --once -j 3 exits 0"
	is "$(nruns) $(njobs)" "2 3" "[$mode] --once -j 3 also runs exactly one job"
	empty_tables
	work --once
	is "$RC" 0 "[$mode] --once with an empty queue exits 0"
	ok $([ "$ELAPSED_MS" -lt $((5000 * TIME_SCALE)) ]; echo $?) "[$mode] ... at once (${ELAPSED_MS}ms)"

	# --- --max N ---
	enqueue_n 5
	work --max 2
	is "$RC" 0 "[$mode] --max 2 exits 0"
	is "$(nruns) $(njobs)" "2 3" "[$mode] --max 2 ran exactly 2 of 5 jobs"
	enqueue_n 2
	work --max 3 -j 2
	is "$RC" 0 "[$mode] --max 3 -j 2 exits 0"
	is "$(nruns) $(njobs)" "5 2" "[$mode] --max 3 -j 2 ran exactly 3 more jobs"
	is "$(sql "SELECT COUNT(*) FROM jobs WHERE attempts > 0 OR lease_token IS NOT NULL")" 0 \
		"[$mode] --max left the other jobs untouched"

	# --- --max-time ---
	empty_tables
	work --max-time 2
	is "$RC" 0 "[$mode] --max-time 2 with no jobs exits 0"
	ok $([ "$ELAPSED_MS" -ge 1900 ] && [ "$ELAPSED_MS" -lt $((10000 * TIME_SCALE)) ]; echo $?) "[$mode] ... after ~2s (${ELAPSED_MS}ms)"
	slow=$(jq_ enqueue slow '{}')
	other=$(jq_ enqueue x '{"out":"not taken"}')
	work --max-time 2
	is "$RC" 0 "[$mode] --max-time 2 with a 3 s job running exits 0"
	ok $([ "$ELAPSED_MS" -ge 2900 ] && [ "$ELAPSED_MS" -lt $((20000 * TIME_SCALE)) ]; echo $?) "[$mode] ... after the job ended (${ELAPSED_MS}ms)"
	is "$(sql "SELECT CONCAT_WS('|', outcome, exit_status, duration_ms >= 2900) FROM job_runs WHERE job_id = $slow")" "done|exit 0|1" \
		"[$mode] ... the running job was finished and recorded done"
	is "$(sql "SELECT CONCAT_WS('|', attempts, lease_token IS NULL) FROM jobs WHERE id = $other")" "0|1" \
		"[$mode] ... and no job was taken after the time was up"
	like "$(cat "$T/work.$mode.log")" "--max-time reached" "[$mode] ... and it says why it stopped"

	# --- --stop-when-empty with only delayed and backing-off jobs ---
	empty_tables
	done_id=$(jq_ enqueue x '{"out":"done"}')
	fail_id=$(jq_ enqueue fail '{"exit":75,"err":"later"}')
	delayed_id=$(jq_ enqueue --delay 1h x '{"out":"delayed"}')
	work --stop-when-empty
	is "$RC" 0 "[$mode] --stop-when-empty exits 0"
	ok $([ "$ELAPSED_MS" -lt $((15000 * TIME_SCALE)) ]; echo $?) "[$mode] ... promptly, with a backing-off and a delayed job left (${ELAPSED_MS}ms)"
	is "$(sql "SELECT GROUP_CONCAT(outcome ORDER BY job_id) FROM job_runs")" "done,retry" "[$mode] ... after running the ready ones"
	is "$(sql "SELECT GROUP_CONCAT(CONCAT(id, ':', attempts, ':', available_at > UTC_TIMESTAMP(6)) ORDER BY id) FROM jobs")" \
		"$fail_id:1:1,$delayed_id:0:1" "[$mode] ... which are both still waiting"

	# --- SIGTERM while a handler runs ---
	empty_tables
	slow=$(jq_ enqueue slow '{}')
	other=$(jq_ enqueue x '{"out":"not taken"}')
	rm -f "$T/slow.started"
	start_worker
	wlog=$T/worker.$((${#BG_PIDS[@]} - 1)).log
	wait_log 30 "$wlog" "worker started"
	wait_file 30 "$T/slow.started"
	ok $? "[$mode] SIGTERM: the 3 s handler started"
	kill -TERM "$WORKER_PID"
	wait_exit 30 "$WORKER_PID"
	is "$?" 0 "[$mode] SIGTERM: the worker exits 0"
	is "$(sql "SELECT CONCAT_WS('|', outcome, exit_status, duration_ms >= 2500) FROM job_runs WHERE job_id = $slow")" "done|exit 0|1" \
		"[$mode] SIGTERM: it waited for the running handler and wrote its outcome"
	is "$(sql "SELECT COUNT(*) FROM jobs WHERE id = $slow")" 0 "[$mode] SIGTERM: that job is done (deleted)"
	is "$(sql "SELECT CONCAT_WS('|', attempts, lease_token IS NULL) FROM jobs WHERE id = $other")" "0|1" \
		"[$mode] SIGTERM: no new job was taken"
	like "$(cat "$wlog")" "SIGTERM: taking no new jobs, waiting for 1 running" "[$mode] SIGTERM: logged"
	is "$(sql "SELECT COUNT(*) FROM jobq_workers")" 0 "[$mode] SIGTERM: the worker unregistered"

	# --- a second SIGTERM: terminate, give the job back ---
	empty_tables
	slow=$(jq_ enqueue slow30 '{}')
	rm -f "$T/slow30.started"
	start_worker
	wlog=$T/worker.$((${#BG_PIDS[@]} - 1)).log
	wait_log 30 "$wlog" "worker started"
	wait_file 30 "$T/slow30.started"
	ok $? "[$mode] second SIGTERM: the 30 s handler started"
	t0=$(now_ms)
	kill -TERM "$WORKER_PID"
	wait_log 10 "$wlog" "SIGTERM: taking no new jobs"
	ok $? "[$mode] second SIGTERM: the first one was seen"
	kill -TERM "$WORKER_PID"
	wait_exit 30 "$WORKER_PID"
	is "$?" 0 "[$mode] second SIGTERM: the worker exits 0"
	ms=$(($(now_ms) - t0))
	ok $([ "$ms" -lt $((15000 * TIME_SCALE)) ]; echo $?) "[$mode] second SIGTERM: without waiting for the handler (${ms}ms)"
	is "$(sql "SELECT CONCAT_WS('|', attempts, lease_token IS NULL, available_at <= UTC_TIMESTAMP(6)) FROM jobs WHERE id = $slow")" "0|1|1" \
		"[$mode] second SIGTERM: the job is back, ready, its attempt refunded"
	is "$(sql "SELECT outcome FROM job_runs WHERE job_id = $slow")" "interrupted" "[$mode] second SIGTERM: the run is recorded as interrupted"

	# --- SIGTERM after SIGTERM until it is gone: still a clean exit ---
	# A stop signal that races the exit (after the loop ended) has
	# nothing left to stop: it must not turn exit 0 into death by signal.
	empty_tables
	for i in 1 2 3; do
		start_worker
		wlog=$T/worker.$((${#BG_PIDS[@]} - 1)).log
		wait_log 30 "$wlog" "worker started"
		while kill -TERM "$WORKER_PID" 2>/dev/null; do :; done
		wait "$WORKER_PID"
		is "$?" 0 "[$mode] SIGTERM storm $i: the worker exits 0"
	done

	ok $(grep -qE 'Sanitizer|runtime error' "$T/work.$mode.log" "$T"/worker.*.log; [ $? = 1 ]; echo $?) \
		"[$mode] no sanitizer report in the worker logs"
done
finish
