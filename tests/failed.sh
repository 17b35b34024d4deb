#!/bin/bash
# jobq failed: list (filters, newest first, first line of the error),
# show, retry ID... / --all, forget, clear [--older-than]; unknown ids
# change nothing; and retry --all / forget racing with workers that
# dead-letter the same jobs: every job ends in exactly one table.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
. "$top_srcdir/tests/operator/common.sh"
setup failed

write_conf <<EOC
[worker]
poll_interval = 20ms

[queue default]
[queue mail]
[queue race]

[handler echo]
exec = $HANDLERS/echo.sh

[handler dead]
exec = /bin/sh -c 'echo "dead: cannot parse payload" >&2; echo "  at line 2" >&2; exit 65'

[handler dead2]
exec = /bin/sh -c 'echo "dead2: no such user" >&2; echo "detail" >&2; exit 67'
queue = mail
max_attempts = 9

[handler die]
exec = /bin/sh -c 'exit 65'
queue = race
EOC

run failed
is "$RC/$OUT" "0/0 failed jobs" "an empty dead-letter table: '0 failed jobs'"

# Five jobs dead-lettered by a real worker.
a1=$(jq_ enqueue dead '{"k": "a1"}')
a2=$(jq_ enqueue --priority 2 dead '{"k": "a2"}')
a3=$(jq_ enqueue dead '{"k": "a3"}')
b1=$(jq_ enqueue dead2 '{"k": "b1"}')
b2=$(jq_ enqueue dead2 '{"k": "b2"}')
jq_ work --queue default,mail --stop-when-empty 2>"$T/work.log"
is "$(count failed_jobs)/$(count jobs)" "5/0" "a worker dead-lettered all five"
# Failure times that do not follow the ids: newest first is a2 b1 a1 b2 a3.
sql "UPDATE failed_jobs SET failed_at = UTC_TIMESTAMP(6) - INTERVAL (CASE id
     WHEN $a2 THEN 1 WHEN $b1 THEN 2 WHEN $a1 THEN 3 WHEN $b2 THEN 4 WHEN $a3 THEN 5 END) MINUTE"

# ---- list ----
ids() { awk '$1 ~ /^[0-9]+$/ && $2 != "failed" { print $1 }' | tr '\n' ' '; }
run failed
is "$RC" 0 "failed (list) exits 0"
is "$(printf '%s\n' "$OUT" | ids)" "$a2 $b1 $a1 $b2 $a3 " "newest first"
is "$(printf '%s\n' "$OUT" | tail -1)" "5 failed jobs" "then the total"
is "$(lines "$OUT")" 7 "a header, one line per job, the total"
like "$(printf '%s\n' "$OUT" | head -1)" "^ID +FAILED +QUEUE +TYPE +TRY +EXIT +ERROR" "the header names the columns"
line_a1=$(printf '%s\n' "$OUT" | awk -v id="$a1" '$1 == id')
like "$line_a1" "default +dead .*dead: cannot parse payload$" "a line shows queue, type and the first line of the error"
like "$line_a1" "exit 65" "and the exit status"
is "$(printf '%s\n' "$OUT" | grep -c 'at line 2')" 0 "only the first line of each error"
run failed list
is "$(printf '%s\n' "$OUT" | ids)" "$a2 $b1 $a1 $b2 $a3 " "'failed list' is the same"
run failed list --queue mail
is "$(printf '%s\n' "$OUT" | ids)" "$b1 $b2 " "--queue mail"
run failed list --type dead
is "$(printf '%s\n' "$OUT" | ids)" "$a2 $a1 $a3 " "--type dead"
run failed list -q default -t dead2
is "$(printf '%s\n' "$OUT" | ids)" "" "--queue default --type dead2: none"
# A queue or type no section names may be a typo: the empty list says
# so on stderr, as retry --all does.
run failed list -q defualt
is "$RC/$OUT" "0/0 failed jobs" "--queue of no queue: 0 failed jobs"
like "$ERR" "^jobq: note: no \[queue defualt\] in .* \(a queue only old jobs may have, or a typo\?\)$" \
	"with a note that the queue is not configured"
run failed list -t daed
like "$RC $ERR" "^0 jobq: note: no \[handler daed\] in " "--type of no handler: the same note"
run failed list --limit 2
is "$(printf '%s\n' "$OUT" | ids)" "$a2 $b1 " "--limit 2: the two newest"
# The hint to the next page keeps the filters: without them it lists
# every queue.
run failed list -q default --limit 2
is "$(printf '%s\n' "$OUT" | tail -1)" "2 failed jobs shown; 1 older: jobq failed -q default --limit 2 --after $a1" \
	"-q default --limit 2: the hint to the next page repeats -q and --limit"
