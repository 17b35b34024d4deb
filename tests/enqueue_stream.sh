#!/bin/bash
# jobq enqueue --batch streams and is safe to re-run (issue 8, defect 15):
# memory does not grow with the input (from a file or a pipe), a bad last
# line of a piped stream still writes nothing, and when the connection is
# killed mid-way -- between two chunks, or at whatever moment the kill
# lands -- the count printed is the count in the table, and running again
# with the batch key the message names adds exactly the missing jobs
# (then nothing; other input or options under that key are refused).
# SIGTERM stops after the chunk in flight, with the same exact report.
. "$top_srcdir/tests/lib.sh"
one_build normal "a scale test"
. "$top_srcdir/tests/operator/common.sh"
setup enqueue_stream

# gen N PAD FILE: N jobs with distinct payloads {"i": 0..N-1, "pad": PAD x's}.
gen() {
	python3 -c '
import json, sys
n, pad = int(sys.argv[1]), "x" * int(sys.argv[2])
for i in range(n):
    print(json.dumps({"type": "echo", "payload": {"i": i, "pad": pad}}))' "$1" "$2" >"$3"
}

# The open transactions of this test's database (FROM $trx [AND ...]).
trx="information_schema.innodb_trx t JOIN information_schema.processlist p
	ON p.id = t.trx_mysql_thread_id WHERE p.db = '$DB'"

distinct() {
	sql "SELECT COUNT(DISTINCT JSON_VALUE(payload, '\$.i')) FROM jobs"
}

# ---- memory stays bounded ----
gen 20000 300 "$T/20k.jsonl"
gen 200000 300 "$T/200k.jsonl"
if [ -x /usr/bin/time ]; then
	# ASan keeps freed memory in quarantine; keep that small here so the
	# figure is the program's own.
	export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=4
	/usr/bin/time -f %M -o "$T/rss.small" "$JOBQ" -c "$CONF" enqueue --batch <"$T/20k.jsonl" >/dev/null
	is "$?/$(count jobs)" "0/20000" "20,000 lines from a file: all in"
	empty_tables
	cat "$T/200k.jsonl" | /usr/bin/time -f %M -o "$T/rss.big" "$JOBQ" -c "$CONF" enqueue --batch >/dev/null
	is "$?/$(count jobs)/$(distinct)" "0/200000/200000" "200,000 lines ($(($(stat -c %s "$T/200k.jsonl") / 1048576)) MiB) from a pipe: all in, each once"
	small=$(tail -1 "$T/rss.small")
	big=$(tail -1 "$T/rss.big")
	diag "peak RSS: 20,000 lines ${small} KiB, 200,000 lines ${big} KiB"
	[ "$big" -lt $((small + 16384)) ]
	ok $? "ten times the input costs less than 16 MiB more memory (streamed, not read whole)"
	unset ASAN_OPTIONS
	empty_tables
fi

# A bad line at the very end of a pipe: nothing written.
{ cat "$T/20k.jsonl"; echo '{"type": "echo", "payload": {"i": -1}, "priority": 40000}'; } |
	jq_ enqueue --batch >/dev/null 2>"$T/err"
is "$?/$(count jobs)" "65/0" "a pipe whose last line is bad: exit 65, nothing written"
like "$(cat "$T/err")" "line 20001: .*priority" "the bad line is named"

# Two chunks are written at once, on two connections, while the next is
# read: every job goes in once, and within each chunk of 10,000 lines the
# ids follow the lines (two chunks written at once may take their ids in
# either order; a chunk sent as several statements need not take
# consecutive ids, as the other chunk's statements take theirs between).
# Short lines, so that a chunk is its 10,000 lines: with the 300-byte
# pads above, the 4 MiB limit on a chunk's SQL ends it earlier, and the
# second chunk's first lines may take ids before the first chunk's.
gen 20000 10 "$T/two.jsonl"
run_in "$T/two.jsonl" enqueue --batch
is "$RC/$(count jobs)/$(distinct)" "0/20000/20000" "20,000 lines in two chunks: all in, each once"
is "$(sql "SELECT COUNT(*) FROM (SELECT ROW_NUMBER() OVER (PARTITION BY c ORDER BY id) AS by_id,
	ROW_NUMBER() OVER (PARTITION BY c ORDER BY i) AS by_line FROM (SELECT id,
	CAST(JSON_VALUE(payload, '\$.i') AS UNSIGNED) AS i, CAST(JSON_VALUE(payload, '\$.i') AS UNSIGNED) DIV 10000 AS c
	FROM jobs) x) y WHERE by_id <> by_line")" 0 "and in input order within each chunk"
