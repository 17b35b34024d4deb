#!/bin/bash
# jobq enqueue rejects, with exit 65 and nothing written, everything the
# server would reject (issue 8, defect 5 and the packet case of 13):
# payloads that are not UTF-8, times outside years 0001-9999 once in UTC,
# \u0000 and NUL bytes, and a payload under max_payload whose INSERT is
# over the server's max_allowed_packet once escaped.  A bad line after
# 2,000 good ones writes nothing (not one chunk), --dry-run says 65 too,
# and what is near the limits but valid still goes in.  An expiry of 0
# (a job that would expire as it is enqueued) is refused in every form:
# --expires-in as a usage error (64), a batch line's "expires_in" as bad
# data (65).  So is one already past by the database's clock: --expires-at
# (64), a batch line's "expires_at" (65, naming its line), but for lines an
# earlier run of the same --batch-key committed.  And so is an expiry not
# after the job's due time (--delay, --at, "delay", "at"): 64 or 65 again.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
. "$top_srcdir/tests/operator/common.sh"
setup enqueue_validate

write_conf <<EOC
[worker]
max_payload = 24M

[queue default]

[handler echo]
exec = $HANDLERS/echo.sh
EOC

# rejected NAME: the last run exited 65, wrote nothing, said why ($1 regex).
rejected() {
	local re=$1
	shift
	is "$RC/$(count jobs)" "65/0" "$*: exit 65, nothing written"
	like "$ERR" "$re" "$*: the message says why"
}

# ---- single jobs ----
nest() { printf '%*s' "$1" '' | tr ' ' '['; printf '%*s' "$1" '' | tr ' ' ']'; }
run enqueue echo "$(nest 1001)"
rejected 'payload nests arrays and objects deeper than 1000 levels \(at byte 1000\)' 'arrays nested 1,001 deep'
run enqueue echo "$(nest 1000)"
is "$RC/$(count jobs)" "0/1" "arrays nested 1,000 deep: accepted"
empty_tables
run enqueue echo "$(printf '"\377"')"
rejected 'not valid UTF-8' 'payload "\xff"'
run enqueue echo "$(printf '{"a": "caf\303"}')"
rejected 'not valid UTF-8 \(at byte 10\)' 'payload cut inside a character'
run enqueue echo "$(printf '"\355\240\200"')"
rejected 'not valid UTF-8' 'payload holding a UTF-16 surrogate'
run enqueue --at '9999-12-31T23:30:00-01:00' echo '{}'
rejected 'outside years 0001-9999' '--at past 9999 once in UTC'
run enqueue --at '0001-01-01T00:30:00+01:00' echo '{}'
rejected 'outside years 0001-9999' '--at before year 1 once in UTC'
run enqueue --at '0000-06-01' echo '{}'
rejected 'outside years 0001-9999' '--at in year 0'

# What is valid near those edges still goes in, unchanged.
run enqueue echo "$(printf '{"s": "caf\303\251 \360\237\230\200"}')"
is "$RC" 0 "a payload with 2- and 4-byte characters is accepted"
is "$(sql "SELECT HEX(payload) FROM jobs WHERE id = ${OUT:-0}")" "$(printf '{"s": "caf\303\251 \360\237\230\200"}' | od -An -tx1 | tr -d ' \n' | tr a-f A-F)" \
	"and stored byte for byte"
run enqueue --at '9999-12-31T22:30:00-01:00' echo '{}'
is "$RC/$(sql "SELECT available_at FROM jobs WHERE id = ${OUT:-0}")" "0/9999-12-31 23:30:00.000000" "--at on the last day of 9999 in UTC is accepted"
run enqueue --at '0001-01-01T01:30:00+01:00' echo '{}'
is "$RC/$(sql "SELECT available_at FROM jobs WHERE id = ${OUT:-0}")" "0/0001-01-01 00:30:00.000000" "--at on the first day of year 1 in UTC is accepted"
empty_tables

# ---- a batch: 2,000 good lines, then one the server would refuse ----
python3 -c '
import json
for i in range(2000):
    print(json.dumps({"type": "echo", "payload": {"i": i}}))' >"$T/good.jsonl"
