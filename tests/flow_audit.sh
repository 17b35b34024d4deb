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
