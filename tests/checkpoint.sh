#!/bin/bash
# Checkpoints (issue 22, item 3): a handler's {"checkpoint": V} on
# descriptor 3 is stored with its job -- by the heartbeat while it runs
# and with its outcome -- and handed to the next attempt as
# JOBQ_CHECKPOINT.  The guide's example (tests/handlers/walk_rows.py,
# through the Python helper) in exec and persistent mode: it survives a
# retry, a SIGKILLed worker and handler (the 100,000-row walk resumes from
# the last checkpoint that reached the database), a dead letter and
# `jobq failed retry`, and a hard stop (two SIGTERMs) whose handler saves
# one as it is stopped.  A checkpoint over 64 KiB is a handler error; big
# ones do not count toward the control channel's cap.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
setup checkpoint
TH=$top_srcdir/tests/handlers

ck_row() { sql "SELECT JSON_VALUE(checkpoint, '\$.row') FROM jobs WHERE id = $1"; }
# The line the walk logged for attempt $2 of the job whose log is $1:
# "ATTEMPT START JOBQ_CHECKPOINT PGID".
attempt_line() { awk -v a="$2" '$1 == a' "$1" | tail -n 1; }
payload() { printf '{"log":"%s","rows":%d%s}' "$1" "$2" "${3:-}"; }

for mode in exec persistent; do
	empty_tables
	# A long lease and heartbeat: what stores a checkpoint while the
	# handler runs is the heartbeat it hurries, not the regular one.
	write_conf <<EOC
[worker]
poll_interval = 20ms
backoff = exponential 30s 4m
backoff_jitter = 0
reserve_ttl = 60s
heartbeat = 10s

[queue default]

