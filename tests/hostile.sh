#!/bin/bash
# Rows written by other programs (ISSUE 8, defect 3 and "hostile rows"):
# a table of rows that plain SQL can put in jobs, mixed with good jobs,
# in both reservation modes.  No value in a row may stop other jobs from
# being reserved; every good job runs; every bad row reaches a final
# state with a reason (dead-lettered, or run normally where it is in
# fact valid), or stays delayed where that is what it says.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
setup hostile

declare -A WANT # job id -> done | delayed | failed:REGEX
GOOD=()

# ins WANT COLUMNS VALUES: one row by plain SQL (non-strict where a
# column needs it, as a careless program's session may be); prints
# nothing, records the expectation.
ins() {
	local want=$1 cols=$2 vals=$3 id
	id=$(sql "SET SESSION sql_mode = '';
		INSERT INTO jobs (queue, type, payload, available_at $cols)
		VALUES ('default', $vals); SELECT LAST_INSERT_ID()")
	[ -n "$id" ] || { ok 1 "insert ($cols) ($vals)"; return; }
	WANT[$id]=$want
}

good() {
	local id
	id=$(sql "INSERT INTO jobs (queue, type, payload, available_at) VALUES ('default', 'echo', '{\"good\": $1}', UTC_TIMESTAMP(6)); SELECT LAST_INSERT_ID()")
	GOOD+=("$id")
	WANT[$id]=done
}

NOW="UTC_TIMESTAMP(6)"
TOKEN="'0123456789abcdef0123456789abcdef'"
LONG=$(printf 'w%.0s' $(seq 200))

fill() {
	local i=0
	good $((i++))
	# type: NULL (a multi-row INSERT in a non-strict session stores ''),
	# empty, unknown, with control characters
	sql "SET SESSION sql_mode = ''; INSERT INTO jobs (queue, type, payload, available_at) VALUES ('default', NULL, '{}', $NOW), ('default', NULL, '{}', $NOW)" 2>/dev/null
	for id in $(sql "SELECT id FROM jobs WHERE type = ''"); do WANT[$id]="failed:unknown job type"; done
	ins "failed:unknown job type" "" "'', '{}', $NOW"
	good $((i++))
	ins "failed:unknown job type" "" "'no_such_type', '{}', $NOW"
	ins "failed:unknown job type" "" "CONCAT('x', CHAR(27), '[2J'), '{}', $NOW"
	# payload: not JSON, empty, trailing garbage, a NUL byte
	ins "failed:payload is not valid JSON" "" "'echo', 'not json at all', $NOW"
	good $((i++))
	ins "failed:payload is not valid JSON" "" "'echo', '', $NOW"
	ins "failed:payload is not valid JSON" "" "'echo', '{\"a\": 1} trailing', $NOW"
	ins "failed:payload is not valid JSON" "" "'echo', CONCAT('{}', CHAR(0)), $NOW"
	good $((i++))
	# attempts at and past every limit (the handler allows 3)
	ins "failed:attempts used up" ", attempts" "'echo', '{}', $NOW, 3"
	ins "failed:attempts used up" ", attempts" "'echo', '{}', $NOW, 2147483647"
	ins "failed:attempts used up" ", attempts" "'echo', '{}', $NOW, 2147483648"
	good $((i++))
	ins "failed:attempts counter at its limit" ", attempts" "'echo', '{}', $NOW, 4294967294"
	ins "failed:attempts counter at its limit" ", attempts" "'echo', '{}', $NOW, 4294967295"
	ins "failed:attempts counter at its limit" ", attempts, max_attempts" "'echo', '{}', $NOW, 4294967295, 4294967295"
	ins "failed:attempts counter at its limit" ", attempts" "'echo', '{}', $NOW, 99999999999"
	good $((i++))
	ins done ", attempts" "'echo', '{}', $NOW, -1"
	ins done ", attempts, max_attempts" "'echo', '{}', $NOW, 5, 4294967295"
	# max_attempts 0 means "the handler's", as enqueue writes NULL for it
	ins done ", max_attempts" "'echo', '{}', $NOW, 0"
	ins "failed:attempts used up" ", attempts, max_attempts" "'echo', '{}', $NOW, 1, 1"
	good $((i++))
	# times at the ends of DATETIME, the epoch, the zero date
	ins delayed "" "'echo', '{}', '9999-12-31 23:59:59.999999'"
	ins delayed ", created_at" "'echo', '{}', '9999-12-31 23:59:59', '0000-00-00 00:00:00'"
	ins done "" "'echo', '{}', '1970-01-01 00:00:00'"
	ins done "" "'echo', '{}', '1000-01-01 00:00:00'"
	ins done "" "'echo', '{}', '0000-00-00 00:00:00'"
	ins done ", created_at" "'echo', '{}', $NOW, '0000-00-00 00:00:00'"
	ins done ", created_at" "'echo', '{}', $NOW, '9999-12-31 23:59:59'"
	good $((i++))
	# leases: a token with no expiry; reserved_by of 200 characters
	# (stored as its first 128); an expired lease of a worker long gone
	ins done ", lease_token" "'echo', '{}', $NOW, $TOKEN"
	ins done ", lease_token, reserved_by, reserved_at" "'echo', '{}', $NOW, $TOKEN, '$LONG', '0000-00-00'"
	ins done ", lease_token, lease_expires_at, reserved_by" "'echo', '{}', $NOW - INTERVAL 1 HOUR, 'short', '1970-01-01 00:00:01', '$LONG'"
	ins done ", reserved_by" "'echo', '{}', $NOW, '$LONG'"
	# a lease expiry with no token: taken when that time comes
	ins done ", lease_expires_at" "'echo', '{}', $NOW, $NOW - INTERVAL 1 MINUTE"
	ins delayed ", lease_expires_at" "'echo', '{}', $NOW, $NOW + INTERVAL 1 DAY"
	good $((i++))
	# priority at the column's extremes, and past them (clamped)
	ins done ", priority" "'echo', '{}', $NOW, -32768"
	ins done ", priority" "'echo', '{}', $NOW, 32767"
	ins done ", priority" "'echo', '{}', $NOW, 99999"
	good $((i++))
	# an id past the signed 64-bit range
	sql "INSERT INTO jobs (id, queue, type, payload, available_at) VALUES (9223372036854775808, 'default', 'echo', '{}', $NOW)"
	WANT[9223372036854775808]=done
	good $((i++))
}

# state ID: done | delayed | failed:REASON | queued | lost
state() {
	local id=$1 r
	r=$(sql "SELECT reason FROM failed_jobs WHERE id = $id")
	if [ -n "$r" ]; then echo "failed:$r"; return; fi
	r=$(sql "SELECT IF(due_at > UTC_TIMESTAMP(6), 'delayed', 'queued') FROM jobs WHERE id = $id")
	if [ -n "$r" ]; then echo "$r"; return; fi
	r=$(sql "SELECT COUNT(*) FROM job_runs WHERE job_id = $id AND outcome = 'done'")
	[ "$r" = 1 ] && echo done || echo lost
}

for mode in skip-locked update; do
	empty_tables
	WANT=()
	GOOD=()
	write_conf <<EOC
[worker]
poll_interval = 20ms
reserve_mode = $mode
concurrency = 4

[queue default]

[handler echo]
exec = $HANDLERS/echo.sh
max_attempts = 3
EOC
	fill
	total=${#WANT[@]}
	diag "$mode: $total rows, ${#GOOD[@]} good"

	run_out=$(jq_ status 2>&1)
	ok $? "$mode: status reads the hostile table"

	timeout 120 "$JOBQ" -c "$CONF" work -j 4 --stop-when-empty 2>"$T/work.$mode.log"
	is "$?" "0" "$mode: the worker drains the queue and exits"
	errs=$(grep -c -e 'reserving jobs' -e 'Out of range' -e 'writing .* outcomes failed' "$T/work.$mode.log")
	is "$errs" "0" "$mode: no reservation or outcome write failed"
	[ "$errs" = 0 ] || grep -m 3 -e 'reserving jobs' -e 'Out of range' -e 'outcomes failed' "$T/work.$mode.log" | sed 's/^/# /'

	done_good=0
	for id in "${GOOD[@]}"; do
		[ "$(state "$id")" = done ] && done_good=$((done_good + 1))
	done
	is "$done_good" "${#GOOD[@]}" "$mode: every good job ran, once, and is done"

	bad=0
	for id in "${!WANT[@]}"; do
		want=${WANT[$id]}
		got=$(state "$id")
		case $want in
		failed:*) [[ $got == "$want"* ]] ;;
		*) [ "$got" = "$want" ] ;;
		esac
		if [ $? != 0 ]; then
			bad=$((bad + 1))
			diag "job $id: want '$want', got '$got'"
		fi
	done
	is "$bad" "0" "$mode: each of the $total rows reached the state it should (dead-lettered with a reason, done, or still delayed)"
	is "$(sql "SELECT COUNT(*) FROM failed_jobs WHERE reason = '' OR exception = ''")" "0" \
		"$mode: every dead-lettered row carries a reason and an error text"
	is "$(sql "SELECT COUNT(*) FROM job_runs WHERE outcome <> 'done'")" "0" \
		"$mode: no handler ran for a row that was not valid (no failed runs)"

	# What stays behind must still be readable by every command.
	run_out=$(jq_ status --json 2>&1)
	ok $? "$mode: status after the run"
	like "$run_out" '"delayed":[[:space:]]*3' "$mode: the three rows due later are counted as delayed"
	for id in $(sql "SELECT id FROM jobs"); do
		jq_ show "$id" >/dev/null 2>"$T/show.err"
		ok $? "$mode: show $id (still delayed) works $(cat "$T/show.err")"
		like "$(jq_ show "$id")" "job $id: delayed" "$mode: show says job $id is delayed"
	done
	jq_ failed list >/dev/null
	ok $? "$mode: failed list reads the dead-lettered rows"
done
finish
