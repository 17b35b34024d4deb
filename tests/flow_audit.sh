#!/bin/bash
# Flow control where it meets the rest of jobq (the flow audit): each
# section is a defect that was found and fixed.
. "$top_srcdir/tests/lib.sh"
one_build normal "behaviour alone (in the normal build: it keeps the two builds' runs about as long)"
setup flow_audit

# ---- a limited type below its limit keeps the queue's order ----
# A type with a rate or max_running is claimed apart from the others.
# It was claimed first whatever its jobs' priority or age, so with its
# limit not reached it took every free slot: jobs of a smaller priority
# (or older) of other types waited for its whole backlog.  One slot, so
# the order the jobs ran in is the order they were claimed in.
for mode in skip-locked update; do
	empty_tables
	write_conf <<EOC
[worker]
poll_interval = 20ms
reserve_mode = $mode

[queue default]

[handler lim]
exec = /bin/true
rate = 1000/s

[handler cap]
exec = /bin/true
max_running = 5

[handler urgent]
exec = /bin/true
EOC
	{
		seq 6 | awk '{ print "{\"type\": \"lim\", \"payload\": {}, \"priority\": 10}" }'
		seq 4 | awk '{ print "{\"type\": \"cap\", \"payload\": {}, \"priority\": 5}" }'
		seq 3 | awk '{ print "{\"type\": \"urgent\", \"payload\": {}, \"priority\": -10}" }'
	} | jq_ enqueue --batch >/dev/null
	start_worker --concurrency 1 --stop-when-empty
	wait_exit $((30 * TIME_SCALE)) "$WORKER_PID"
	is "$?" 0 "[$mode] the worker drained the queue"
	is "$(sql "SELECT GROUP_CONCAT(type ORDER BY id SEPARATOR ' ') FROM job_runs")" \
		"urgent urgent urgent cap cap cap cap lim lim lim lim lim lim" \
		"[$mode] the jobs ran by priority, the limited types' among the others'"
	# Same priority: the oldest first, whatever type is limited.
	empty_tables
	for t in urgent lim urgent cap lim; do jq_ enqueue "$t" '{}' >/dev/null; done
	start_worker --concurrency 1 --stop-when-empty
	wait_exit $((30 * TIME_SCALE)) "$WORKER_PID"
	is "$(sql "SELECT GROUP_CONCAT(type ORDER BY id SEPARATOR ' ') FROM job_runs")" \
		"urgent lim urgent cap lim" "[$mode] at one priority the oldest due job runs first"
done

# ---- ... and shares a claim of several jobs in that order ----
# The fix above put the limited type's claim in its place but gave it
# the whole claim: at concurrency 4, one job of a type with a limit far
# from reached, at priority 0, brought three more of its priority 9
# with it, ahead of the other type's priority 5 (L0 L1 L3 L5); and at
# one priority its oldest job brought three of its newest, ahead of six
# older jobs of the other type (L0 L7 L8 L9).  Each group now takes the
# slots it wins in the queue's order.  Both limits go that way.
ran() { # the jobs run, as type and id less $1 (the first one's), in id order
	sql "SELECT GROUP_CONCAT(CONCAT(type, job_id - $1) ORDER BY job_id SEPARATOR ' ') FROM job_runs"
}
for mode in skip-locked update; do
	for limit in "max_running = 100" "rate = 1000/s"; do
		empty_tables
		write_conf <<EOC
[worker]
poll_interval = 20ms
reserve_mode = $mode

[queue default]

[handler L]
exec = /bin/true
$limit