hint=$(printf '%s\n' "$OUT" | tail -1 | sed 's/.*older: jobq //')
# shellcheck disable=SC2086
run $hint
is "$(printf '%s\n' "$OUT" | ids)" "$a3 " "and running it shows the rest of queue default only"
like "$(printf '%s\n' "$OUT" | tail -1)" "newer: jobq failed -q default --limit 2 --before $a3\$" "whose hint back keeps them too"
run failed list -t dead2 --limit 1 --json
is "$ERR" "jobq: failed: 1 more: -t dead2 --limit 1 --after $b1 for the next page, -t dead2 --limit 0 for all" \
	"--json: the hint on stderr repeats -t and --limit"
run failed list --json
is "$RC" 0 "list --json exits 0"
is "$(printf '%s' "$OUT" | jget '[r["id"] for r in d]')" "[$a2, $b1, $a1, $b2, $a3]" "--json: newest first"
is "$(printf '%s' "$OUT" | jget "[(r['queue'], r['type'], r['attempts'], r['exit_status']) for r in d if r['id'] == $b1]")" \
	'[["mail", "dead2", 1, "exit 67"]]' "--json: queue, type, attempts, exit status"
is "$(printf '%s' "$OUT" | jget "[r['error'] for r in d if r['id'] == $b1][0]")" 'dead2: no such user' "--json: the first line of the error (failed show has it whole)"

# A job that died without a word (exit 65, stderr empty) is summed up by
# its reason, in the text and the JSON alike.
s1=$(jq_ enqueue die '{}')
jq_ work --queue race --stop-when-empty 2>>"$T/work.log"
run failed list -q race
like "$(printf '%s\n' "$OUT" | awk -v id="$s1" '$1 == id')" "exit 65 +exit 65 is a permanent failure$" \
	"a silent dead job: the reason in the text's error column"
run failed list -q race --json
is "$(printf '%s' "$OUT" | jget "[r['error'] for r in d if r['id'] == $s1]")" '["exit 65 is a permanent failure"]' \
	"and the same summary in --json, not \"\""
sql "DELETE FROM failed_jobs WHERE id = $s1; DELETE FROM job_runs WHERE job_id = $s1"

# ---- show ----
run failed show "$a1"
is "$RC" 0 "failed show exits 0"
is "$(printf '%s\n' "$OUT" | head -1)" "job $a1: failed" "failed show: the job, failed"
like "$OUT" $'error:\n  dead: cannot parse payload\n    at line 2' "failed show: the whole error"
like "$OUT" '"k":[[:space:]]+"a1"' "failed show: the payload"
echo_id=$(jq_ enqueue echo '{}')
run failed show "$echo_id"
is "$RC" 65 "failed show of a queued (not failed) job: 65"
like "$ERR" "no failed job $echo_id" "and says so"
sql "DELETE FROM jobs WHERE id = $echo_id"

# ---- retry ----
snap() { sql "SELECT CONCAT_WS('|', id, queue, type, payload, priority, COALESCE(max_attempts, '-')) FROM $1 WHERE id = $2"; }
before=$(snap failed_jobs "$a2")
run failed retry "$a2"
is "$RC" 0 "retry ID exits 0"
is "$OUT" "retried 1 job" "and says how many"
is "$(count failed_jobs "id = $a2")" 0 "the job left failed_jobs"
is "$(snap jobs "$a2")" "$before" "it is back in jobs: same id, queue, type, payload, priority, max_attempts"
is "$(sql "SELECT CONCAT(attempts, ' ', lease_token IS NULL, ' ', ABS(TIMESTAMPDIFF(SECOND, available_at, UTC_TIMESTAMP())) <= 10) FROM jobs WHERE id = $a2")" \
	"0 1 1" "attempts 0, not reserved, due now"
run show --json "$a2"
is "$(printf '%s' "$OUT" | jget 'd["state"]')" "ready" "show: the retried job is ready"

snap_all() { sql "SELECT GROUP_CONCAT(id ORDER BY id) FROM failed_jobs"; echo "/$(sql "SELECT GROUP_CONCAT(id ORDER BY id) FROM jobs")"; }
before=$(snap_all)
run failed retry "$a1" 999999 "$b1"
is "$RC" 65 "retry with an unknown id among valid ones: 65"
like "$ERR" "no failed job 999999" "names the unknown id"
is "$(snap_all)" "$before" "and nothing was done (the valid ids stay dead-lettered)"
run failed retry "$a2"
is "$RC/$(snap_all)" "65/$before" "retry of a job that is queued, not failed: 65, nothing done"
run failed retry
is "$RC" 64 "retry without ids: 64"
run failed retry --all 5
is "$RC" 64 "retry --all with ids: 64"

