#!/bin/bash
# Persistent handlers where their processes' lives meet the jobs: a
# process that exits right after its status line ("max requests") never
# has the next job counted as run by it; a process whose job was stopped
# (timeout, cancel) is not reused even when it answered the SIGTERM;
# processes slow to exit count against concurrency; the process's
# environment carries nothing of one job.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
setup persist_edges
TH=$top_srcdir/tests/handlers

pid_of() {
	sql "SELECT output FROM job_runs WHERE job_id = $1 ORDER BY id DESC LIMIT 1" | grep -o 'pid=[0-9]*' | head -n 1 |
		cut -d= -f2
}
run_of() {
	sql "SELECT CONCAT_WS('|', outcome, exit_status) FROM job_runs WHERE job_id = $1 ORDER BY id"
}

write_conf <<EOC
[worker]
poll_interval = 20ms
backoff = exponential 30s 4m
backoff_jitter = 0

[queue default]

[handler q]
exec = $TH/persist_raw.py
mode = persistent
on_success = after

[handler after]
exec = /bin/true

[handler t]
exec = $TH/persist_raw.py
mode = persistent
timeout = 1s
kill_grace = 5s
max_attempts = 5
EOC

# ---- a process that exits after each status line ----
# Each request goes out as soon as the status line before it is read:
# the process may already be on its way out.  Every job must reach a
# handler, and a job no handler read is never written done.
seen=$T/seen
: >"$seen"
for i in $(seq 1 30); do
	printf '{"type": "q", "payload": {"seen": "%s", "quit": true}}\n' "$seen"
done | jq_ enqueue --batch >"$T/ids" || echo "# enqueue failed"
timeout 120 "$JOBQ" -c "$CONF" work --stop-when-empty --concurrency 2 -v 2>"$T/quit.log"
is "$?" 0 "max requests: the worker exits 0"
is "$(sql "SELECT COUNT(*) FROM job_runs WHERE type = 'q' AND outcome = 'done'")" 30 "all 30 jobs are done"
is "$(sort -u "$seen" | wc -l)/$(wc -l <"$seen")" "30/30" "each reached a handler, once"
is "$(sql "SELECT COUNT(*) FROM job_runs WHERE type = 'after'")" 30 "on_success: one follow-up for each, no more"
is "$(sql "SELECT COUNT(*) FROM jobs")" 0 "nothing is left in the queue"
ok $(grep -qE 'Sanitizer|runtime error' "$T/quit.log"; [ $? = 1 ]; echo $?) "no sanitizer report in the worker log"

# ---- a stopped job's process is not reused, though it answered ----
empty_tables
a=$(jq_ enqueue t '{"pid": true, "sleep": 30, "termreply": 0}')
b=$(jq_ enqueue t '{"pid": true}')
timeout 120 "$JOBQ" -c "$CONF" work --stop-when-empty --concurrency 1 -v 2>"$T/stop.log"
like "$(run_of "$a")" "^retry\\|timed out after 1s" "a job over its timeout is retried, though its handler answered SIGTERM"
ok $([ -n "$(pid_of "$b")" ] && [ "$(pid_of "$b")" != "$(pid_of "$a")" ]; echo $?) \
	"the next job ran in a fresh process ($(pid_of "$a") -> $(pid_of "$b"))"

empty_tables
start_worker --concurrency 1
c=$(jq_ enqueue q '{"pid": true, "sleep": 30, "termreply": 0}')
wait_for_sql 30 "SELECT COUNT(*) FROM jobs WHERE id = $c AND lease_token IS NOT NULL" 1
sleep 0.5
jq_ cancel "$c" >/dev/null
d=$(jq_ enqueue q '{"pid": true}')
wait_for_sql 30 "SELECT COUNT(*) FROM job_runs WHERE job_id = $d" 1
like "$(run_of "$c")" "^cancelled" "a cancelled job is cancelled, though its handler answered SIGTERM"
ok $([ -n "$(pid_of "$d")" ] && [ -n "$(pid_of "$c")" ] && [ "$(pid_of "$d")" != "$(pid_of "$c")" ]; echo $?) \
	"the next job ran in a fresh process ($(pid_of "$c") -> $(pid_of "$d"))"
stop_workers

# ---- a control line's error names the line as written ----
empty_tables
k=$(jq_ enqueue t '{"ctl": ["{\"checkpoint\": 1}", "{\"progress\": 1}", "{\"progress\": 2}", "{\"progress\": 3}", "{\"bogus\": 1}"]}')
timeout 60 "$JOBQ" -c "$CONF" work --stop-when-empty --concurrency 1 2>"$T/ctl.log"
like "$(sql "SELECT error FROM job_runs WHERE job_id = $k")" "control channel line 5: unknown key 'bogus'" \
	"after a checkpoint and three progress lines, a bad line is named as line 5"

# ---- processes slow to exit count against concurrency ----
empty_tables
write_conf <<EOC
[worker]
poll_interval = 20ms

[queue default]

[handler s]
exec = $TH/persist_raw.py
mode = persistent
max_jobs = 1
kill_grace = 10s
env.LINGER = 0.7
max_attempts = 1
EOC
for i in $(seq 1 6); do
	echo '{"type": "s", "payload": {}}'
done | jq_ enqueue --batch >/dev/null
"$JOBQ" -c "$CONF" work --stop-when-empty --concurrency 1 2>"$T/linger.log" &
wpid=$!
peak=0
while kill -0 "$wpid" 2>/dev/null; do
	n=$(pgrep -f "$TH/persist_raw.py" -P "$wpid" | wc -l)
	[ "$n" -gt "$peak" ] && peak=$n
	sleep 0.05
done
wait "$wpid"
is "$?" 0 "slow to exit: the worker exits 0"
is "$(sql "SELECT COUNT(*) FROM job_runs WHERE outcome = 'done'")" 6 "slow to exit: all 6 jobs are done"
is "$peak" 1 "concurrency 1: never more than one handler process alive, those exiting included"

# ---- the process's environment has nothing of a job ----
empty_tables
write_conf <<EOC
[worker]
poll_interval = 20ms

[queue default]

[handler v]
exec = $TH/persist_raw.py
mode = persistent
max_attempts = 5
EOC
e1=$(jq_ enqueue --max-attempts 9 v '{"envmax": true, "pid": true}')
e2=$(jq_ enqueue v '{"envmax": true, "pid": true}')
timeout 60 "$JOBQ" -c "$CONF" work --stop-when-empty --concurrency 1 2>"$T/env.log"
is "$(pid_of "$e2")" "$(pid_of "$e1")" "both jobs ran in one process"
like "$(sql "SELECT output FROM job_runs WHERE job_id = $e2")" "envmax=unset" \
	"JOBQ_MAX_ATTEMPTS is not in its environment (each request carries its own limit)"
finish
