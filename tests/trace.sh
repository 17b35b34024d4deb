#!/bin/bash
# Trace context (issue 22, item 4): a job's W3C traceparent comes from
# `enqueue --traceparent`, the enqueuer's TRACEPARENT, a --batch line or
# a plain SQL insert; every run gets TRACEPARENT with the job's trace id
# and a span id of its own, which its run row, `show --json` and the
# worker's JSON log carry, and its follow-ups inherit as their parent.
# In exec and persistent mode (through the Python helper).  Bad values
# are refused with one line and exit 64 (an option) or 65 (input).
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
setup trace
TH=$top_srcdir/tests/handlers

TRACE=0af7651916cd43dd8448eb211c80319c
TP=00-$TRACE-b7ad6b7169203331-01
hex16='[0-9a-f]{16}'
tp_of() { awk -v id="$1" -v a="$2" '$1 == id && $2 == a { print $3 }' "$LOG" | tail -n 1; }
json() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }

for mode in exec persistent; do
	empty_tables
	LOG=$T/trace.$mode.log
	write_conf <<EOC
[worker]
poll_interval = 20ms
log_format = json

[queue default]

[handler t]
exec = $TH/trace_py.py
mode = $mode
env.PYTHONPATH = $HANDLERS
env.PYTHONDONTWRITEBYTECODE = 1

[handler child]
exec = /bin/true
EOC
	id=$(jq_ enqueue --traceparent "$TP" t "{\"log\":\"$LOG\",\"retry\":1,\"follow\":1}")
	is "$(sql "SELECT traceparent FROM jobs WHERE id = $id")" "$TP" "[$mode] --traceparent is stored with the job"
	timeout 60 "$JOBQ" -c "$CONF" work --stop-when-empty 2>"$T/work.$mode.log"
	timeout 60 "$JOBQ" -c "$CONF" work --stop-when-empty 2>>"$T/work.$mode.log"
	tp1=$(tp_of "$id" 1)
	tp2=$(tp_of "$id" 2)
	like "$tp1" "^00-$TRACE-$hex16-01\$" "[$mode] run 1: TRACEPARENT has the enqueuer's trace id and flags"
	like "$tp2" "^00-$TRACE-$hex16-01\$" "[$mode] run 2: the same trace id"
	s1=$(echo "$tp1" | cut -d- -f3)
	s2=$(echo "$tp2" | cut -d- -f3)
	ok "$([ -n "$s1" ] && [ "$s1" != "$s2" ] && [ "$s1" != b7ad6b7169203331 ] && [ "$s2" != b7ad6b7169203331 ]; echo $?)" \
		"[$mode] each run has a fresh span id ($s1, $s2), not the enqueuer's"
	is "$(sql "SELECT GROUP_CONCAT(CONCAT(outcome, ':', trace_id, ':', span_id) ORDER BY id) FROM job_runs WHERE job_id = $id")" \
		"retry:$TRACE:$s1,done:$TRACE:$s2" "[$mode] the run rows keep the trace and span ids their handlers got"
	is "$(jq_ show --json "$id" | json '",".join(r["trace_id"] + ":" + r["span_id"] for r in d["runs"])')" \
		"$TRACE:$s1,$TRACE:$s2" "[$mode] show --json lists them per run"
	like "$(jq_ show "$id")" "trace  $TRACE span $s2" "[$mode] show prints them per run"
	is "$(sql "SELECT traceparent FROM jobs WHERE type = 'child'")" "00-$TRACE-$s2-01" \
		"[$mode] a follow-up continues the trace under the run's span"
	like "$(grep "\"job\":$id," "$T/work.$mode.log" | grep '"outcome":"done"')" \
		"\"trace_id\":\"$TRACE\",\"span_id\":\"$s2\"" "[$mode] the worker's JSON log line of the outcome carries them"

	# Without a trace context: a new trace per run, so that every run has
	# ids; TRACEPARENT from a plain SQL insert is used as it is.
	id=$(jq_ enqueue t "{\"log\":\"$LOG\"}")
	id2=$(sql "INSERT INTO jobs (queue, type, payload, traceparent) VALUES ('default', 't',
		'{\"log\":\"$LOG\"}', '00-11112222333344445555666677778888-1111222233334444-00'); SELECT LAST_INSERT_ID()")
	timeout 60 "$JOBQ" -c "$CONF" work --stop-when-empty 2>>"$T/work.$mode.log"
	like "$(tp_of "$id" 1)" "^00-[0-9a-f]{32}-$hex16-01\$" "[$mode] a job without one still gets a TRACEPARENT"
	is "$(sql "SELECT CONCAT(trace_id, '-', span_id) FROM job_runs WHERE job_id = $id")" \
		"$(tp_of "$id" 1 | cut -d- -f2,3)" "[$mode] and its run row has those ids"
	like "$(tp_of "$id2" 1)" "^00-11112222333344445555666677778888-$hex16-00\$" \
		"[$mode] a plain SQL insert's traceparent: its trace id and flags"

	# One another program wrote that is not valid: a new trace, and the
	# log says why.
	id3=$(sql "INSERT INTO jobs (queue, type, payload, traceparent) VALUES ('default', 't',
		'{\"log\":\"$LOG\"}', '00-XYZ-not-a-trace'); SELECT LAST_INSERT_ID()")
	timeout 60 "$JOBQ" -c "$CONF" work --stop-when-empty 2>"$T/work3.$mode.log"
	like "$(tp_of "$id3" 1)" "^00-[0-9a-f]{32}-$hex16-01\$" "[$mode] a malformed traceparent column: the run gets a new trace"
	like "$(grep "\"job\":$id3," "$T/work3.$mode.log" | grep -c '"level":"warn","msg":"the job.s traceparent is not valid: its run starts a new trace".*"traceparent":"00-XYZ-not-a-trace","error":"')" \
		"^1\$" "[$mode] and one warning names the job, the value and what is wrong"