# bad_batch NAME FORMAT REGEX: the good lines, then printf FORMAT (octal
# escapes allowed, so the line may hold any byte, NUL included).
bad_batch() {
	local name=$1 fmt=$2 re=$3
	{ cat "$T/good.jsonl"; printf "$fmt\n"; } >"$T/$name.jsonl"
	run_in "$T/$name.jsonl" enqueue --batch
	rejected "line 2001: .*$re" "batch, $name on line 2001"
	run_in "$T/$name.jsonl" enqueue --batch --dry-run
	is "$RC/$(count jobs)" "65/0" "--dry-run, $name on line 2001: exit 65 as well"
	like "$ERR" "line 2001: .*$re" "--dry-run, $name: the same message"
}
bad_batch invalid-utf8 '{"type": "echo", "payload": "\377"}' 'payload is not valid UTF-8'
bad_batch at-past-9999 '{"type": "echo", "at": "9999-12-31T23:59:59-00:01"}' 'outside years 0001-9999'
bad_batch at-before-0001 '{"type": "echo", "at": "0001-01-01T00:00:00+00:01"}' 'outside years 0001-9999'
bad_batch escaped-nul '{"type": "echo", "payload": "a\\u0000b"}' 'u0000'
bad_batch nul-byte '{"type": "echo", "payload": "a"}\000 x' 'NUL byte'
# deeper than the parser reads: valid JSON, so the message says what it is
bad_batch too-deep "{\"type\": \"echo\", \"payload\": $(nest 1000)}" 'nested deeper than 1000 levels \(at byte 1027\)'

# ---- under max_payload (24M) but over the server's packet once escaped ----
packet=$(sql "SELECT @@max_allowed_packet")
# Backslashes double when escaped: n of them need 2n bytes of statement.
n_over=$(( (packet / 2 / 2) * 2 + 4096 ))   # 2n > packet
n_under=$(( (packet / 2 / 2) * 2 - 8192 ))  # 2n < packet by 16 KiB
python3 -c 'import sys; sys.stdout.write("[\"" + "\\" * int(sys.argv[1]) + "\"]")' "$n_over" >"$T/over.json"
python3 -c 'import sys; sys.stdout.write("[\"" + "\\" * int(sys.argv[1]) + "\"]")' "$n_under" >"$T/under.json"
diag "max_allowed_packet $packet; payloads of $((n_over + 4)) and $((n_under + 4)) bytes"
run_in "$T/over.json" enqueue echo -
rejected "max_allowed_packet \\($packet\\)" "a single payload over the packet once escaped"
is "$(echo "$ERR" | wc -l)" 1 "one line of message"
run_in "$T/under.json" enqueue echo -
is "$RC" 0 "a payload just under the packet once escaped is accepted"
is "$(sql "SELECT LENGTH(payload) FROM jobs WHERE id = ${OUT:-0}")" "$((n_under + 4))" "and stored whole"
empty_tables
{ head -5 "$T/good.jsonl"; printf '{"type": "echo", "payload": %s}\n' "$(cat "$T/over.json")"; } >"$T/over.jsonl"
run_in "$T/over.jsonl" enqueue --batch
rejected "line 6: .*max_allowed_packet" "a batch line over the packet once escaped"
run_in "$T/over.jsonl" enqueue --batch --dry-run
is "$RC/$(count jobs)" "65/0" "--dry-run of that batch: exit 65 too"
{ head -5 "$T/good.jsonl"; printf '{"type": "echo", "payload": %s}\n' "$(cat "$T/under.json")"; head -5 "$T/good.jsonl"; } >"$T/under.jsonl"
run_in "$T/under.jsonl" enqueue --batch
is "$RC/$(count jobs)" "0/11" "a batch with a line just under the packet goes in whole (chunks split around it)"
# ---- an expiry of 0, however written, is refused everywhere ----
empty_tables
for v in 0 0s 0m 0ms; do
	run enqueue --expires-in "$v" echo '{}'
	is "$RC/$(count jobs)" "64/0" "--expires-in $v: exit 64, nothing written"
	like "$ERR" "^jobq: enqueue: --expires-in: expected a duration above 0, not '$v'" \
		"--expires-in $v: the message names the option and the problem"
	is "$(lines "$ERR")" 2 "--expires-in $v: that line and the usual pointer to --help"
done
for v in 0 '"0s"' '"0m"'; do
	printf '{"type": "echo"}\n{"type": "echo", "expires_in": %s}\n' "$v" >"$T/exp0.jsonl"
	run_in "$T/exp0.jsonl" enqueue --batch
	is "$RC/$(count jobs)" "65/0" "batch line with \"expires_in\": $v: exit 65, nothing written"
	like "$ERR" "line 2: \"expires_in\" must be above 0" "\"expires_in\": $v: the line and field are named"
	is "$(grep -c 'expires_in' "$T/err")" 1 "\"expires_in\": $v: said on one line"
done
run enqueue --expires-in 1s echo '{}'
is "$RC/$(sql "SELECT expires_at IS NOT NULL FROM jobs WHERE id = ${OUT:-0}")" "0/1" "--expires-in 1s is accepted, with an expiry"
printf '{"type": "echo", "expires_in": 1}\n' >"$T/exp1.jsonl"
run_in "$T/exp1.jsonl" enqueue --batch
is "$RC/$(count jobs "expires_at IS NOT NULL")" "0/2" "\"expires_in\": 1 is accepted, with an expiry"