run failed retry "$a1" "$b2"
is "$RC/$OUT" "0/retried 2 jobs" "retry of two ids: 'retried 2 jobs'"
is "$(count failed_jobs "id IN ($a1, $b2)")/$(count jobs "id IN ($a1, $b2) AND attempts = 0")" "0/2" "both moved"

# Back to five dead-lettered jobs for --all.
jq_ work --queue default,mail --stop-when-empty 2>>"$T/work.log"
is "$(count failed_jobs)/$(count jobs)" "5/0" "the retried jobs ran and died again"
run failed retry --all --type dead2
is "$RC/$OUT" "0/retried 2 jobs" "retry --all --type dead2: 2"
is "$(sql "SELECT GROUP_CONCAT(id ORDER BY id) FROM jobs")" "$b1,$b2" "exactly the dead2 jobs moved"
sql "DELETE FROM jobs"
sql "INSERT INTO failed_jobs (id, queue, type, payload, exception) VALUES (900001, 'mail', 'dead', '{}', 'x'), (900002, 'default', 'dead', '{}', 'y')"
run failed retry --all --queue mail
is "$RC/$OUT" "0/retried 1 job" "retry --all --queue mail: 1"
is "$(sql "SELECT GROUP_CONCAT(id) FROM jobs")" "900001" "exactly the mail job moved"
run failed retry --all --queue default --type dead
is "$OUT" "retried 4 jobs" "retry --all --queue default --type dead: 4"
run failed retry --all
is "$RC/$OUT/$(count failed_jobs)" "0/retried 0 jobs/0" "retry --all on an empty table: 0"

# ---- forget ----
sql "DELETE FROM jobs"
sql "INSERT INTO failed_jobs (id, queue, type, payload, exception) VALUES (1, 'default', 'dead', '{}', 'e'), (2, 'default', 'dead', '{}', 'e'), (3, 'mail', 'dead2', '{}', 'e')"
run failed forget 1 2
is "$RC/$(count failed_jobs)" "64/3" "forget of two ids with no terminal and no --yes: 64, nothing deleted"
like "$ERR" "pass --yes" "and says to pass --yes"
run failed forget --yes 1 2
is "$RC/$OUT" "0/forgot 2 jobs" "forget --yes two ids: 'forgot 2 jobs'"
is "$(sql "SELECT GROUP_CONCAT(id) FROM failed_jobs")/$(count jobs)" "3/0" "they are gone (not retried)"
run failed forget --yes 3 4
is "$RC" 65 "forget with an unknown id: 65"
like "$ERR" "no failed job 4" "names it"
is "$(count failed_jobs "id = 3")" 1 "nothing was done"
run failed forget
is "$RC" 64 "forget without ids: 64"
run failed forget x1
is "$RC" 64 "forget of a non-number: 64"

# ---- clear ----
sql "DELETE FROM failed_jobs"
sql "INSERT INTO failed_jobs (id, queue, type, payload, exception, failed_at) VALUES
     (11, 'default', 'dead', '{}', 'e', UTC_TIMESTAMP(6) - INTERVAL 3 DAY),
     (12, 'default', 'dead', '{}', 'e', UTC_TIMESTAMP(6) - INTERVAL 25 HOUR),
     (13, 'default', 'dead', '{}', 'e', UTC_TIMESTAMP(6) - INTERVAL 23 HOUR),
     (14, 'mail', 'dead2', '{}', 'e', UTC_TIMESTAMP(6) - INTERVAL 1 MINUTE)"
run failed clear --older-than 1d
is "$RC/$(count failed_jobs)" "64/4" "clear with no terminal and no --yes: 64, nothing deleted"
run failed clear --older-than 1d --yes
is "$RC/$OUT" "0/cleared 2 failed jobs" "clear --older-than 1d: 'cleared 2'"
is "$(sql "SELECT GROUP_CONCAT(id ORDER BY id) FROM failed_jobs")" "13,14" "only the rows older than a day went"
run failed clear --older-than 2h -y
is "$OUT/$(sql "SELECT GROUP_CONCAT(id) FROM failed_jobs")" "cleared 1 failed job/14" "clear --older-than 2h: one more"
run failed clear --older-than soon --yes
is "$RC/$(count failed_jobs)" "64/1" "a bad duration: 64, nothing cleared"
run failed clear --yes 14
is "$RC/$(count failed_jobs)" "64/1" "clear takes no ids: 64"
run failed clear --yes
is "$RC/$OUT/$(count failed_jobs)" "0/cleared 1 failed job/0" "clear: everything"
run failed bogus
is "$RC" 64 "an unknown subcommand: 64"