done

# Where a traceparent comes from, and what is refused.
empty_tables
TP2=00-$(printf '%032x' 42)-$(printf '%016x' 7)-00
id=$(TRACEPARENT=$TP2 jq_ enqueue t '{}')
is "$(sql "SELECT traceparent FROM jobs WHERE id = $id")" "$TP2" "TRACEPARENT in the environment is the default"
id=$(TRACEPARENT=$TP2 jq_ enqueue --traceparent "$TP" t '{}')
is "$(sql "SELECT traceparent FROM jobs WHERE id = $id")" "$TP" "--traceparent wins over the environment"
printf '{"type":"t","traceparent":"%s"}\n{"type":"t"}\n' "$TP2" | jq_ enqueue --batch --traceparent "$TP" >/dev/null
is "$(sql "SELECT GROUP_CONCAT(traceparent ORDER BY id) FROM jobs WHERE id > $id")" "$TP2,$TP" \
	"--batch: a line's traceparent, else --traceparent's"

n=$(sql "SELECT COUNT(*) FROM jobs")
check_refused() { # WANT_STATUS REGEX WHAT, with the command's stderr in $T/err
	local rc=$1
	is "$rc,$(sql "SELECT COUNT(*) FROM jobs")" "$2,$n" "$4: exit $2, nothing written"
	like "$(head -n 1 "$T/err")" "$3" "$4: one line says what is wrong"
}
jq_ enqueue --traceparent "00-$(printf '%032d' 0)-b7ad6b7169203331-01" t '{}' 2>"$T/err"
check_refused $? 64 "^jobq: enqueue: --traceparent: the trace id must be 32 lowercase hex digits, not all zeros" \
	"--traceparent with an all-zero trace id"
jq_ enqueue --traceparent "01-$TRACE-b7ad6b7169203331-01" t '{}' 2>"$T/err"
check_refused $? 64 "^jobq: enqueue: --traceparent: version '01' is not supported" "--traceparent version 01"
jq_ enqueue --traceparent "00-$TRACE-0000000000000000-01" t '{}' 2>"$T/err"
check_refused $? 64 "--traceparent: the parent id must be 16 lowercase hex digits" "--traceparent with a zero parent id"
jq_ enqueue --traceparent "nonsense" t '{}' 2>"$T/err"
check_refused $? 64 "--traceparent: expected 00-<32 hex trace id>-<16 hex parent id>-<2 hex flags> \\(55 characters\\), got 8" \
	"--traceparent too short"
TRACEPARENT="00-${TRACE^^}-b7ad6b7169203331-01" jq_ enqueue t '{}' 2>"$T/err"
check_refused $? 65 "^jobq: enqueue: TRACEPARENT in the environment: the trace id must be 32 lowercase hex" \
	"TRACEPARENT in upper case"
is "$(wc -l <"$T/err")" 1 "TRACEPARENT refused: exactly one line"
printf '{"type":"t"}\n{"type":"t","traceparent":"00-%s-b7ad6b7169203331-zz"}\n' "$TRACE" |
	jq_ enqueue --batch 2>"$T/err" >/dev/null
check_refused $? 65 'line 2: "traceparent": the flags must be 2 lowercase hex digits' "--batch line with bad flags"
finish
