#!/bin/bash
# status and workers past [database] read_timeout (ISSUE-8 defect 17): a
# table locked by another session makes one part of the report time
# out; what was read is printed, the missing part is named on stderr,
# the exit status is 1 (69 only when nothing could be read), and the
# abandoned statement is cancelled on the server (nothing of ours is left
# in the process list).  Also: the per-type statistics read at most the
# newest 100,000 runs of the day and say so.
. "$top_srcdir/tests/lib.sh"
one_build normal "a timing test"
. "$top_srcdir/tests/operator/common.sh"
setup slow_query

write_conf <<EOC
read_timeout = 1s

[worker]
poll_interval = 20ms

[queue default]

[handler echo]
exec = $HANDLERS/echo.sh
EOC

sql "INSERT INTO jobq_workers (id, host, pid, queues, concurrency, heartbeat_ms, started_at, last_seen_at) VALUES
     ('h:1:slowtest', 'h', 1, 'default', 1, 3600000, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))"
sql "INSERT INTO job_runs (job_id, queue, type, attempt, worker, started_at, duration_ms, outcome, exit_status) VALUES
     (1, 'default', 'echo', 1, 'x', UTC_TIMESTAMP(6) - INTERVAL 1 HOUR, 100, 'done', 'exit 0')"
jq_ enqueue echo '{}' >/dev/null

# lock TABLE...: another session holds LOCK TABLES ... WRITE until unlock.
lock() {
	local t tables=""
	for t in "$@"; do tables="$tables${tables:+, }$t WRITE"; done
	"$TESTDB_SCRIPT" client "$JOBQ_TESTDB" -N -B "$DB" -e "LOCK TABLES $tables; SELECT 'jobq-locker', SLEEP(120)" >/dev/null 2>&1 &
	LOCKER=$!
	BG_PIDS+=("$LOCKER")
	wait_for_sql 20 "SELECT COUNT(*) FROM information_schema.processlist WHERE db = '$DB' AND info LIKE '%jobq-locker%'
	                 AND info NOT LIKE '%processlist%' AND state = 'User sleep'" 1 ||
		diag "the locker did not start"
}
unlock() {
	sql "KILL $(sql "SELECT id FROM information_schema.processlist WHERE db = '$DB' AND info LIKE '%jobq-locker%' AND info NOT LIKE '%processlist%'")"
	wait "$LOCKER" 2>/dev/null
}
# Statements of ours still on the server (the locker and this query aside).
OURS="SELECT COUNT(*) FROM information_schema.processlist WHERE db = '$DB' AND command = 'Query'
      AND info NOT LIKE '%jobq-locker%' AND info NOT LIKE '%processlist%'"
ours() { sql "$OURS"; }
# KILL statements the server ran so far (MariaDB may also notice a gone
# client by itself while it waits for a lock; the KILL is what stops a
# statement that is busy rather than waiting).
kills() { sql "SHOW GLOBAL STATUS LIKE 'Com_kill'" | cut -f2; }

# ---- workers: the statistics time out, the worker list is printed ----
lock job_runs
k0=$(kills)
run workers
k1=$(kills)
is "$RC" 1 "workers with job_runs locked: exit 1 (a part is missing)"
like "$OUT" "h:1:slowtest +alive" "the worker list already read is printed"
like "$OUT" "1 worker" "with its total"
like "$ERR" "statistics per job type are missing: .*Lost connection" "stderr names the missing part and why"
like "$ERR" "(the server was told to stop it|its session had already ended on the server)" "and says it was stopped on the server, or had already ended there"
ok $((k1 > k0 ? 0 : 1)) "the server was sent a KILL for it (Com_kill $k0 -> $k1)"
wait_for_sql 5 "$OURS" 0
is "$?/$(ours)" "0/0" "nothing of ours is left running on the server"
run workers --json
is "$RC" 1 "workers --json: exit 1 too"
is "$(printf '%s' "$OUT" | jget '[len(d["workers"]), d["types_last_24h"], d["missing"]]')" '[1, null, ["types_last_24h"]]' \
	"--json: the workers, null statistics, and what is missing"
unlock
run workers
is "$RC" 0 "after the lock is gone: exit 0"
like "$OUT" "echo +1 +0 +100.0 +100" "with the statistics"