# ---- retry --all racing with workers that dead-letter at once ----
N=300
sql "DELETE FROM jobs; DELETE FROM failed_jobs; DELETE FROM job_runs"
python3 -c "
import json
for i in range($N): print(json.dumps({'type': 'die', 'payload': {'i': i}}))" >"$T/race.jsonl"
jq_ enqueue --batch <"$T/race.jsonl" >/dev/null
sql "CREATE TABLE orig (id BIGINT UNSIGNED PRIMARY KEY) SELECT id FROM jobs"
is "$(count orig)" "$N" "$N jobs to race with"

# invariant NAME EXPECTED_TOTAL: every job in exactly one table.
invariant() {
	is "$(sql "SELECT COUNT(*) FROM jobs j JOIN failed_jobs f ON f.id = j.id")" 0 "$1: no job in both tables"
	is "$(sql "SELECT (SELECT COUNT(*) FROM jobs) + (SELECT COUNT(*) FROM failed_jobs)")" "$2" "$1: jobs + failed_jobs = $2"
	is "$(sql "SELECT COUNT(*) FROM (SELECT id FROM jobs UNION ALL SELECT id FROM failed_jobs) x LEFT JOIN orig o ON o.id = x.id WHERE o.id IS NULL")" 0 \
		"$1: no id that was never enqueued"
}
workers() {
	WPIDS=()
	for w in 1 2 3; do
		start_worker --queue race -j 2
		WPIDS+=("$WORKER_PID")
	done
}
stop_workers() {
	local p bad=0
	for p in "${WPIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
	for p in "${WPIDS[@]}"; do wait_exit 20 "$p" || bad=$((bad + 1)); done
	is "$bad" 0 "$1: the workers stopped cleanly"
}

workers
retried=0 rounds=0 fails=0
end=$((SECONDS + 6))
# 6 s, and on a loaded machine (a few rounds only) on until the jobs
# went back and forth at least once over.
while [ $SECONDS -lt $end ] || { [ $retried -le $N ] && [ $SECONDS -lt $((end + 90)) ]; }; do
	out=$(jq_ failed retry --all 2>>"$T/race.err") || fails=$((fails + 1))
	n=$(printf '%s\n' "$out" | sed -n 's/^retried \([0-9]*\) jobs\{0,1\}$/\1/p')
	[ -n "$n" ] || fails=$((fails + 1))
	retried=$((retried + ${n:-0}))
	rounds=$((rounds + 1))
done
stop_workers "retry race"
is "$fails" 0 "retry race: all $rounds 'retry --all' runs succeeded"
[ -s "$T/race.err" ] && diag "retry --all said: $(head -3 "$T/race.err")"
ok $((retried > N ? 0 : 1)) "retry race: jobs went back and forth ($retried retried)"
invariant "retry race" "$N"
is "$(sql "SELECT COUNT(*) FROM job_runs WHERE outcome NOT IN ('dead')")" 0 "retry race: every run ended dead (none lost)"
queued=$(count jobs)
is "$(count job_runs)" "$((N + retried - queued))" "retry race: runs = $N + retries - jobs not run again yet ($queued)"

# ---- forget racing with retry --all (and the workers) ----
workers
forgot=0 ffails=0 rfails=0
end=$((SECONDS + 6))
(
	while [ $SECONDS -lt $end ]; do
		jq_ failed retry --all >/dev/null 2>>"$T/race2.err" || echo x >>"$T/rfails"
	done
) &
rpid=$!
BG_PIDS+=("$rpid")
# On a loaded machine every pick can lose to a retry for the whole 6 s:
# go on (the retries have stopped then) until one forget took something.
while [ $SECONDS -lt $end ] || { [ $forgot = 0 ] && [ $SECONDS -lt $((end + 60)) ]; }; do
	pick=$(sql "SELECT id FROM failed_jobs ORDER BY RAND() LIMIT 3" | tr '\n' ' ')
	[ -n "$pick" ] || continue
	# shellcheck disable=SC2086
	out=$(jq_ failed forget --yes $pick 2>>"$T/forget.err")
	rc=$?
	[ $rc = 0 ] || [ $rc = 65 ] || ffails=$((ffails + 1))
	n=$(printf '%s\n' "$out" | sed -n 's/^forgot \([0-9]*\) jobs\{0,1\}$/\1/p')
	[ $rc = 65 ] && [ -z "$n" ] && n=0 # refused before doing anything
	[ -n "$n" ] || ffails=$((ffails + 1))
	forgot=$((forgot + ${n:-0}))
done
wait "$rpid"
stop_workers "forget race"
is "$ffails" 0 "forget race: every forget exited 0 or 65 and said how many"
is "$(cat "$T/rfails" 2>/dev/null | wc -l | tr -d ' ')" 0 "forget race: every concurrent 'retry --all' succeeded"
ok $((forgot > 0 ? 0 : 1)) "forget race: some jobs were forgotten ($forgot)"
invariant "forget race" "$((N - forgot))"
finish
