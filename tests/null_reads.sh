#!/bin/bash
# ISSUE 8, defect 7: every column read from the database may be NULL (or
# give NULL once computed) unless the schema forbids it, and no reader
# dereferences one unchecked.  `jobq status` died with SIGSEGV on a queue
# whose rows have a lease token and no lease expiry (a NULL SUM()); the
# same kind of row, and zero dates (which the server's default sql_mode
# accepts in NOT NULL DATETIME columns), go through every reading command.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
setup null_reads

write_conf <<EOC
[worker]
poll_interval = 20ms
reserve_mode = skip-locked

[queue default]
[queue other]

[handler echo]
exec = $HANDLERS/echo.sh
EOC

# run ARGS: jobq with the test configuration; sets RC, OUT, ERR.
run() {
	jq_ "$@" >"$T/out" 2>"$T/err"
	RC=$?
	OUT=$(cat "$T/out")
	ERR=$(cat "$T/err")
}

# The reproduction: a queue whose only rows hold a lease token and no
# expiry (no reserved row at all, so SUM() over the group is NULL).
ids=$(sql "INSERT INTO jobs (queue, type, payload, lease_token, reserved_by)
	VALUES ('other', 'echo', '{}', 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', NULL),
	       ('other', 'echo', '{}', 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb', 'gone:1:x');
	SELECT GROUP_CONCAT(id) FROM jobs")
tok1=${ids%%,*}
run status
is "$RC" "0" "status with lease tokens and no lease expiry exits 0 ($ERR)"
like "$OUT" "other +0 +0 +0 +2 +0" "the two rows count as stale: a token without expiry is no live lease"
run status --json -q other
is "$RC" "0" "status --json -q other exits 0"
like "$(echo "$OUT" | tr -d ' \n\t')" '"other":\{"ready":0,"delayed":0,"reserved":0,"stale":2,"failed":0' "and says the same in JSON"

run show "$tok1"
is "$RC" "0" "show of a row with a token and no expiry exits 0 ($ERR)"
like "$OUT" "job $tok1: stale" "its state is stale"
like "$OUT" "lease +none" "and its lease is shown as none"
run show --json "$tok1"
is "$RC" "0" "show --json of it exits 0"
like "$(echo "$OUT" | tr -d ' \n\t')" '"lease_expires_at":null' "lease_expires_at is null in JSON"

run release-stale
is "$RC" "0" "release-stale exits 0"
is "$(sql "SELECT COUNT(*) FROM jobs WHERE lease_token IS NULL AND queue = 'other'")" "2" \
	"release-stale releases leases that have no expiry"

# Zero dates in every table, written by hand.
zid=$(sql "INSERT INTO jobs (queue, type, payload, available_at, created_at)
	VALUES ('default', 'echo', '{}', '9999-12-31 23:59:59', '0000-00-00 00:00:00'); SELECT LAST_INSERT_ID()")
run show "$zid"
is "$RC" "0" "show of a job created at the zero date exits 0 ($ERR)"
like "$OUT" "job $zid: delayed" "and shows it as delayed"
run status
is "$RC" "0" "status with zero dates exits 0"

sql "INSERT INTO failed_jobs (id, queue, type, payload, exception, failed_at, created_at)
	VALUES (7000000, 'default', 'echo', '{}', 'boom', '0000-00-00 00:00:00', '0000-00-00 00:00:00')"
run failed list
is "$RC" "0" "failed list with a zero failed_at exits 0 ($ERR)"
like "$OUT" "7000000" "and lists the row"
run failed show 7000000
is "$RC" "0" "failed show of it exits 0 ($ERR)"

sql "INSERT INTO job_runs (job_id, queue, type, attempt, worker, started_at, duration_ms, outcome, exit_status)
	VALUES (7000001, 'default', 'echo', 1, 'w', '0000-00-00 00:00:00', 5, 'done', 'exit 0')"
run show 7000001
is "$RC" "0" "show of a done job whose run started at the zero date exits 0 ($ERR)"
like "$OUT" "job 7000001: done" "and shows it as done"

sql "INSERT INTO jobq_workers (id, host, pid, queues, concurrency, heartbeat_ms, started_at, last_seen_at)
	VALUES ('zero:1:x', 'zero', 1, 'default', 1, 1000, '0000-00-00 00:00:00', '0000-00-00 00:00:00')"
run workers
is "$RC" "0" "workers with zero dates in the registry exits 0 ($ERR)"
run workers --json
is "$RC" "0" "workers --json exits 0"
run status
is "$RC" "0" "status with that registry row exits 0"

run check --explain
is "$RC" "0" "check --explain over these rows exits 0 ($ERR)"

# And a worker takes what is due among them and leaves the rest readable.
timeout 60 "$JOBQ" -c "$CONF" work -q other --stop-when-empty 2>"$T/work.log"
is "$?" "0" "a worker drains the released rows"
is "$(sql "SELECT COUNT(*) FROM job_runs WHERE outcome = 'done' AND queue = 'other'")" "2" "both ran"
finish