empty_tables

# ---- the connection is killed between two chunks ----
N=100000
gen $N 10 "$T/kill.jsonl"
jq_ enqueue --batch --batch-key k1 <"$T/kill.jsonl" >"$T/k1.out" 2>"$T/k1.err" &
pid=$!
BG_PIDS+=("$pid")
wait_for_sql 120 "SELECT lines_done > 0 FROM jobq_batches WHERE batch_key = 'k1'" 1
ok $? "the batch commits its first chunk"
# Hold the batch's progress row: the next chunk waits for it.
"$TESTDB_SCRIPT" client "$JOBQ_TESTDB" -N -B "$DB" -e \
	"BEGIN; SELECT lines_done FROM jobq_batches WHERE batch_key = 'k1' FOR UPDATE; SELECT SLEEP(600); COMMIT" \
	>/dev/null 2>&1 &
BG_PIDS+=("$!")
waiting="SELECT id FROM information_schema.processlist WHERE db = '$DB' AND info LIKE 'UPDATE jobq_batches%'"
wait_for_sql 60 "SELECT COUNT(*) FROM ($waiting) w" 1
ok $? "the next chunk waits for the row lock"
# The chunk after it is written at once on the other connection: its
# rows are in, and it waits for the one before to commit.
wait_for_sql 60 "SELECT COUNT(*) FROM $trx AND trx_rows_modified >= 10000" 2
ok $? "two chunks are in flight at once, each with its rows inserted"
sql_root "KILL CONNECTION $(sql "$waiting")"
wait_exit 60 "$pid"
rc=$?
sql_root "KILL CONNECTION $(sql "SELECT id FROM information_schema.processlist WHERE db = '$DB' AND info LIKE 'SELECT SLEEP%'")"
err=$(cat "$T/k1.err")
is "$rc" 69 "the killed batch exits 69"
printed=$(echo "$err" | grep -o "[0-9]* of $N jobs are committed" | cut -d' ' -f1)
in_table=$(count jobs)
is "$printed" "$in_table" "the count it prints ($printed) is the count in the table"
[ "${printed:-0}" -gt 0 ] && [ "${printed:-0}" -lt $N ]
ok $? "which is part of the batch"
like "$err" "run again with --batch-key k1" "the message says how to add the rest"
run_in "$T/kill.jsonl" enqueue --batch --batch-key k1
is "$RC" 0 "running again with the key exits 0"
like "$OUT" "enqueued $((N - ${printed:-0})) jobs" "and adds exactly the missing jobs"
is "$(count jobs)/$(distinct)" "$N/$N" "now every job is there, each once"
run_in "$T/kill.jsonl" enqueue --batch --batch-key k1
is "$RC/$(count jobs)" "0/$N" "a third run adds nothing"
like "$ERR" "the batch is complete" "and says the batch is complete"
head -10 "$T/kill.jsonl" >"$T/other.jsonl"
run_in "$T/other.jsonl" enqueue --batch --batch-key k1
is "$RC/$(count jobs)" "65/$N" "the key with other input: exit 65, nothing written"
like "$ERR" "batch key 'k1' was used with other input" "and the message says so"
run_in "$T/kill.jsonl" enqueue --batch --batch-key k1 --priority 3
is "$RC/$(count jobs)" "65/$N" "the key with the same input but other defaults (--priority): exit 65, nothing written"

# ---- the chunk before is held up: the one after lets go of its rows ----
# After 5 s of waiting for its turn a chunk rolls back (its rows hold the
# table's metadata lock, which a FLUSH TABLES may need) and waits holding
# nothing; once the chunk before commits, it is written whole.
empty_tables
jq_ enqueue --batch --batch-key k4 <"$T/kill.jsonl" >"$T/k4.out" 2>"$T/k4.err" &
pid=$!
BG_PIDS+=("$pid")
wait_for_sql 120 "SELECT lines_done > 0 FROM jobq_batches WHERE batch_key = 'k4'" 1
"$TESTDB_SCRIPT" client "$JOBQ_TESTDB" -N -B "$DB" -e \
	"BEGIN; SELECT lines_done FROM jobq_batches WHERE batch_key = 'k4' FOR UPDATE; SELECT SLEEP(9); COMMIT" \
	>/dev/null 2>&1 &
