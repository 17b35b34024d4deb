#!/bin/bash
# A job handed off to a worker by the outcome that releases it (queue.h:
# struct handoff) has its attempt counted in that outcome's transaction,
# as a claim counts the jobs it starts at once.  Such a job must never
# come back with its attempt counted though it never ran:
# (a) a worker whose running places are full (a job reserved ahead took
#     the slot) is not handed the released job: it is left to any claim,
#     so a SIGKILL of the worker costs it nothing (max_attempts 1: it
#     runs, where it used to be dead-lettered unrun), in both handler
#     modes;
# (b) a hand-off whose answer was lost, read back by the next write
#     while the worker stops (SIGTERM), is given back, attempt refunded,
#     not left leased to a worker that is gone.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
setup handoff_charge
TH=$top_srcdir/tests/handlers
LOG=$T/log

# conf EXTRA: the step handler, max_attempts 1, and the worker's keys.
conf() {
	write_conf <<EOC
[worker]
poll_interval = 20ms
reserve_ttl = 3s
reserve_ahead = 2

[queue default]

[handler step]
exec = $TH/deps_log.py $LOG ${1:-exec}
env.PYTHONPATH = $HANDLERS
max_attempts = 1
${2:-}
EOC
}

# until_ok SECS CMD...: runs CMD every 0.1 s until it succeeds, for up
# to SECS seconds; 1 when it never did.
until_ok() {
	local secs=$1 i
	shift
	for ((i = 0; i < secs * 10; i++)); do
		"$@" && return 0
		sleep 0.1
	done
	return 1
}

# runs NAME: how many times NAME started, by the log.
runs() {
	grep -c "^start $1 " "$LOG" 2>/dev/null
}

# ---- (a) no hand-off into a slot reserved ahead ----
for hmode in exec persistent; do
	empty_tables
	sql "DELETE FROM jobq_deps"
	rm -f "$LOG" "$T/gate"
	extra=""
	[ $hmode = persistent ] && extra="mode = persistent"
	conf $hmode "$extra"
	m="[$hmode]"
	a=$(jq_ enqueue step "{\"name\": \"A\", \"gate\": \"$T/gate\"}")
	b=$(jq_ enqueue --after "$a" step '{"name": "B"}')
	c=$(jq_ enqueue step '{"name": "C", "sleep": 60}')
	d=$(jq_ enqueue step '{"name": "D"}')
	start_worker --concurrency 1
	w=$WORKER_PID
	wait_for_sql 30 "SELECT COUNT(*) FROM jobs WHERE id IN ($c, $d) AND lease_token IS NOT NULL" 2
	ok $? "$m A runs, C and D are reserved ahead"
	touch "$T/gate"
	until_ok 30 grep -q '^start C ' "$LOG"
	ok $? "$m A ended, and C, reserved ahead, started in its slot"
	wait_for_sql 30 "SELECT COUNT(*) FROM jobs WHERE id = $a" 0
	ok $? "$m A's outcome is written"
	is "$(sql "SELECT CONCAT(attempts, '/', lease_token IS NULL, '/', waiting_on) FROM jobs WHERE id = $b")" "0/1/0" \
		"$m B is released, not handed to the worker with no place to run it (attempts 0, no lease)"
	kill -KILL "$w"
	wait_exit 30 "$w"
	# C's lease runs out (3 s); D comes back uncharged, as a claim
	# leaves a job reserved ahead.
	wait_for_sql 30 "SELECT COUNT(*) FROM jobs WHERE id = $c AND lease_expires_at < UTC_TIMESTAMP(6)" 1
	timeout 60 "$JOBQ" -c "$CONF" work --stop-when-empty 2>"$T/w2.$hmode.log"
	is "$(runs B)/$(runs D)" "1/1" "$m after the SIGKILL, B and D each ran once"
	is "$(sql "SELECT COUNT(*) FROM failed_jobs WHERE id IN ($b, $d)")" 0 "$m neither is dead-lettered unrun"
	is "$(sql "SELECT GROUP_CONCAT(attempt ORDER BY id) FROM job_runs WHERE job_id IN ($b, $d) AND outcome = 'done'")" "1,1" \
		"$m each ran as its first attempt"
	is "$(sql "SELECT COUNT(*) FROM failed_jobs WHERE id = $c")" 1 "$m C, started and killed with its worker, is dead (max_attempts 1)"
done

# ---- (b) a hand-off whose answer was lost, and a SIGTERM ----
empty_tables
sql "DELETE FROM jobq_deps"
rm -f "$LOG"
PX=$T/px
replylost_start "$PX"
SOCKET=$T/p.sock conf exec
a=$(jq_ enqueue step '{"name": "A", "sleep": 0.3}')
b=$(jq_ enqueue --after "$a" step '{"name": "B"}')
echo "DELETE FROM jobs WHERE id = $a AND lease_token" >"$PX/drop"
start_worker
w=$WORKER_PID
until_ok 30 test -s "$PX/dropped"
ok $? "A's outcome, which hands B off, was applied and its answer lost"
kill -TERM "$w"
wait_exit 30 "$w"
ok $? "the worker exits on SIGTERM"
is "$(sql "SELECT CONCAT(attempts, '/', lease_token IS NULL) FROM jobs WHERE id = $b")" "0/1" \
	"B was read back and given back: attempts 0, no lease"
is "$(runs B)" 0 "B did not run"
SOCKET=$T/p.sock conf exec
timeout 60 "$JOBQ" -c "$CONF" work --stop-when-empty 2>"$T/w3.log"
is "$(runs A)/$(runs B)" "1/1" "the next worker runs B, once; A ran once"
is "$(sql "SELECT COUNT(*) FROM failed_jobs")" 0 "nothing is dead-lettered"
finish
