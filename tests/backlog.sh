#!/bin/bash
# Backlog-proof reservation (DESIGN.md section 5): with 100,000 delayed
# and 100,000 backing-off jobs in the table, a reservation is served by
# the jobs_reserve index without filesort and reads as many rows as it
# reads with no backlog at all.  Measured with `jobq check --explain`,
# which explains and runs (then rolls back) the very statements a worker
# sends, counting the server's Handler_read_* counters: no clock involved.
# No ANALYZE TABLE: right after bulk inserts the statistics are stale, as
# they are in a real queue, and the plan must not depend on them.
. "$top_srcdir/tests/lib.sh"
one_build normal "a scale test"
setup backlog

field() { python3 -c "import json,sys; print(json.load(sys.stdin)$1)"; }
# step LABEL FIELD: FIELD of the explain step called LABEL ('' when absent)
step() { python3 -c "import json,sys; print(next((s['$2'] for s in json.load(sys.stdin)['steps'] if s['query'] == '$1'), ''))"; }

fill() { # fill COUNT QUEUE PRIORITY AVAILABLE_EXPR [EXTRA_COLS EXTRA_VALUES]
	sql "SET SESSION max_recursive_iterations = 1000000;
	     INSERT INTO jobs (queue, type, payload, priority, available_at ${5:-})
	     WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < $1)
	     SELECT '$2', 'echo', '{}', $3, $4 ${6:-} FROM s"
}

for mode in skip-locked update; do
	sql "DELETE FROM jobs"
	write_conf <<EOC