hold=$!
wait_for_sql 60 "SELECT COUNT(*) FROM $trx AND trx_rows_modified >= 10000" 2
ok $? "held up: a chunk waits for the row lock, the one after it for its turn, both with their rows"
wait_for_sql 30 "SELECT (SELECT COUNT(*) FROM $trx AND trx_rows_modified > 0) = 1
	AND (SELECT COUNT(*) FROM ($waiting) w) = 1" 1
ok $? "held up: after 5 s the one after has let go of its rows (the first still waits)"
wait "$hold"
wait_exit 120 "$pid"
is "$?/$(count jobs)/$(distinct)" "0/$N/$N" "held up: once the row is free the batch completes, each job once"

# ---- SIGTERM: stops after the chunk in flight and says what is in ----
empty_tables
"$JOBQ" -c "$CONF" enqueue --batch --batch-key k2 <"$T/kill.jsonl" >"$T/k2.out" 2>"$T/k2.err" &
pid=$!
BG_PIDS+=("$pid")
wait_for_sql 120 "SELECT lines_done > 0 FROM jobq_batches WHERE batch_key = 'k2'" 1
kill -TERM "$pid"
wait_exit 60 "$pid"
rc=$?
err=$(cat "$T/k2.err")
is "$rc" 1 "SIGTERM: exit 1"
like "$err" "stopped by SIGTERM" "SIGTERM: the message says so"
printed=$(echo "$err" | grep -o "[0-9]* of $N jobs are committed" | cut -d' ' -f1)
is "$printed" "$(count jobs)" "SIGTERM: the count it prints ($printed) is the count in the table"
run_in "$T/kill.jsonl" enqueue --batch --batch-key k2
is "$RC/$(count jobs)/$(distinct)" "0/$N/$N" "SIGTERM: running again with the key completes the batch, each job once"

# ---- SIGKILL while two chunks are in flight ----
# The server rolls both back; the progress row names only lines whose
# jobs are in, so running again adds exactly the rest.
empty_tables
"$JOBQ" -c "$CONF" enqueue --batch --batch-key k3 <"$T/kill.jsonl" >/dev/null 2>&1 &
pid=$!
BG_PIDS+=("$pid")
wait_for_sql 120 "SELECT COUNT(*) >= 2 FROM $trx AND trx_rows_modified > 0" 1
ok $? "SIGKILL: two chunks are being written"
kill -KILL "$pid"
wait "$pid" 2>/dev/null
wait_for_sql 60 "SELECT COUNT(*) FROM $trx" 0
is "$(sql "SELECT jobs_done FROM jobq_batches WHERE batch_key = 'k3'")" "$(count jobs)" \
	"SIGKILL: the progress row counts exactly the jobs in the table"
is "$(sql "SELECT COUNT(*) FROM jobs WHERE JSON_VALUE(payload, '\$.i') >=
	(SELECT lines_done FROM jobq_batches WHERE batch_key = 'k3')")" 0 "SIGKILL: no job past the lines it names"
run_in "$T/kill.jsonl" enqueue --batch --batch-key k3
is "$RC/$(count jobs)/$(distinct)" "0/$N/$N" "SIGKILL: running again with the key completes the batch, each job once"

# ---- killed at whatever moment the kill lands; resumed from a pipe ----
empty_tables
jq_ enqueue --batch <"$T/kill.jsonl" >"$T/r.out" 2>"$T/r.err" &
pid=$!
BG_PIDS+=("$pid")
wait_for_sql 120 "SELECT COUNT(*) > 0 FROM jobs" 1
conn=$(sql "SELECT id FROM information_schema.processlist WHERE db = '$DB' AND id <> CONNECTION_ID() LIMIT 1")
sql_root "KILL CONNECTION ${conn:-0}"
wait_exit 60 "$pid"
rc=$?
err=$(cat "$T/r.err")
is "$rc" 69 "a batch killed at any moment exits 69"
printed=$(echo "$err" | grep -o "[0-9]* of $N jobs are committed" | cut -d' ' -f1)
is "$printed" "$(count jobs)" "the count it prints ($printed) is the count in the table"
key=$(echo "$err" | grep -o -- "--batch-key [^ ]*" | head -1 | cut -d' ' -f2)
like "$key" '^[0-9]{8}T[0-9]{6}-[0-9a-f]{8}$' "the message names the batch's generated key"
cat "$T/kill.jsonl" | jq_ enqueue --batch --batch-key "$key" >"$T/out" 2>"$T/err"
is "$?/$(count jobs)/$(distinct)" "0/$N/$N" "running again with it (from a pipe) completes the batch, each job once"
finish
