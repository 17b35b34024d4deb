#!/bin/bash
# A job a worker's outcome ends dead, cancelled or expired ends the jobs
# that wait for it (policy all) in the outcome's own transaction, and
# theirs down the graph, in exec and persistent mode: none is left due,
# counted ready by `jobq status`, until a claim of its queue or a sweep
# takes it -- for good in a queue no worker serves.  Its end cancelled by
# a person while it runs, and a waiter gained while it runs (its outcome
# written again in full), end them the same way.  Those of policy any
# are released instead, and run.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
setup workflow_ends
TH=$top_srcdir/tests/handlers
LOG=$T/log

# rw QUEUE: status's READY/WAITING of QUEUE.
rw() { jq_ status --json | python3 -c "import json, sys
q = json.load(sys.stdin)['queues'].get('$1', {})
print('%d/%d' % (q.get('ready', 0), q.get('waiting', 0)))"; }
# ran IDS: job:outcome of the runs of the jobs IDS.
ran() { sql "SELECT GROUP_CONCAT(CONCAT(job_id, ':', outcome) ORDER BY job_id) FROM job_runs WHERE job_id IN ($1)"; }
work() { timeout 60 "$JOBQ" -c "$CONF" work --queue default --stop-when-empty 2>>"$T/w.log"; }
# started ID: waits up to 30 s for the handler of job ID to start.
started() {
	local i
	for ((i = 0; i < 300; i++)); do
		grep -q "^start [^ ]* $1 " "$LOG" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

for hmode in exec persistent; do
	empty_tables
	sql "DELETE FROM jobq_deps; DELETE FROM jobq_parked; DELETE FROM jobq_parked_deps"
	rm -f "$LOG" "$T/gate"
	extra=""
	[ $hmode = persistent ] && extra="mode = persistent
env.PYTHONPATH = $HANDLERS"
	write_conf <<EOC
[worker]
poll_interval = 20ms
max_attempts = 1
workdir = $T

[queue default]
[queue other]

[handler step]
exec = $TH/deps_log.py $LOG $hmode
$extra
EOC
	m="[$hmode]"

	# Dead: the chain behind it, in a queue no worker serves, ends in
	# the outcome's transaction; the job of policy any is released.
	a=$(jq_ enqueue step '{"name": "A", "exit": 1}')
	b=$(jq_ enqueue --queue other --after "$a" step '{"name": "B"}')
	c=$(jq_ enqueue --queue other --after "$b" step '{"name": "C"}')
	d=$(jq_ enqueue --queue other --after "$c" step '{"name": "D"}')
	y=$(jq_ enqueue --queue other --after-any "$a" step '{"name": "Y"}')
	is "$(rw other)" "0/4" "$m four jobs wait in queue other"
	work
	is "$(ran "$a,$b,$c,$d")" "$a:dead,$b:cancelled,$c:cancelled,$d:cancelled" \
		"$m A dead: the chain behind it ended cancelled by the worker's outcome"
	like "$(sql "SELECT error FROM job_runs WHERE job_id = $d")" "^cancelled by dependency $c \\(cancelled\\)" \
		"$m the last one naming the one before"
	is "$(rw other)" "1/0" "$m none of them left ready or waiting; Y (policy any) released, ready"
	is "$(sql "SELECT COUNT(*) FROM jobs WHERE cancel_by IS NOT NULL")/$(sql "SELECT COUNT(*) FROM jobq_deps WHERE job_id <> $y")" "0/0" \
		"$m no job left marked for cancelling, no rows of theirs left in jobq_deps"
	like "$(cat "$T/w.log")" "job $a: its end ended 3 jobs that waited for it" "$m the worker says so"
	timeout 60 "$JOBQ" -c "$CONF" work --queue other --stop-when-empty 2>>"$T/w.log"
	is "$(ran "$y")" "$y:done" "$m Y runs"
	sql "DELETE FROM failed_jobs"

	# Cancelled while it runs: the worker's outcome ends it cancelled,
	# and the chain behind it.
	a=$(jq_ enqueue step "{\"name\": \"A\", \"gate\": \"$T/gate\"}")
	b=$(jq_ enqueue --queue other --after "$a" step '{"name": "B"}')
	c=$(jq_ enqueue --queue other --after "$b" step '{"name": "C"}')
	work &
	W=$!
	started "$a"
	ok $? "$m A runs"
	jq_ cancel "$a" >/dev/null 2>&1
	wait_exit 60 "$W"
	is "$(ran "$a,$b,$c")" "$a:cancelled,$b:cancelled,$c:cancelled" \
		"$m A cancelled as it ran: the chain behind it ended with the worker's outcome"
	like "$(cat "$T/w.log")" "job $a: its end ended 2 jobs that waited for it" \
		"$m by the worker's outcome, not by a sweep or a claim after it"
	is "$(rw other)" "0/0" "$m none of it left ready or waiting"

	# A waiter gained while it runs: its lean outcome fails its fence
	# and is written again in full, which ends the waiter too.
	rm -f "$T/gate"
	a=$(jq_ enqueue step "{\"name\": \"A\", \"exit\": 1, \"gate\": \"$T/gate\"}")
	work &
	W=$!
	started "$a"
	ok $? "$m A runs"
	b=$(jq_ enqueue --queue other --after "$a" step '{"name": "B"}')
	c=$(jq_ enqueue --queue other --after "$b" step '{"name": "C"}')
	touch "$T/gate"
	wait_exit 60 "$W"
	is "$(ran "$a,$b,$c")" "$a:dead,$b:cancelled,$c:cancelled" \
		"$m a waiter gained while A ran ended with A's outcome, and the one behind it"
	like "$(cat "$T/w.log")" "job $a: its end ended 2 jobs that waited for it" \
		"$m by the outcome written again in full"
	is "$(rw other)" "0/0" "$m none of it left ready or waiting"
	sql "DELETE FROM failed_jobs"
done
is "$(grep -c -e 'Sanitizer' -e 'runtime error:' "$T/w.log")" 0 "no worker log holds a sanitizer report"
finish
