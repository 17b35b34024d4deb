#!/bin/bash
# A run whose outcome is not written still ends its OpenTelemetry span:
# jobq_runs_total counts it (outcome refused or given_up), and the
# README promises one span per handler run.  Before, settle() freed the
# slot of a refused or given-up outcome without a span, and none was
# counted as dropped either: the run vanished from the trace.
#   1. refused: a trigger refuses the job's DELETE (its done outcome) in
#      every form; the span has jobq.outcome=refused,
#      jobq.outcome.unwritten=done and an error status saying why.
#   2. given up: a trigger stalls the DELETE and a watcher kills the
#      connection under it, every time; after WRITE_TRIES_MAX losses the
#      worker gives the outcome up, and the span says given_up.
#   3. lost: the job's lease token is changed while its handler runs
#      (another worker took it); the fenced outcome changes nothing, and
#      the span, outcome lost, has an error status too (it was ok for a
#      done run before: a run whose work will be done again is no
#      success).
#   4. the worker stops with the outcome unwritten (a row held for a
#      whole reserve_ttl after the stop): given_up too.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
PY=/usr/bin/python3
setup otlp_unwritten
RECV=$top_srcdir/tests/otlp_receiver.py
TH=$top_srcdir/tests/handlers
G=$T/gate
mkdir -p "$G"

rm -f "$T/port"
$PY "$RECV" serve "$T/port" "$T/otlp.jsonl" &
RECV_PID=$!
BG_PIDS+=("$RECV_PID")
for i in $(seq 1 100); do [ -s "$T/port" ] && break; sleep 0.05; done
write_conf <<EOC
[worker]
poll_interval = 20ms
otlp_endpoint = http://127.0.0.1:$(cat "$T/port")
reserve_ttl = 20s

[queue default]

[handler gate]
exec = $TH/gate_batch.sh $G 0
EOC

# Waits up to $1 seconds until the worker's log matches $2.
wait_log() {
	local secs=$1 re=$2 i=0
	until grep -Eq "$re" "$log"; do
		i=$((i + 1))
		[ $i -le $((secs * 10)) ] || { waited_out "$1" "wait_log $re"; return 1; }
		sleep 0.1
	done
}

# unwritten_run N BODY: puts the trigger BODY on job N's DELETE (its
# done outcome; the claim is an UPDATE, and the handler waits for its
# cue), then lets its handler end.
unwritten_run() {
	local id=$1 body=$2
	"$TESTDB_SCRIPT" client "$JOBQ_TESTDB" "$DB" <<EOS
DELIMITER //
CREATE TRIGGER unwritten BEFORE DELETE ON jobs FOR EACH ROW
BEGIN
	IF OLD.id = $id THEN
		$body
	END IF;
END //
DELIMITER ;
EOS
	touch "$G/go"
}

