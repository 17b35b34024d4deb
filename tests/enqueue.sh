#!/bin/bash
# jobq enqueue: one job (flags, payload on stdin, times in UTC), every
# error path (one line, exit 65, nothing written), usage errors (64), and
# --batch (every bad line reported, nothing written; --dry-run; 20,000
# lines).
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
. "$top_srcdir/tests/operator/common.sh"
setup enqueue

write_conf <<EOC
[worker]
poll_interval = 20ms
max_payload = 1K

[queue default]
[queue mail]

[handler echo]
exec = $HANDLERS/echo.sh

[handler mailer]
exec = /bin/true
queue = mail
max_attempts = 7
EOC

# ---- one job ----
run enqueue echo '{"a": 1}'
is "$RC" 0 "enqueue TYPE PAYLOAD exits 0"
like "$OUT" '^[0-9]+$' "and prints only the new id"
id=$OUT
is "$(sql "SELECT CONCAT_WS('|', queue, type, payload, priority, attempts, COALESCE(max_attempts, 'NULL'), lease_token IS NULL) FROM jobs WHERE id = $id")" \
	'default|echo|{"a": 1}|0|0|NULL|1' "the row holds queue, type, payload (verbatim) and the defaults"
is "$(sql "SELECT ABS(TIMESTAMPDIFF(MICROSECOND, available_at, UTC_TIMESTAMP(6))) < 5000000 FROM jobs WHERE id = $id")" 1 \
	"without --delay/--at it is due now (UTC)"

run enqueue mailer '{}'
is "$(sql "SELECT queue FROM jobs WHERE id = ${OUT:-0}")" mail "without --queue the handler's queue is used"

run enqueue --queue mail --priority -5 --max-attempts 3 echo '[1,2,3]'
is "$RC" 0 "--queue --priority --max-attempts accepted"
is "$(sql "SELECT CONCAT_WS('|', queue, priority, max_attempts, payload) FROM jobs WHERE id = ${OUT:-0}")" \
	'mail|-5|3|[1,2,3]' "they land in queue, priority and max_attempts"

printf '{"from": "stdin", "n": [1, 2]}' >"$T/p.json"
run_in "$T/p.json" enqueue echo
is "$RC" 0 "payload absent: read from stdin"
is "$(sql "SELECT payload FROM jobs WHERE id = ${OUT:-0}")" '{"from": "stdin", "n": [1, 2]}' "the stdin payload is stored"
printf '"just a string"' >"$T/p2.json"
run_in "$T/p2.json" enqueue -p 4 echo -
is "$(sql "SELECT CONCAT(payload, ' ', priority) FROM jobs WHERE id = ${OUT:-0}")" '"just a string" 4' "payload '-': read from stdin"

# --delay: available_at = now + D, in the database's UTC clock.
run enqueue --delay 5m echo '{}'
id=$OUT
is "$(sql "SELECT ABS(TIMESTAMPDIFF(MICROSECOND, created_at, available_at) - 300000000) < 1000000 FROM jobs WHERE id = ${id:-0}")" 1 \
	"--delay 5m: available_at is created_at + 5 minutes"
is "$(sql "SELECT ABS(TIMESTAMPDIFF(SECOND, UTC_TIMESTAMP(), available_at) - 300) <= 10 FROM jobs WHERE id = ${id:-0}")" 1 \
	"--delay 5m: that is now + 5 minutes in UTC"
run enqueue -d 90 echo '{}'
is "$(sql "SELECT ABS(TIMESTAMPDIFF(MICROSECOND, created_at, available_at) - 90000000) < 1000000 FROM jobs WHERE id = ${OUT:-0}")" 1 \
	"--delay 90 means 90 seconds"

# --at: exact, UTC unless it carries an offset.
at_is() {
	local arg=$1 want=$2
	run enqueue --at "$arg" echo '{}'
	if [ "$RC" != 0 ]; then
		ok 1 "--at '$arg' accepted"
		echo "#   $ERR"
		return
	fi
	is "$(sql "SELECT DATE_FORMAT(available_at, '%Y-%m-%d %H:%i:%s') FROM jobs WHERE id = $OUT")" "$want" \
		"--at '$arg' stored as $want UTC"
}
at_is 2031-06-01T12:00:00Z "2031-06-01 12:00:00"
at_is 2031-06-01T12:00:00 "2031-06-01 12:00:00"
at_is "2031-06-01 12:00:00+02:00" "2031-06-01 10:00:00"
at_is 2031-06-01T08:30:00-05:30 "2031-06-01 14:00:00"
at_is 2031-01-01T01:00:00+03:00 "2030-12-31 22:00:00"
at_is 2031-06-01 "2031-06-01 00:00:00"