[handler walk]
exec = $TH/walk_rows.py
mode = $mode
env.PYTHONPATH = $HANDLERS
env.PYTHONDONTWRITEBYTECODE = 1
max_attempts = 3
EOC
	# 1. A retry (the handler raises: exit 75) keeps the newest checkpoint.
	log=$T/retry.$mode.log
	id=$(jq_ enqueue walk "$(payload "$log" 5000 ',"fail_at":2000')")
	timeout 60 "$JOBQ" -c "$CONF" work --stop-when-empty 2>>"$T/work.$mode.log"
	is "$(sql "SELECT CONCAT_WS('|', attempts, checkpoint) FROM jobs WHERE id = $id")" '1|{"row":2000}' \
		"[$mode] retried after row 2000: the job keeps its newest checkpoint"
	is "$(jq_ show --json "$id" | python3 -c 'import json,sys; print(json.load(sys.stdin)["checkpoint"])')" \
		"{'row': 2000}" "[$mode] show --json has the checkpoint as JSON"
	like "$(jq_ show "$id")" 'checkpoint .*JOBQ_CHECKPOINT' "[$mode] show prints the checkpoint"
	sql "UPDATE jobs SET available_at = UTC_TIMESTAMP(6) WHERE id = $id"
	timeout 60 "$JOBQ" -c "$CONF" work --stop-when-empty 2>>"$T/work.$mode.log"
	is "$(where "$id")" gone "[$mode] the second attempt finishes the walk"
	is "$(attempt_line "$log" 1 | cut -d' ' -f2,3)" "0 -" "[$mode] attempt 1 started at row 0, no JOBQ_CHECKPOINT"
	is "$(attempt_line "$log" 2 | cut -d' ' -f2,3)" '2000 {"row":2000}' \
		"[$mode] attempt 2 got JOBQ_CHECKPOINT and resumed from row 2000"

	# 2. The guide's example: 100,000 rows, a checkpoint every 1,000; the
	# worker and the handler are SIGKILLed mid-way, the next worker
	# resumes from the last checkpoint the database got.
	log=$T/kill.$mode.log
	id=$(jq_ enqueue walk "$(payload "$log" 100000 ',"pace":0.05')")
	start_worker
	wait_for_sql 6 "SELECT COALESCE(JSON_VALUE(checkpoint, '\$.row') >= 1000, 0) FROM jobs WHERE id = $id" 1
	ok $? "[$mode] the first checkpoints reach the database long before the 10s heartbeat"
	wait_for_sql 20 "SELECT COALESCE(JSON_VALUE(checkpoint, '\$.row') >= 30000, 0) FROM jobs WHERE id = $id" 1
	pgid=$(attempt_line "$log" 1 | cut -d' ' -f4)
	kill -KILL "$WORKER_PID"
	[ -n "$pgid" ] && kill -KILL -- "-$pgid" 2>/dev/null
	wait "$WORKER_PID" 2>/dev/null
	sleep 0.3
	ck=$(ck_row "$id")
	diag "[$mode] killed with checkpoint row $ck in the database"
	ok "$([ "${ck:-0}" -ge 30000 ] && [ "$ck" -lt 100000 ]; echo $?)" \
		"[$mode] killed mid-way: the database holds a checkpoint between 30,000 and 100,000 ($ck)"
	# The lease runs out (a minute here; made to have run out now).
	sql "UPDATE jobs SET lease_expires_at = UTC_TIMESTAMP(6) - INTERVAL 1 SECOND WHERE id = $id"
	timeout 60 "$JOBQ" -c "$CONF" work --stop-when-empty 2>>"$T/work.$mode.log"
	is "$(where "$id")" gone "[$mode] the next worker finishes the walk"
	is "$(attempt_line "$log" 2 | cut -d' ' -f2,3)" "$ck {\"row\":$ck}" \
		"[$mode] attempt 2 resumed from the last checkpoint ($ck), not from row 0"
	is "$(sql "SELECT COUNT(*) FROM job_runs WHERE job_id = $id")" 1 \
		"[$mode] one run recorded: the killed attempt left none"

	# 3. Dead-lettered with its checkpoint; `failed retry` carries it back.
	log=$T/dead.$mode.log
	id=$(jq_ enqueue walk "$(payload "$log" 3000 ',"dead_at":1000')")
	timeout 60 "$JOBQ" -c "$CONF" work --stop-when-empty 2>>"$T/work.$mode.log"
	is "$(sql "SELECT checkpoint FROM failed_jobs WHERE id = $id")" '{"row":1000}' \
		"[$mode] dead letter keeps the checkpoint"
	jq_ failed retry "$id" >/dev/null
	is "$(sql "SELECT checkpoint FROM jobs WHERE id = $id")" '{"row":1000}' \
		"[$mode] failed retry carries the checkpoint back"
	timeout 60 "$JOBQ" -c "$CONF" work --stop-when-empty 2>>"$T/work.$mode.log"
	is "$(where "$id"),$(attempt_line "$log" 1 | tail -n 1 | cut -d' ' -f2)" "gone,1000" \
		"[$mode] and the retried job resumes from it"

	# 3b. A bad control line after a good checkpoint, the handler ending
	# before any heartbeat stored it: the retry still resumes from it.
	log=$T/badline.$mode.log
	id=$(jq_ enqueue walk "$(payload "$log" 3000 ',"bad_at":2000')")
	timeout 60 "$JOBQ" -c "$CONF" work --stop-when-empty 2>>"$T/work.$mode.log"
	is "$(sql "SELECT CONCAT_WS('|', attempts, checkpoint,
		last_error LIKE '%control channel line%' OR last_error LIKE '%protocol violation%') FROM jobs WHERE id = $id")" \
		'1|{"row":2000}|1' "[$mode] a bad control line after a checkpoint: retried, the checkpoint kept"
	sql "UPDATE jobs SET available_at = UTC_TIMESTAMP(6) WHERE id = $id"
	timeout 60 "$JOBQ" -c "$CONF" work --stop-when-empty 2>>"$T/work.$mode.log"
	is "$(where "$id"),$(attempt_line "$log" 2 | cut -d' ' -f2)" "gone,2000" "[$mode] and the retry resumes from it"

	# 3c. Stopped hard (two SIGTERMs): the handler, told to stop, saves
	# where it got to and exits; the job given back keeps that checkpoint,
	# attempt refunded, and the next attempt resumes from it.
	log=$T/term.$mode.log
	id=$(jq_ enqueue walk "$(payload "$log" 100000 ',"pace":0.05,"on_term":77000')")
	start_worker
	wait_for_sql 20 "SELECT COALESCE(JSON_VALUE(checkpoint, '\$.row') >= 1000, 0) FROM jobs WHERE id = $id" 1
	ok $? "[$mode] the walk's first checkpoint is in the database"
	kill -TERM "$WORKER_PID"
	sleep 0.3
	kill -TERM "$WORKER_PID"
	wait_exit 30 "$WORKER_PID"
	ok $? "[$mode] two SIGTERMs: the worker stops"
	is "$(sql "SELECT CONCAT_WS('|', lease_token IS NULL, attempts, JSON_VALUE(checkpoint, '\$.row')) FROM jobs WHERE id = $id")" \
		"1|0|77000" "[$mode] the job is given back with the checkpoint its handler saved as it was stopped"
	sql "UPDATE jobs SET payload = JSON_SET(payload, '\$.rows', 78000) WHERE id = $id"
	timeout 60 "$JOBQ" -c "$CONF" work --stop-when-empty 2>>"$T/work.$mode.log"
	is "$(where "$id"),$(attempt_line "$log" 1 | tail -n 1 | cut -d' ' -f2)" "gone,77000" \
		"[$mode] and the next attempt resumes from it"

	# 4. Sizes: five checkpoints of 60,000 bytes leave the channel its
	# room (the newest is kept); one of 70,000 is a handler error.
	log=$T/big.$mode.log
	id=$(jq_ enqueue walk "$(payload "$log" 0 ',"big":60000,"times":5,"then":"retry"')")
	id2=$(jq_ enqueue --max-attempts 1 walk "$(payload "$log" 0 ',"big":70000')")
	timeout 60 "$JOBQ" -c "$CONF" work --stop-when-empty 2>>"$T/work.$mode.log"
	is "$(sql "SELECT CONCAT_WS('|', LENGTH(checkpoint), last_error LIKE '%control channel%') FROM jobs WHERE id = $id")" \
		"60002|0" "[$mode] five 60 KB checkpoints: no channel overflow, the newest kept"
	is "$(where "$id2"),$(sql "SELECT checkpoint IS NULL FROM failed_jobs WHERE id = $id2")" "failed,1" \
		"[$mode] a 70 KB checkpoint: a handler error, nothing stored"
	like "$(sql "SELECT exception FROM failed_jobs WHERE id = $id2")" \
		'jobq: control channel line [0-9]+: checkpoint is 70002 bytes as JSON, more than 65536' \
		"[$mode] and the error says why"
done
finish