log=$T/worker.${#BG_PIDS[@]}.log
start_worker
trace=4bf92f3577b34da6a3ce929d0e0e4799

# ---- 1. refused ----
rm -f "$G"/*
r=$(jq_ enqueue --traceparent "00-$trace-00f067aa0ba90299-01" gate '{}')
unwritten_run "$r" "SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'this test refuses the outcome';"
wait_log 30 "job $r: outcome 'done' not written: .*refused every form"
ok $? "job $r's done outcome is refused in every form"
sql "DROP TRIGGER unwritten; DELETE FROM jobs WHERE id = $r" # no second run once its lease expires

# ---- 2. given up ----
rm -f "$G"/*
g=$(jq_ enqueue --traceparent "00-$trace-00f067aa0ba90298-01" gate '{}')
sleep_killer_start
unwritten_run "$g" "DO SLEEP(60);"
wait_log 90 "job $g: the connection was lost [0-9]+ times while writing its outcome 'done'; giving it up"
ok $? "job $g's done outcome is given up after the connection was lost under it again and again"
sleep_killer_stop
sql "DROP TRIGGER unwritten; DELETE FROM jobs WHERE id = $g"

# ---- 3. lost ----
rm -f "$G"/*
l=$(jq_ enqueue --traceparent "00-$trace-00f067aa0ba90297-01" gate '{}')
for i in $(seq 1 300); do [ -e "$G/started.$l" ] && break; sleep 0.1; done
sql "UPDATE jobs SET lease_token = REPEAT('f', 32) WHERE id = $l"
touch "$G/go"
wait_log 30 "job $l: lease lost"
ok $? "job $l's outcome is dropped: its lease is gone"
sql "DELETE FROM jobs WHERE id = $l"

kill -TERM "$WORKER_PID"
wait_exit 30 "$WORKER_PID"
is "$?" 0 "the worker stops cleanly, flushing its spans"

# ---- 4. the worker stops with it unwritten ----
# Another session holds job h's row, so its done outcome cannot be
# written; asked to stop, the worker waits a reserve_ttl (2 s here) for
# it, then gives it up and exits.  Before, worker_finish dropped such a
# slot with neither a span nor a count.
sed -i 's/^reserve_ttl = 20s$/reserve_ttl = 2s/' "$CONF"
rm -f "$G"/*
log=$T/worker.${#BG_PIDS[@]}.log
start_worker
h=$(jq_ enqueue --traceparent "00-$trace-00f067aa0ba90296-01" gate '{}')
for i in $(seq 1 300); do [ -e "$G/started.$h" ] && break; sleep 0.1; done
sql "START TRANSACTION; SELECT id FROM jobs WHERE id = $h FOR UPDATE; DO SLEEP(600); COMMIT" >/dev/null 2>&1 &
holder=$!
wait_for_sql 20 "SELECT COUNT(*) FROM information_schema.processlist WHERE db = DATABASE() AND TRIM(info) = 'DO SLEEP(600)'" 1
touch "$G/go"
wait_for_sql 20 "SELECT COUNT(*) FROM information_schema.innodb_trx WHERE trx_state = 'LOCK WAIT'" 1
ok $? "job $h's outcome waits for the row held"
kill -TERM "$WORKER_PID"
wait_exit 30 "$WORKER_PID"
is "$?" 0 "the worker stops, giving up the outcome it could not write"
like "$(cat "$log")" "1 outcomes could not be written" "and says so"
sql_root "KILL $(sql "SELECT id FROM information_schema.processlist WHERE db = DATABASE() AND TRIM(info) = 'DO SLEEP(600)'")" 2>/dev/null
wait "$holder" 2>/dev/null
sql "DELETE FROM jobs WHERE id = $h"
kill "$RECV_PID"
wait "$RECV_PID" 2>/dev/null
$PY "$RECV" spans "$T/otlp.jsonl" >"$T/spans"

# kind name trace span parent code message start end attributes...
span_of() { grep -P "\tjobq\.job\.id=$1\t" "$T/spans"; }
is "$(span_of "$r" | wc -l)/$(span_of "$g" | wc -l)/$(span_of "$l" | wc -l)/$(span_of "$h" | wc -l)" "1/1/1/1" \
	"each of the four runs has exactly one span"
is "$(span_of "$r" | cut -f2,3,6,10-)" \
	"jobq.run gate	$trace	2	jobq.job.id=$r	jobq.job.type=gate	jobq.queue=default	jobq.attempt=1	jobq.outcome=refused	jobq.outcome.unwritten=done" \
	"the refused run's span: in the job's trace, error status, outcome refused, the done it asked for unwritten"
like "$(span_of "$r" | cut -f7)" "^outcome 'done' not written: the server refused every form of this outcome: .*this test refuses the outcome" \
	"its status message says the server refused it, and why"
is "$(span_of "$g" | cut -f2,3,6,10-)" \
	"jobq.run gate	$trace	2	jobq.job.id=$g	jobq.job.type=gate	jobq.queue=default	jobq.attempt=1	jobq.outcome=given_up	jobq.outcome.unwritten=done" \
	"the given-up run's span: error status, outcome given_up, the done it asked for unwritten"
like "$(span_of "$g" | cut -f7)" "^outcome 'done' not written: the connection was lost [0-9]+ times while writing it$" \
	"its status message says the write was given up"
# done, or interrupted should a heartbeat find the lease gone first and
# stop the handler.
like "$(span_of "$l" | cut -f2,3,6,7,10-)" \
	"^jobq.run gate	$trace	2	lease lost \(another worker or release-stale took it\); outcome '(done|interrupted)' dropped	jobq.job.id=$l	jobq.job.type=gate	jobq.queue=default	jobq.attempt=1	jobq.outcome=lost	jobq.outcome.unwritten=(done|interrupted)\$" \
	"the lost run's span: error status saying why, outcome lost, the done it asked for unwritten"
is "$(span_of "$h" | cut -f2,3,6,7,10-)" \
	"jobq.run gate	$trace	2	outcome 'done' not written: the worker stopped before it could write it	jobq.job.id=$h	jobq.job.type=gate	jobq.queue=default	jobq.attempt=1	jobq.outcome=given_up	jobq.outcome.unwritten=done" \
	"the span of the run whose worker stopped before writing it: given_up, and why"
like "$(cat "$T"/worker.*.log | grep 'otlp spans')" "dropped_queue_full=0 dropped_export_failed=0 dropped_at_stop=0.*dropped_queue_full=0 dropped_export_failed=0 dropped_at_stop=0" \
	"no span was dropped, by either worker"
is "$(grep -l -e 'Sanitizer' -e 'runtime error:' "$T"/worker.*.log | wc -l)" 0 \
	"no worker log holds a sanitizer report"
finish
