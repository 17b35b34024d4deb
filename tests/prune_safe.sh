#!/bin/bash
# jobq prune keeps what a person still needs (ISSUE-8 defects 14 and 13):
# dead-lettered jobs stay unless --failed; --keep-failed is accepted as
# the default it now is; --dry-run counts and changes nothing; without a
# terminal nothing is deleted unless --yes; on a terminal the question
# states the counts and only a yes deletes; --older-than 0 never removes
# the registry row of a worker that is alive.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
. "$top_srcdir/tests/operator/common.sh"
setup prune_safe

write_conf <<EOC
[worker]
poll_interval = 20ms
heartbeat = 200ms

[queue default]

[handler echo]
exec = $HANDLERS/echo.sh
EOC

# fill: 3 old runs and 1 new, 2 old dead letters and 1 new, one gone worker.
fill() {
	empty_tables
	sql "INSERT INTO job_runs (job_id, queue, type, attempt, worker, started_at, duration_ms, outcome, exit_status) VALUES
	     (1, 'default', 'echo', 1, 'x', UTC_TIMESTAMP(6) - INTERVAL 3 DAY, 1, 'done', 'exit 0'),
	     (2, 'default', 'echo', 1, 'x', UTC_TIMESTAMP(6) - INTERVAL 2 DAY, 1, 'done', 'exit 0'),
	     (3, 'default', 'echo', 1, 'x', UTC_TIMESTAMP(6) - INTERVAL 25 HOUR, 1, 'dead', 'exit 65'),
	     (4, 'default', 'echo', 1, 'x', UTC_TIMESTAMP(6), 1, 'done', 'exit 0')"
	sql "INSERT INTO failed_jobs (id, queue, type, payload, exception, failed_at) VALUES
	     (31, 'default', 'echo', '{}', 'e', UTC_TIMESTAMP(6) - INTERVAL 5 DAY),
	     (32, 'default', 'echo', '{}', 'e', UTC_TIMESTAMP(6) - INTERVAL 2 DAY),
	     (33, 'default', 'echo', '{}', 'e', UTC_TIMESTAMP(6) - INTERVAL 1 HOUR)"
	sql "INSERT INTO jobq_workers (id, host, pid, queues, concurrency, heartbeat_ms, started_at, last_seen_at) VALUES
	     ('h:1:gone', 'h', 1, 'default', 1, 10000, UTC_TIMESTAMP(6) - INTERVAL 5 DAY, UTC_TIMESTAMP(6) - INTERVAL 2 DAY)"
}
state() { echo "$(count job_runs)/$(count failed_jobs)/$(count jobq_workers)"; }
# script(1) gives jobq a terminal; the answer comes on its stdin.
on_tty() {
	local answer=$1
	shift
	printf '%s\n' "$answer" | script -qec "$JOBQ -c $CONF $*" /dev/null >"$T/tty" 2>&1
	RC=$?
	TTY=$(tr -d '\r' <"$T/tty")
}

# ---- dead letters are kept unless asked ----
fill
on_tty y prune --older-than 1d
like "$TTY" "pruned 3 runs, 0 failed jobs, 1 gone worker, 0 schedule fires" "prune --older-than 1d (answered yes): runs and gone workers, no dead letters"
is "$(sql "SELECT GROUP_CONCAT(id ORDER BY id) FROM failed_jobs")" "31,32,33" "every dead-lettered job is still there"
fill
run prune --older-than 1d --yes
is "$RC/$OUT/$(count failed_jobs)" "0/pruned 3 runs, 0 failed jobs, 1 gone worker, 0 schedule fires/3" "the same with --yes"
fill
run prune --older-than 1d --failed --yes
is "$RC/$OUT" "0/pruned 3 runs, 2 failed jobs, 1 gone worker, 0 schedule fires" "--failed: dead letters older than 1d too"
is "$(sql "SELECT GROUP_CONCAT(id) FROM failed_jobs")" "33" "only the old dead letters went"
fill
run prune --older-than 1d --keep-failed --yes
is "$RC/$(count failed_jobs)" "0/3" "--keep-failed is accepted (the default now)"
run prune --help
like "$OUT" "--keep-failed +accepted for older scripts" "--help says what --keep-failed does now"
run prune --older-than 1d --failed --keep-failed --yes
is "$RC" 64 "--failed with --keep-failed: 64"
like "$ERR" "contradict" "and says why"

# ---- --dry-run ----
fill
run prune --older-than 1d --failed --dry-run
is "$RC/$OUT" "0/would prune 3 runs, 2 failed jobs, 1 gone worker, 0 schedule fires" "--dry-run prints the counts"
is "$(state)" "4/3/1" "and deletes nothing"
run prune --older-than 1d --dry-run
is "$OUT" "would prune 3 runs, 0 failed jobs, 1 gone worker, 0 schedule fires" "--dry-run without --failed counts no dead letters"