# ---- errors: one line on stderr, exit 65, nothing written ----
bad() {
	local what=$1
	shift
	local before after
	before=$(count jobs)
	run "$@"
	after=$(count jobs)
	is "$RC" 65 "$what: exit 65"
	is "$(lines "$ERR")" 1 "$what: one line on stderr"
	is "$OUT" "" "$what: nothing on stdout"
	is "$after" "$before" "$what: nothing written"
	LAST_ERR=$ERR
}
bad "bad JSON" enqueue echo '{"a": '
like "$LAST_ERR" "^jobq: .*not valid JSON" "bad JSON: the message says so"
bad "trailing garbage after JSON" enqueue echo '{"a": 1} x'
# A raw newline or tab inside a string is not JSON (Python's and PHP's
# parsers refuse it), though cJSON reads it; between values it is.
bad "a raw newline inside a JSON string" enqueue echo $'{"a": "x\ny"}'
like "$LAST_ERR" "not valid JSON \\(at byte 8: a control character inside a string" "raw newline in a string: the message names its byte"
bad "a raw tab inside a JSON string" enqueue echo $'{"a": "x\ty"}'
run enqueue echo $'{"a":\t"x\\n\\"\\\\",\n "b": 1}'
is "$RC" 0 "tabs and newlines between values, escapes in a string: accepted"
# A --batch line's payload is written again by cJSON, escaped: the raw
# tab reaches the handler as \t.
run_in <(printf '{"type": "echo", "payload": {"a": "x\ty"}}\n') enqueue --batch
# (The client prints a backslash doubled, a raw tab as \t.)
is "$RC/$(sql "SELECT payload FROM jobs ORDER BY id DESC LIMIT 1")" '0/{"a":"x\\ty"}' \
	"a raw tab in a --batch line's payload: stored escaped"
bad "unknown type" enqueue nosuchtype '{}'
like "$LAST_ERR" "unknown job type 'nosuchtype'" "unknown type: the message names it"
bad "unknown queue" enqueue --queue nosuchqueue echo '{}'
like "$LAST_ERR" "unknown queue 'nosuchqueue'" "unknown queue: the message names it"
big=$(head -c 1100 /dev/zero | tr '\0' 'x')
bad "payload over max_payload (1K)" enqueue echo "\"$big\""
like "$LAST_ERR" "max_payload" "oversize: the message names max_payload"
: >"$T/empty"
before=$(count jobs)
run_in "$T/empty" enqueue echo
is "$RC/$(count jobs)" "65/$before" "empty payload on stdin: exit 65, nothing written"

# max_payload is 1024 bytes: exactly that is fine.
p1024="\"$(head -c 1022 /dev/zero | tr '\0' 'y')\""
run enqueue echo "$p1024"
is "$RC" 0 "a payload of exactly max_payload (1024 bytes) is accepted"
is "$(sql "SELECT LENGTH(payload) FROM jobs WHERE id = ${OUT:-0}")" 1024 "and stored whole"

# ---- usage errors: 64, nothing written ----
usage() {
	local what=$1
	shift
	local before
	before=$(count jobs)
	run "$@"
	is "$RC/$(count jobs)" "64/$before" "usage: $what exits 64, writes nothing"
}
usage "no TYPE" enqueue
usage "too many arguments" enqueue echo '{}' extra
usage "unknown option" enqueue --bogus echo '{}'
usage "--priority out of range" enqueue --priority 40000 echo '{}'
usage "--priority not a number" enqueue --priority high echo '{}'
usage "--max-attempts 0" enqueue --max-attempts 0 echo '{}'
usage "bad --delay" enqueue --delay soon echo '{}'
# A malformed option value is a usage error, whichever the option.
usage "bad --at (month 13)" enqueue --at 2031-13-01T00:00:00 echo '{}'
like "$ERR" "--at: bad time '2031-13-01T00:00:00'" "bad --at: the message names the option and quotes the time"
usage "bad --at (February 30th)" enqueue --at 2031-02-30 echo '{}'
usage "bad --at (not a time)" enqueue --at tomorrow echo '{}'
usage "bad --at (bad offset)" enqueue --at 2031-06-01T12:00:00+25:00 echo '{}'
usage "--at with --delay" enqueue --at 2031-01-01 --delay 5m echo '{}'
usage "--dry-run without --batch" enqueue --dry-run echo '{}'
usage "--batch with arguments" enqueue --batch echo