[handler O]
exec = /bin/true
EOC
		{
			echo '{"type": "L", "payload": {}, "priority": 0}'
			for i in $(seq 10); do
				echo '{"type": "L", "payload": {}, "priority": 9}'
				echo '{"type": "O", "payload": {}, "priority": 5}'
			done
		} | jq_ enqueue --batch >/dev/null
		first=$(sql "SELECT MIN(id) FROM jobs")
		start_worker --concurrency 4 --max 4
		wait_exit $((30 * TIME_SCALE)) "$WORKER_PID"
		is "$(ran "$first")" "L0 O2 O4 O6" \
			"[$mode, $limit] concurrency 4: L at priority 0, then three O at 5 before any L at 9"
		empty_tables
		{
			echo '{"type": "L", "payload": {}}'
			for i in $(seq 6); do echo '{"type": "O", "payload": {}}'; done
			for i in $(seq 6); do echo '{"type": "L", "payload": {}}'; done
		} | jq_ enqueue --batch >/dev/null
		first=$(sql "SELECT MIN(id) FROM jobs")
		start_worker --concurrency 4 --max 4
		wait_exit $((30 * TIME_SCALE)) "$WORKER_PID"
		is "$(ran "$first")" "L0 O1 O2 O3" \
			"[$mode, $limit] concurrency 4, one priority: the oldest L, then the three oldest O, not newer L"
	done
done

# at_limit T PRIO WANT NAME: one T job at priority 0, six H at 1, six T
# at PRIO, and H's one place taken by a job held: the jobs that ran are
# WANT (in the test's loop over reservation modes, $mode).
at_limit() {
	local t=$1 prio=$2 want=$3 name=$4 i
	empty_tables
	{
		printf '{"type": "%s", "payload": {}, "priority": 0}\n' "$t"
		for i in $(seq 6); do echo '{"type": "H", "payload": {}, "priority": 1}'; done
		for i in $(seq 6); do printf '{"type": "%s", "payload": {}, "priority": %d}\n' "$t" "$prio"; done
	} | jq_ enqueue --batch >/dev/null
	first=$(sql "SELECT MIN(id) FROM jobs")
	sql "INSERT INTO jobs (queue, type, payload, available_at, reserved_at, lease_token, lease_expires_at)
		VALUES ('default', 'H', '{}', UTC_TIMESTAMP(6), UTC_TIMESTAMP(6), 'held', UTC_TIMESTAMP(6) + INTERVAL 1 HOUR)"
	start_worker --concurrency 4 --max 4
	wait_exit $((30 * TIME_SCALE)) "$WORKER_PID"
	is "$(ran "$first")" "$want" "[$mode] $name"
}

# A type at its limit holds no one back: the slots its jobs would win
# go to the others (O0, then the O at 5 though H's jobs come before
# them; F0, then F's priority 2 jobs).  H has one job running, its
# max_running.
for mode in skip-locked update; do
	empty_tables
	write_conf <<EOC
[worker]
poll_interval = 20ms
reserve_mode = $mode

[queue default]

[handler H]
exec = /bin/true
max_running = 1

[handler F]
exec = /bin/true
rate = 1000/s

[handler O]
exec = /bin/true
EOC
	at_limit O 5 "O0 O7 O8 O9" "H at its limit: its slots go to the other types"
	at_limit F 2 "F0 F7 F8 F9" "H at its limit: its slots go to F, claimed before it"
done

# A limited type and the types without a limit that share a claim are
# claimed in one transaction: only the limited type's jobs are starts of
# its rate (R0, then O1 O2 O3: one start of R, not four).
for mode in skip-locked update; do
	empty_tables
	sql "DELETE FROM jobq_starts"
	write_conf <<EOC
[worker]
poll_interval = 20ms
reserve_mode = $mode

[queue default]

[handler R]
exec = /bin/true
rate = 3/1h

[handler O]
exec = /bin/true
EOC
	{
		echo '{"type": "R", "payload": {}}'
		for i in $(seq 3); do echo '{"type": "O", "payload": {}}'; done
		for i in $(seq 3); do echo '{"type": "R", "payload": {}}'; done
	} | jq_ enqueue --batch >/dev/null
	first=$(sql "SELECT MIN(id) FROM jobs")
	start_worker --concurrency 4 --max 4
	wait_exit $((30 * TIME_SCALE)) "$WORKER_PID"
	is "$(ran "$first"):$(sql "SELECT COUNT(*) FROM jobq_starts WHERE scope = 'type:R'")" "R0 O1 O2 O3:1" \
		"[$mode] a claim of R with the other types charges R's rate one start"