# ---- status: the counts time out, the rest is printed ----
lock jobs
k0=$(kills)
run status
k1=$(kills)
is "$RC" 1 "status with jobs locked: exit 1"
like "$OUT" "workers alive: 1" "the count of live workers is printed"
like "$ERR" "counts per queue are missing: .*(the server was told to stop it|its session had already ended on the server)" "stderr names the missing counts"
ok $((k1 > k0 ? 0 : 1)) "the server was sent a KILL for it (Com_kill $k0 -> $k1)"
wait_for_sql 5 "$OURS" 0
is "$?/$(ours)" "0/0" "nothing of ours is left running on the server"
run status --json
is "$(printf '%s' "$OUT" | jget '[d["queues"], d["workers"], d["missing"]]')" '[null, 1, ["queues", "reserve_mode"]]' \
	"--json: null counts, the workers, and what is missing"
unlock
run status
is "$RC" 0 "after the lock is gone: exit 0"
like "$OUT" "default +1 +0" "with the counts"

# ---- nothing readable: 69 ----
lock jobq_workers job_runs
run workers
is "$RC/$OUT" "69/" "workers with both tables locked: 69, nothing printed"
unlock
is "$(ours)" 0 "nothing of ours is left running on the server"

# ---- the statistics read at most the newest 100,000 runs ----
sql "DELETE FROM job_runs"
sql "INSERT INTO job_runs (job_id, queue, type, attempt, worker, started_at, duration_ms, outcome, exit_status)
     SELECT n, 'default', 'bulk', 1, 'x', UTC_TIMESTAMP(6) - INTERVAL (n MOD 3000) SECOND, 10, 'done', 'exit 0'
     FROM (SELECT a.i + b.i * 10 + c.i * 100 + d.i * 1000 + e.i * 10000 + 1 AS n FROM
       (SELECT 0 i UNION SELECT 1 UNION SELECT 2 UNION SELECT 3 UNION SELECT 4 UNION SELECT 5 UNION SELECT 6 UNION SELECT 7 UNION SELECT 8 UNION SELECT 9) a,
       (SELECT 0 i UNION SELECT 1 UNION SELECT 2 UNION SELECT 3 UNION SELECT 4 UNION SELECT 5 UNION SELECT 6 UNION SELECT 7 UNION SELECT 8 UNION SELECT 9) b,
       (SELECT 0 i UNION SELECT 1 UNION SELECT 2 UNION SELECT 3 UNION SELECT 4 UNION SELECT 5 UNION SELECT 6 UNION SELECT 7 UNION SELECT 8 UNION SELECT 9) c,
       (SELECT 0 i UNION SELECT 1 UNION SELECT 2 UNION SELECT 3 UNION SELECT 4 UNION SELECT 5 UNION SELECT 6 UNION SELECT 7 UNION SELECT 8 UNION SELECT 9) d,
       (SELECT 0 i UNION SELECT 1 UNION SELECT 2 UNION SELECT 3 UNION SELECT 4 UNION SELECT 5 UNION SELECT 6 UNION SELECT 7 UNION SELECT 8 UNION SELECT 9) e) s"
sql "INSERT INTO job_runs (job_id, queue, type, attempt, worker, started_at, duration_ms, outcome, exit_status) VALUES
     (1, 'default', 'older', 1, 'x', UTC_TIMESTAMP(6) - INTERVAL 20 HOUR, 5, 'done', 'exit 0'),
     (2, 'default', 'older', 1, 'x', UTC_TIMESTAMP(6) - INTERVAL 20 HOUR, 5, 'done', 'exit 0')"
run workers --json
is "$(printf '%s' "$OUT" | jget '[d["types_last_24h"]["bulk"]["runs"], "older" in d["types_last_24h"], d["stats_window"]["capped"]]')" \
	'[100000, false, true]' "100,002 runs in the day: the newest 100,000 counted, the window says so"
run workers
like "$OUT" "\(newest 100000 runs: last [0-9]+m" "text: the header says how far back the numbers reach"
sql "DELETE FROM job_runs WHERE type = 'bulk' ORDER BY started_at LIMIT 10"
run workers --json
is "$(printf '%s' "$OUT" | jget '[d["types_last_24h"]["bulk"]["runs"], d["types_last_24h"]["older"]["runs"], d["stats_window"]["capped"], d["stats_window"]["seconds"]]')" \
	'[99990, 2, false, 86400]' "under the cap: the whole 24 hours"
finish