# ---- --batch ----
sql "DELETE FROM jobs"
cat >"$T/batch.jsonl" <<'EOF'
{"type": "echo", "payload": {"n": 1}}

{"type": "mailer"}
   
{"type": "echo", "queue": "mail", "priority": 3, "payload": [1, 2], "max_attempts": 9}
{"type": "echo", "delay": "10m", "payload": {"n": 4}}
{"type": "echo", "delay": 60}
{"type": "echo", "at": "2031-06-01T12:00:00+02:00"}
EOF
run_in "$T/batch.jsonl" enqueue --batch
is "$RC" 0 "--batch with good lines (and blank ones) exits 0"
like "$OUT" "6 jobs" "and says it enqueued 6 jobs"
is "$(count jobs)" 6 "6 rows written (blank lines ignored)"
is "$(sql "SELECT GROUP_CONCAT(CONCAT_WS(':', type, queue, priority, COALESCE(max_attempts, '-'), payload) ORDER BY id SEPARATOR ' ') FROM jobs")" \
	'echo:default:0:-:{"n":1} mailer:mail:0:-:{} echo:mail:3:9:[1,2] echo:default:0:-:{"n":4} echo:default:0:-:{} echo:default:0:-:{}' \
	"each line's type, queue (handler's by default), priority, max_attempts, payload ({} when absent)"
is "$(sql "SELECT GROUP_CONCAT(ROUND(TIMESTAMPDIFF(MICROSECOND, created_at, available_at) / 1000000) ORDER BY id) FROM jobs WHERE id IN (SELECT id FROM (SELECT id FROM jobs ORDER BY id LIMIT 3, 2) x)")" \
	"600,60" "per-line delay: \"10m\" and 60 (seconds)"
is "$(sql "SELECT DATE_FORMAT(available_at, '%Y-%m-%d %H:%i:%s') FROM jobs ORDER BY id DESC LIMIT 1")" \
	"2031-06-01 10:00:00" "per-line at, with an offset, stored in UTC"

# Numbers are stored as cJSON writes them, whole ones by a faster path
# (json_print_compact): the same text at every edge of that path.
sql "DELETE FROM jobs"
cat >"$T/numbers.jsonl" <<'EOF'
{"type": "echo", "payload": {"a": 0, "b": -0, "c": 1e3, "d": 999999999999999, "e": -999999999999999, "f": 1000000000000000, "g": 1.5, "h": -7, "i": 2.0, "j": [1, [-2, {"k": 3}]], "l": 0.1, "m": 12345678901234567890, "n": 1e300}}
{"type": "echo", "payload": -12}
{"type": "echo", "payload": -0.0}
EOF
run_in "$T/numbers.jsonl" enqueue --batch
is "$RC/$(sql "SELECT GROUP_CONCAT(payload ORDER BY id SEPARATOR ' ') FROM jobs")" \
	'0/{"a":0,"b":-0,"c":1000,"d":999999999999999,"e":-999999999999999,"f":1e+15,"g":1.5,"h":-7,"i":2,"j":[1,[-2,{"k":3}]],"l":0.1,"m":1.2345678901234567e+19,"n":1e+300} -12 -0' \
	"payload numbers: whole ones under 10^15 as digits, -0, 10^15 and others as cJSON writes them"

# Flags give the defaults; a line's own field wins.
sql "DELETE FROM jobs"
printf '%s\n' '{"type": "echo"}' '{"type": "echo", "queue": "default", "priority": 1, "max_attempts": 2}' >"$T/defaults.jsonl"
run_in "$T/defaults.jsonl" enqueue --batch --queue mail --priority 7 --max-attempts 4 --delay 2h
is "$RC" 0 "--batch with default flags exits 0"
is "$(sql "SELECT GROUP_CONCAT(CONCAT_WS(':', queue, priority, max_attempts, ROUND(TIMESTAMPDIFF(SECOND, created_at, available_at) / 60)) ORDER BY id SEPARATOR ' ') FROM jobs")" \
	"mail:7:4:120 default:1:2:120" "flags are the defaults (queue, priority, max_attempts, delay); a line's fields override them"