done

# ---- a paused queue the configuration no longer lists ----
# `jobq status` shows it paused (its jobs are in the database), and
# `jobq resume` refused it as unknown: only SQL could let it go.
empty_tables
write_conf <<EOC
[queue default]

[handler echo]
exec = /bin/true
EOC
sql "INSERT INTO jobq_paused (queue) VALUES ('gone')"
sql "INSERT INTO jobs (queue, type, payload, available_at) VALUES ('gone', 'echo', '{}', UTC_TIMESTAMP())"
like "$(jq_ status)" $'\ngone .* paused\n' "status shows the unlisted queue paused"
out=$(jq_ resume gone 2>"$T/err")
is "$? $out" "0 queue gone resumed (it has no [queue] section)" "resume lets it go"
is "$(sql "SELECT COUNT(*) FROM jobq_paused")" 0 "and it is no longer paused"
jq_ resume gone 2>"$T/err"
is "$?" 65 "resuming it again: unknown queue, as before"
like "$(cat "$T/err")" "^jobq: resume: unknown queue 'gone' \(no \[queue gone\] section in " "and says which"
jq_ pause gone 2>/dev/null
is "$? $(sql "SELECT COUNT(*) FROM jobq_paused")" "65 0" "pausing an unlisted queue is still refused, and writes nothing"

# ---- an expired holder of a unique key ----
# A job past its expires_at that no worker swept yet (none runs: a cron
# set-up between runs) kept its key, so the next enqueue was refused in
# favour of a job that can never start.  The enqueue ends it as expired
# (a run row, as a sweep writes) and takes the key.
empty_tables
write_conf <<EOC
[queue default]

[handler echo]
exec = /bin/true
EOC
old=$(jq_ enqueue -u k2 --expires-in 2h --delay 1h echo '{}')
sql "UPDATE jobs SET expires_at = UTC_TIMESTAMP(6) - INTERVAL 1 SECOND WHERE id = $old"
new=$(jq_ enqueue -u k2 echo '{}' 2>"$T/err")
ok "$([ -n "$new" ] && [ "$new" != "$old" ]; echo $?)" "an enqueue after the holder expired gets a job of its own"
is "$(sql "SELECT COUNT(*) FROM jobs WHERE unique_key = 'k2' AND id = '$new'")" 1 "... which holds the key"
is "$(sql "SELECT outcome FROM job_runs WHERE job_id = $old")" expired "... the expired holder ended expired"
is "$(cat "$T/err")" "" "... and nothing is said"
held=$(jq_ enqueue -u k2 echo '{}' 2>/dev/null)
is "$held" "$new" "a live holder still keeps its key"
sql "UPDATE jobs SET expires_at = UTC_TIMESTAMP(6) - INTERVAL 1 SECOND, lease_token = 'x',
	lease_expires_at = UTC_TIMESTAMP(6) + INTERVAL 1 MINUTE WHERE id = $new"
held=$(jq_ enqueue -u k2 echo '{}' 2>/dev/null)
is "$held:$(sql "SELECT COUNT(*) FROM job_runs WHERE job_id = $new")" "$new:0" \
	"a holder past its expiry but reserved (its claim ends it) keeps the key"

# ---- a unique key with a space at its end ----
# The column's collation pads: 'pad ' collided with 'pad' as its holder.
jq_ enqueue -u 'pad ' echo '{}' >/dev/null 2>"$T/err"
is "$?:$(sql "SELECT COUNT(*) FROM jobs WHERE unique_key LIKE 'pad%'")" "64:0" "a key ending in a space: 64, nothing written"
like "$(cat "$T/err")" "--unique-key: 'pad ' ends in a space" "... naming it"

finish