# ---- an expiry already past, by the database's clock, is refused too ----
empty_tables
for v in 2020-01-01T00:00:00Z '2020-01-01 02:00+02:00'; do
	run enqueue --expires-at "$v" echo '{}'
	is "$RC/$(count jobs)" "64/0" "--expires-at $v (past): exit 64, nothing written"
	like "$ERR" "^jobq: enqueue: --expires-at: '$(re "$v")' \\(2020-01-01 00:00:00.000000 UTC\\) is in the past" \
		"--expires-at $v: the message names the option and the value"
	is "$(lines "$ERR")" 2 "--expires-at $v: that line and the usual pointer to --help"
done
run enqueue --expires-at 2020-01-01T00:00:00Z --after 1 echo '{}'
is "$RC/$(count jobs)" "64/0" "--expires-at past with --after: exit 64, nothing written"
printf '{"type": "echo"}\n' >"$T/one.jsonl"
run_in "$T/one.jsonl" enqueue --batch --expires-at 2020-01-01T00:00:00Z
is "$RC/$(count jobs)" "64/0" "--expires-at past with --batch: exit 64, nothing written"
printf '{"type": "echo"}\n{"type": "echo", "expires_at": "2020-01-01T00:00:00Z"}\n' >"$T/past.jsonl"
for dry in "" --dry-run; do
	run_in "$T/past.jsonl" enqueue --batch $dry
	is "$RC/$(count jobs)" "65/0" "batch line with a past \"expires_at\" ${dry:-(real run)}: exit 65, nothing written"
	like "$ERR" "line 2: \"expires_at\": 2020-01-01 00:00:00.000000 UTC is in the past" "${dry:-real run}: the line and field are named"
done

# ---- an expiry not after the job's due time: it would never run ----
empty_tables
for opts in "-d 1h --expires-in 30m" "-d 1h --expires-in 1h" "--at 2098-01-01T00:00:00Z --expires-at 2097-01-01T00:00:00Z" \
	"--at 2098-01-01T00:00:00Z --expires-in 1h" "-d 2h --expires-at $(sql "SELECT DATE_FORMAT(UTC_TIMESTAMP() + INTERVAL 1 HOUR, '%Y-%m-%dT%H:%i:%sZ')")"; do
	# shellcheck disable=SC2086
	run enqueue $opts echo '{}'
	is "$RC/$(count jobs)" "64/0" "$opts: exit 64, nothing written"
	like "$ERR" "^jobq: enqueue: the job would expire \\(.*\\) before it is due \\(.*\\) and never run" "$opts: the message says why"
done
printf '{"type": "echo"}\n{"type": "echo", "delay": 3600, "expires_in": 1800}\n' >"$T/early.jsonl"
printf '{"type": "echo", "at": "2098-01-01T00:00:00Z", "expires_in": 60}\n' >"$T/early2.jsonl"
for f in early early2; do
	for dry in "" --dry-run; do
		run_in "$T/$f.jsonl" enqueue --batch $dry
		is "$RC/$(count jobs)" "65/0" "$f: a line expiring before it is due ${dry:-(real run)}: exit 65, nothing written"
		like "$ERR" "line [12]: the job would expire .* before it is due" "$f ${dry:-real run}: the line is named"
	done
done
run enqueue -d 1h --expires-in 61m echo '{}'
is "$RC/$(count jobs)" "0/1" "-d 1h --expires-in 61m: accepted"
run enqueue --at 2098-01-01T00:00:00Z --expires-at 2098-01-01T00:00:01Z echo '{}'
is "$RC/$(count jobs)" "0/2" "--at T --expires-at T+1s: accepted"

empty_tables
run enqueue --expires-at 2099-01-01T00:00:00Z echo '{}'
is "$RC/$(sql "SELECT expires_at FROM jobs WHERE id = ${OUT:-0}")" "0/2099-01-01 00:00:00.000000" "--expires-at in the future is accepted"
# A batch run again with its key: lines it committed may have expired since.
soon=$(sql "SELECT UTC_TIMESTAMP(6) + INTERVAL 1 SECOND")
printf '{"type": "echo", "expires_at": "%sZ"}\n' "${soon/ /T}" >"$T/soon.jsonl"
run_in "$T/soon.jsonl" enqueue --batch --batch-key exp-soon
is "$RC/$(count jobs)" "0/2" "a batch line expiring in 1s is accepted"
wait_for_sql 5 "SELECT UTC_TIMESTAMP(6) > '$soon'" 1
run_in "$T/soon.jsonl" enqueue --batch --batch-key exp-soon
is "$RC/$(count jobs)" "0/2" "run again with its key once that time passed: complete, not refused"
finish