# ---- no terminal, no --yes ----
run prune --older-than 1d
is "$RC/$(state)" "64/4/3/1" "no terminal and no --yes: 64, nothing deleted"
like "$ERR" "no terminal to confirm.*pass --yes" "and says to pass --yes"
run prune --older-than 1d </dev/null
is "$RC" 64 "the same with stdin from /dev/null"

# ---- on a terminal: the question states the counts ----
on_tty n prune --older-than 1d --failed
like "$TTY" "delete 3 runs older than 1d, 2 failed jobs, 1 gone worker and 0 schedule fires\? \[y/N\]" "on a terminal it asks, stating the counts"
like "$TTY" "not confirmed; nothing deleted" "a no deletes nothing"
is "$RC/$(state)" "1/4/3/1" "and exits 1, everything still there"
on_tty "" prune --older-than 1d
is "$(state)" "4/3/1" "an empty answer is a no"
on_tty y prune --older-than 1d --failed
like "$TTY" "pruned 3 runs, 2 failed jobs, 1 gone worker, 0 schedule fires" "a yes deletes"
is "$RC/$(state)" "0/1/1/0" "exit 0; what was counted is gone"

# ---- --older-than 0 and live workers ----
empty_tables
start_worker --queue default
wpid=$WORKER_PID
wait_for_sql 20 "SELECT COUNT(*) FROM jobq_workers WHERE pid = $wpid" 1 || diag "the worker never registered"
started=$(sql "SELECT started_at FROM jobq_workers WHERE pid = $wpid")
sql "INSERT INTO jobq_workers (id, host, pid, queues, concurrency, heartbeat_ms, started_at, last_seen_at) VALUES
     ('h:2:gone', 'h', 2, 'default', 1, 200, UTC_TIMESTAMP(6) - INTERVAL 1 HOUR, UTC_TIMESTAMP(6) - INTERVAL 1 MINUTE)"
on_tty y prune --older-than 0
like "$TTY" "pruned 0 runs, 0 failed jobs, 1 gone worker, 0 schedule fires" "--older-than 0 (answered yes): only the worker gone for a minute"
# A worker whose row was deleted registers again at its next heartbeat,
# with a new started_at: the same started_at means the row was never gone.
is "$(sql "SELECT started_at FROM jobq_workers WHERE pid = $wpid")" "$started" "the live worker keeps its registry row (same started_at)"
run workers
like "$OUT" "alive" "and 'jobq workers' still shows it alive"
kill -TERM "$wpid"
wait_exit 20 "$wpid"

# ---- the runs of jobs not finished stay, as keep_done leaves them ----
# A job still retrying, and a dead-lettered one that --failed does not
# take, keep their history; --failed takes a deleted dead letter's runs.
empty_tables
sql "INSERT INTO jobs (id, queue, type, payload, available_at, attempts) VALUES
     (41, 'default', 'echo', '{}', UTC_TIMESTAMP() + INTERVAL 1 HOUR, 1)"
sql "INSERT INTO failed_jobs (id, queue, type, payload, exception, failed_at) VALUES
     (51, 'default', 'echo', '{}', 'e', UTC_TIMESTAMP(6) - INTERVAL 5 DAY),
     (52, 'default', 'echo', '{}', 'e', UTC_TIMESTAMP(6) - INTERVAL 1 HOUR)"
sql "INSERT INTO job_runs (job_id, queue, type, attempt, worker, started_at, duration_ms, outcome, exit_status) VALUES
     (40, 'default', 'echo', 1, 'x', UTC_TIMESTAMP(6) - INTERVAL 3 DAY, 1, 'done', 'exit 0'),
     (41, 'default', 'echo', 1, 'x', UTC_TIMESTAMP(6) - INTERVAL 3 DAY, 1, 'retry', 'exit 75'),
     (51, 'default', 'echo', 1, 'x', UTC_TIMESTAMP(6) - INTERVAL 6 DAY, 1, 'dead', 'exit 65'),
     (52, 'default', 'echo', 1, 'x', UTC_TIMESTAMP(6) - INTERVAL 3 DAY, 1, 'dead', 'exit 65')"
runs_left() { sql "SELECT GROUP_CONCAT(job_id ORDER BY job_id) FROM job_runs"; }
run prune --older-than 1d --dry-run
is "$OUT" "would prune 1 run, 0 failed jobs, 0 gone workers, 0 schedule fires" "--dry-run counts only the finished job's run"
run prune --older-than 1d --yes
is "$RC/$(runs_left)" "0/41,51,52" "a retrying job's and the dead letters' runs stay"
run prune --older-than 1d --failed --dry-run
is "$OUT" "would prune 1 run, 1 failed job, 0 gone workers, 0 schedule fires" "--failed --dry-run counts the old dead letter's run"
run prune --older-than 1d --failed --yes
is "$RC/$(runs_left)/$(sql "SELECT GROUP_CONCAT(id) FROM failed_jobs")" "0/41,52/52" \
	"--failed: the old dead letter goes with its runs; the newer one keeps its own"

finish