[worker]
reserve_mode = $mode
[queue default]
[queue other]
[handler echo]
exec = $HANDLERS/echo.sh
EOC
	fill 1000 default 0 "UTC_TIMESTAMP(6) - INTERVAL 1 MINUTE"
	empty=$(jq_ check --explain --json --batch 10)
	ok $? "$mode: check --explain runs with no backlog"
	r0=$(echo "$empty" | field "['claim_rows_read']")
	is "$(echo "$empty" | field "['claimed']")" "10" "$mode: a claim of 10 finds 10 jobs"

	# The backlog: delayed jobs, jobs waiting out a backoff (also at a
	# more urgent priority, where a naive scan meets them first), jobs
	# reserved by live workers, and another queue's jobs.
	fill 100000 default 0 "UTC_TIMESTAMP(6) + INTERVAL 1 DAY"
	fill 100000 default -5 "UTC_TIMESTAMP(6) + INTERVAL 1 HOUR" ", attempts, last_error" ", 2, '[exit 75] try later'"
	fill 1000 default -5 "UTC_TIMESTAMP(6) - INTERVAL 1 HOUR" ", attempts, lease_token, reserved_by, reserved_at, lease_expires_at" \
		", 1, 'abcdefabcdefabcdefabcdefabcdef01', 'elsewhere:1:x', UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) + INTERVAL 1 HOUR"
	fill 5000 other 0 "UTC_TIMESTAMP(6)"
	is "$(sql "SELECT COUNT(*) FROM jobs")" "207000" "$mode: the table holds the backlog"

	full=$(jq_ check --explain --json --batch 10)
	ok $? "$mode: check --explain runs with the backlog"
	r1=$(echo "$full" | field "['claim_rows_read']")
	is "$(echo "$full" | field "['claimed']")" "10" "$mode: a claim of 10 still finds 10 jobs"
	is "$(echo "$full" | field "['priorities']")" "0" "$mode: only the priority with due jobs is searched"
	ok $([ "$r1" -le $((r0 + 2)) ] && echo 0 || echo 1) \
		"$mode: rows read for the claim stay at $r1 with the backlog (empty table: $r0)"
	ok $([ "$r1" -le 30 ] && echo 0 || echo 1) "$mode: rows read ($r1) are bounded by the batch (10), not the backlog"
	# Finding the due priorities: a scan of the due rows (jobs_due, at
	# most batch + 16 index entries per served queue), then, as the scan
	# was cut short by the 1000 due jobs and the queue has a lower
	# priority (-5, all backing off or reserved), a walk of the priority
	# groups up to 0 by index dives in jobs_reserve.
	due_read=$(echo "$full" | field "['due_rows_read']")
	due_read0=$(echo "$empty" | field "['due_rows_read']")
	ok $([ "$due_read" -le 120 ] && echo 0 || echo 1) \
		"$mode: finding the due groups reads $due_read index entries (empty table: $due_read0), not the backlog"
	plans=$(echo "$full" | field "['steps']")
	case $plans in *filesort*) ok 1 "$mode: no filesort in any step: $plans" ;; *) ok 0 "$mode: no filesort in any step" ;; esac
	is "$(echo "$full" | step 'due scan' key)" "jobs_due" "$mode: the due rows are found in the jobs_due index"
	is "$(echo "$full" | step 'due scan' type)" "range" "$mode: the due scan is a range scan"
	extras=$(echo "$full" | step 'due scan' extra)
	# "no matching row in const table": the paused-queue check, one
	# primary-key lookup in jobq_paused (flow.c), finding no row.
	leftover=$(echo "$extras" | tr ';' '\n' | sed 's/^ *//' |
		grep -v -x -e 'Using where' -e 'Using index' -e 'Select tables optimized away' \
			-e 'no matching row in const table' | tr '\n' ' ')
	is "$leftover" "" "$mode: the due scan reads the index only ($extras)"
	is "$(echo "$full" | field "['walked']")" "True" "$mode: with a backlog below its lowest due priority, the groups are walked"
	is "$(echo "$full" | step 'due groups' type)" "dives" "$mode: the due groups are found by index dives"
	extras=$(echo "$full" | step 'due groups' extra)
	leftover=$(echo "$extras" | tr ';' '\n' | sed 's/^ *//' |
		grep -v -x -e 'No tables used' -e 'Select tables optimized away' -e 'no matching row in const table' \
			-e 'No matching min/max row' | tr '\n' ' ')
	is "$leftover" "" "$mode: every due-group subquery is answered from the index ($extras)"
	is "$(echo "$full" | step claim key)" "jobs_reserve" "$mode: the claim uses the jobs_reserve index"
	is "$(echo "$full" | step claim type)" "range" "$mode: the claim is a range scan"

	# Under a flow limit a claim's slots are first shared out among a
	# queue's types by one read of each type's first due jobs (the
	# claim's size at most): that read is bounded by the number of types
	# and the claim's size, not by the backlog.
	cp "$CONF" "$T/plain.ini"
	cat >>"$CONF" <<EOC
[handler limited]
exec = $HANDLERS/echo.sh
rate = 1000/s
EOC
	flow=$(jq_ check --explain --json --batch 10)
	ok $? "$mode: check --explain runs under a flow limit"
	is "$(echo "$flow" | field "['order_groups_due']")" "1" "$mode: one type (the unlimited rest) has due jobs"
	order_read=$(echo "$flow" | field "['order_rows_read']")
	ok $([ "$order_read" -le 30 ] && echo 0 || echo 1) \
		"$mode: ordering the types' claims reads $order_read rows, not the backlog"
	case $(echo "$flow" | step order extra) in
	*filesort*) ok 1 "$mode: no filesort in the order read" ;;
	*) ok 0 "$mode: no filesort in the order read" ;;
	esac
	cp "$T/plain.ini" "$CONF"

	# And the real thing: a worker drains the 1000 due jobs of the queue
	# (the urgent reserved ones are not its to take) and leaves the rest.
	timeout 120 "$JOBQ" -c "$CONF" work -q default -j 4 --stop-when-empty 2>"$T/work.$mode.log"
	is "$(sql "SELECT COUNT(*) FROM jobs WHERE queue = 'default' AND due_at <= UTC_TIMESTAMP(6)")" "0" \
		"$mode: a worker drained every due job of the queue"
	is "$(sql "SELECT COUNT(*) FROM job_runs WHERE outcome = 'done'")" "1000" "$mode: 1000 runs, all done"
	sql "DELETE FROM job_runs"
done
finish
