#!/bin/bash
# enqueue --batch --batch-key K run again: options that change what a
# line enqueues (--expires-in, --expires-at, --traceparent, a group's
# --on-complete) are part of the batch's identity, like --queue and
# --priority: other ones under the key are refused (65, nothing
# written), with the numbers of the batch the key holds; the same ones
# find the batch complete.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
. "$top_srcdir/tests/operator/common.sh"
setup life2_batch

write_conf <<EOC
[worker]
poll_interval = 20ms

[queue default]

[handler echo]
exec = $HANDLERS/echo.sh

[handler cb]
exec = $HANDLERS/echo.sh
EOC
printf '{"type": "echo", "payload": {"n": %d}}\n' 1 2 3 >"$T/in.jsonl"

# again KEY ARGS...: the batch run once more with ARGS; sets RC, OUT, ERR
again() { run_in "$T/in.jsonl" enqueue --batch --batch-key "$@"; }

n=0
tp=00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01
for opts in "--expires-in 1h|--expires-in 2h" \
	"--expires-at 2099-01-01T00:00:00Z|--expires-at 2098-01-01T00:00:00Z" \
	"--traceparent $tp|" \
	"--group g1 --on-complete cb|--group g1"; do
	first=${opts%%|*}
	second=${opts#*|}
	key=k$((++n))
	again "$key" $first
	is "$RC|$(count jobs)" "0|$((n * 3))" "[$first] the batch is enqueued"
	again "$key" $first
	is "$RC|$(count jobs)" "0|$((n * 3))" "[$first] the same again: complete, nothing written"
	like "$ERR" "batch $key: lines 1-3 \(3 jobs\) were committed before; the batch is complete" "[$first] it says so"
	again "$key" $second
	is "$RC|$(count jobs)" "65|$((n * 3))" "[$first] then '$second': refused (65), nothing written"
	like "$ERR" "batch key '$key' was used with other input or options \(3 lines, 3 jobs then\)" \
		"[$first] the message gives the batch's numbers as the key holds them"
done

# Other input under a key: the numbers are the key's batch's, not
# whatever the stack held.
printf '{"type": "echo", "payload": {"n": 9}}\n' >"$T/other.jsonl"
run_in "$T/other.jsonl" enqueue --batch --batch-key k1 --expires-in 1h
is "$RC" 65 "other input under k1: refused"
like "$ERR" "batch key 'k1' was used with other input or options \(3 lines, 3 jobs then\); nothing was written" \
	"the message gives that batch's 3 lines and 3 jobs"

# A batch without the later options keeps its hash (one started by an
# older jobq still resumes): the key is the input's and the five
# options', as before.
again k9 --queue default --priority 3
is "$RC" 0 "a batch with only the older options"
is "$(sql "SELECT input_hash FROM jobq_batches WHERE batch_key = 'k9'")" \
	"$(python3 - "$T/in.jsonl" <<'EOP'
import sys
h = 14695981039346656037
data = open(sys.argv[1], 'rb').read()
M = (1 << 64) - 1
# batch_reader.c: 8-byte words, then the bytes left, then the defaults
i = 0
while i + 8 <= len(data):
    w = int.from_bytes(data[i:i + 8], 'little')
    h = ((h ^ w) * 1099511628211) & M
    h ^= h >> 29
    i += 8
for b in data[i:]:
    h = ((h ^ b) * 1099511628211) & M
for b in b"default|0||3|0|":
    h = ((h ^ b) * 1099511628211) & M
print("%016x" % h)
EOP
)" "its hash is the one an older jobq wrote"
finish
