#!/bin/bash
# Priority order when more jobs are due than a poll's scan of jobs_due
# reads (limit + 16 rows, oldest due first), in both reservation modes.
# The scan then only sees the oldest due rows; the claim must still take
# the smallest due priority first, also one whose rows fell due later
# and which lies among delayed priorities.  One worker, one job at a
# time, so the runs' ids follow the order it took them.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
setup due_order

# ins N PRIORITY AVAILABLE_EXPR: N jobs, their priority noted in prio_of.
ins() {
	sql "SET SESSION max_recursive_iterations = 100000;
	     INSERT INTO jobs (queue, type, payload, priority, available_at)
	     WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < $1)
	     SELECT 'default', 'echo', '{}', $2, $3 FROM s;
	     INSERT IGNORE INTO prio_of SELECT id, priority FROM jobs"
}

for mode in skip-locked update; do
	empty_tables
	sql "DROP TABLE IF EXISTS prio_of; CREATE TABLE prio_of (id BIGINT UNSIGNED PRIMARY KEY, priority INT)"
	write_conf <<EOC
[worker]
poll_interval = 20ms
reserve_mode = $mode
concurrency = 1

[queue default]

[handler echo]
exec = $HANDLERS/echo.sh
EOC
	ins 40 5 "UTC_TIMESTAMP(6) - INTERVAL 20 MINUTE" # oldest due: all the scan sees
	ins 30 0 "UTC_TIMESTAMP(6) - INTERVAL 10 MINUTE"
	ins 5 -3 "UTC_TIMESTAMP(6) - INTERVAL 1 MINUTE" # newest due, most urgent
	for p in -20 -10 -5 -4 -2 -1 1 2 3 4 6; do
		ins 3 "$p" "UTC_TIMESTAMP(6) + INTERVAL 1 HOUR" # delayed, at priorities between
	done

	x=$(jq_ check --explain --json --batch 1)
	like "$x" '"walked":[[:space:]]*true' "$mode: a claim of 1 with 75 due rows walks the priority groups"
	like "$x" '"priorities":[[:space:]]*"-3,0,5"' "$mode: and finds -3, 0 and 5 due, the delayed ones not"

	timeout 120 "$JOBQ" -c "$CONF" work --stop-when-empty 2>"$T/work.$mode.log"
	is "$?" "0" "$mode: the worker drains the due jobs"
	order=$(sql "SELECT GROUP_CONCAT(p.priority ORDER BY r.id) FROM job_runs r JOIN prio_of p ON p.id = r.job_id")
	want=$(printf -- '-3,%.0s' 1 2 3 4 5; printf '0,%.0s' $(seq 30); printf '5,%.0s' $(seq 40))
	is "$order" "${want%,}" "$mode: 75 jobs ran by priority: -3 first, then 0, then 5"
	is "$(sql "SELECT COUNT(*) FROM jobs")" "33" "$mode: the 33 delayed jobs wait"
done
finish
