#!/bin/bash
# A worker that dies by any means leaves no handler behind (issue 19,
# item 4): within 2 s of a SIGKILL to the worker, every process it
# started for a job -- the handler's whole process group, grandchildren
# included -- is gone, in exec and in persistent mode, so that no job's
# two runs can overlap once its lease (here 3 s) has expired.  The
# worker's guard process (src/guard.c) does it; with the worker alive it
# changes nothing (the job's next run, by a new worker, is done).  The
# same holds for a SIGKILL to the worker's whole process group (a shell's
# `kill -9 %1`, timeout(1)'s -k, supervisord's killasgroup): the guard
# is not in that group, so it lives to stop the handlers, and the job's
# run after its lease expires is the only one.
#
# Item 6: an attempt is charged when the handler starts.  The jobs the
# killed worker held reserved ahead, never started, come back with
# nothing charged: with max_attempts = 1 they still run, once.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
setup orphans
TH=$top_srcdir/tests/handlers

# A process is gone once it is dead, reaped or not (an orphan's zombie
# waits for whatever reaps orphans here).
alive() {
	local st
	st=$(sed -n 's/^[0-9]* (.*) \([A-Z]\).*/\1/p' "/proc/$1/stat" 2>/dev/null)
	[ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ] && echo alive || echo gone
}

for cell in exec/pid persistent/pid exec/group persistent/group; do
	mode=${cell%/*}
	how=${cell#*/}
	empty_tables
	rm -f "$T"/pids.*
	write_conf <<EOC
[worker]
poll_interval = 20ms
reserve_ttl = 3s

[queue default]

[handler slow]
exec = $TH/orphan.py $mode $T
mode = $mode
max_running = 1
env.DIR = $T
EOC
	id=$(jq_ enqueue slow '{}')
	if [ "$how" = pid ]; then
		start_worker
		w1=$WORKER_PID
	else # a process group of its own, led by the worker, as a shell's job is
		setsid "$JOBQ" -c "$CONF" work 2>"$T/worker.$mode.group.log" &
		w1=$!
		BG_PIDS+=("$w1")
	fi
	for ((i = 0; i < 100; i++)); do [ -s "$T/pids.$id" ] && break; sleep 0.1; done
	read -r handler grandchild <"$T/pids.$id"
	is "$(alive "$handler"),$(alive "$grandchild")" "alive,alive" "[$cell] the handler and its grandchild run"
	if [ "$how" = pid ]; then
		kill -KILL "$w1"
	else
		is "$(ps -o pgid= -p "$w1" | tr -d ' ')" "$w1" "[$cell] the worker leads its process group"
		kill -KILL -- "-$w1"
	fi
	wait "$w1" 2>/dev/null
	t0=$(date +%s%N)
	for ((i = 0; i < 40; i++)); do
		[ "$(alive "$handler"),$(alive "$grandchild")" = gone,gone ] && break
		sleep 0.05
	done
	ms=$((($(date +%s%N) - t0) / 1000000))
	is "$(alive "$handler"),$(alive "$grandchild")" "gone,gone" \
		"[$cell] SIGKILL to the worker's $how: handler and grandchild are gone within 2 s (${ms} ms)"
	ok "$([ "$ms" -le 2000 ]; echo $?)" "[$cell] ... and it took at most 2000 ms"

	# The job comes back once its lease expires; the next run is the only one.
	rm -f "$T/pids.$id"
	start_worker
	w2=$WORKER_PID
	for ((i = 0; i < 150; i++)); do [ -s "$T/pids.$id" ] && break; sleep 0.1; done
	read -r handler2 grandchild2 <"$T/pids.$id" 2>/dev/null
	ok "$([ -n "${handler2:-}" ] && [ "$handler2" != "$handler" ]; echo $?)" \
		"[$cell] a new worker runs the job again after its lease expired"
	is "$(pgrep -fc "orphan.py $mode $T" || true)" 1 "[$cell] one handler of the type runs (max_running = 1 holds)"
	kill -TERM "$w2"
	kill -TERM "$grandchild2" 2>/dev/null
	wait_exit 30 "$w2" >/dev/null
	is "$(alive "$handler2"),$(alive "$grandchild2")" "gone,gone" \
		"[$cell] a worker that stops normally leaves nothing behind either"
	# What an unguarded kill left, so that it is not counted again.
	[ "$(alive "$grandchild")" = gone ] || kill -KILL -- "-$handler" 2>/dev/null
done

for mode in exec persistent; do
	empty_tables
	write_conf <<EOC
[worker]
poll_interval = 20ms
reserve_ttl = 3s
reserve_ahead = 6

[queue default]

[handler first]
exec = /bin/sleep 60
max_attempts = 1

[handler quick]
exec = $TH/helper_exit.py
mode = $mode
max_attempts = 1
env.PYTHONPATH = $HANDLERS
env.PYTHONDONTWRITEBYTECODE = 1
EOC
	first=$(jq_ enqueue first '{}')
	for i in 1 2 3 4 5 6; do jq_ enqueue quick '{"exit": 0}' >/dev/null; done
	start_worker --concurrency 1
	w1=$WORKER_PID
	for ((i = 0; i < 100; i++)); do
		[ "$(sql "SELECT COUNT(*) FROM jobs WHERE lease_token IS NOT NULL")" = 7 ] && break
		sleep 0.1
	done
	is "$(sql "SELECT COUNT(*) FROM jobs WHERE lease_token IS NOT NULL")" 7 \
		"[$mode] item 6: one job runs, six wait reserved ahead"
	is "$(sql "SELECT GROUP_CONCAT(attempts ORDER BY id) FROM jobs")" "1,0,0,0,0,0,0" \
		"[$mode] item 6: only the started job is charged"
	kill -KILL "$w1"
	wait "$w1" 2>/dev/null
	sleep 3
	timeout 60 "$JOBQ" -c "$CONF" work --stop-when-empty --concurrency 1 2>"$T/charge.$mode.log"
	is "$(sql "SELECT COUNT(*) FROM job_runs WHERE type = 'quick' AND outcome = 'done' AND attempt = 1")" 6 \
		"[$mode] item 6: after the kill the six ran, each once, as attempt 1 of 1"
	is "$(sql "SELECT CONCAT_WS('|', id, reason) FROM failed_jobs")" \
		"$first|attempts used up (1 of 1; the last ended with its worker)" \
		"[$mode] item 6: the one that had started is the one whose attempts are used up"
done
finish