sql "DELETE FROM jobs"
printf '%s\n' '{"type": "echo"}' '{"type": "echo", "delay": 60}' >"$T/at-default.jsonl"
run_in "$T/at-default.jsonl" enqueue --batch --at 2031-06-01T12:00:00Z
is "$(sql "SELECT GROUP_CONCAT(IF(YEAR(available_at) = 2031, DATE_FORMAT(available_at, '%Y-%m-%d %H:%i'), ROUND(TIMESTAMPDIFF(SECOND, created_at, available_at))) ORDER BY id) FROM jobs")" \
	"2031-06-01 12:00,60" "--at is a default too: a line with its own \"delay\" gets that delay, not the --at time"

# Bad lines: every one reported as "line N: reason", exit 65, nothing written.
sql "DELETE FROM jobs"
cat >"$T/bad.jsonl" <<EOF
{"type": "echo"}
{"type": "nosuchtype"}
{"type": "echo", "queue": "nosuchqueue"}

not json at all
{"payload": {}}
{"type": "echo", "priority": 99999}
{"type": "echo", "at": "2031-13-01"}
{"type": "echo", "payload": "$big"}
{"type": "echo", "colour": "red"}
{"type": "echo", "delay": "soon"}
{"type": "echo", "max_attempts": 0}
{"type": "echo"} trailing garbage
{"type": "echo", "payload": {}, "type": "echo"}
{"type": "echo"}
EOF
run_in "$T/bad.jsonl" enqueue --batch
is "$RC" 65 "--batch with bad lines exits 65"
is "$(count jobs)" 0 "nothing written, not even the good lines"
got=$(printf '%s\n' "$ERR" | grep -o '^jobq: enqueue: line [0-9]*:' | grep -o '[0-9]*' | tr '\n' ' ')
is "$got" "2 3 5 6 7 8 9 10 11 12 13 14 " "one 'line N:' message for each bad line, with the right numbers (blank lines counted)"
like "$ERR" "line 2: unknown job type 'nosuchtype'" "line 2: the unknown type is named"
like "$ERR" "line 3: unknown queue 'nosuchqueue'" "line 3: the unknown queue is named"
like "$ERR" "line 9: payload is [0-9]+ bytes, more than max_payload" "line 9: oversize payload"
like "$ERR" "line 8: bad time '2031-13-01'" "line 8: bad at"
like "$ERR" 'line 14: field "type" is given twice' "line 14: a field given twice (cJSON would take the first, Python the last)"
is "$OUT" "" "nothing on stdout"

# --dry-run prints and writes nothing.
run_in "$T/batch.jsonl" enqueue --batch --dry-run
is "$RC" 0 "--dry-run exits 0"
is "$(count jobs)" 0 "--dry-run writes nothing"
is "$(printf '%s\n' "$OUT" | grep -c '^line [0-9]*: ')" 6 "--dry-run prints one line per job"
like "$OUT" 'line 5: echo queue=mail priority=3 .*payload=\[1,2\]' "each with its line number, type, queue, priority, payload"
like "$OUT" 'would enqueue 6 jobs' "and the total"
run_in "$T/bad.jsonl" enqueue --batch --dry-run
is "$RC/$(count jobs)" "65/0" "--dry-run of a bad batch: exit 65, nothing written"

# A big batch is inserted completely.
python3 -c '
import json
for i in range(20000):
    print(json.dumps({"type": "echo", "payload": {"i": i}, "priority": i % 5}))' >"$T/big.jsonl"
run_in "$T/big.jsonl" enqueue --batch
is "$RC" 0 "a batch of 20,000 lines exits 0"
is "$(count jobs)" 20000 "all 20,000 jobs are there"
is "$(sql "SELECT COUNT(DISTINCT JSON_VALUE(payload, '\$.i')) FROM jobs")" 20000 "each payload once"
is "$(sql "SELECT CONCAT(MIN(JSON_VALUE(payload, '\$.i')), '-', MAX(CAST(JSON_VALUE(payload, '\$.i') AS UNSIGNED)), ' ', SUM(priority)) FROM jobs")" \
	"0-19999 40000" "first and last line included, priorities kept"
finish
