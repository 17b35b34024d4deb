#!/bin/bash
# The charts' statistics (GET /api/stats, issue 21 item 6): runs that
# real workers wrote, rolled up by `jobq serve` into jobq_run_stats, come
# back per bucket by outcome with the p50/p95 of the wait from due to
# start and of the run time, for every queue and type or one of each,
# over 1h, 24h and 7d; each run is counted once with two servers rolling
# up side by side; old buckets are pruned; bad parameters get 400.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
. "$top_srcdir/tests/operator/common.sh"
. "$top_srcdir/tests/serve_lib.sh"
setup serve_stats

write_conf <<EOC
[worker]
poll_interval = 20ms
concurrency = 4

[queue default]
[queue mail]

[handler fast]
exec = /bin/sh -c 'cat >/dev/null'

[handler slow]
exec = /bin/sh -c 'cat >/dev/null; sleep 0.3'
queue = mail

[handler flaky]
exec = /bin/sh -c 'cat >/dev/null; exit 1'
max_attempts = 2
backoff = 100ms

[user vic]
password_hash = $PWHASH
role = viewer
EOC

# Ten fast jobs wait two seconds for a worker; four slow ones in mail run
# 0.3 s each; one flaky job is retried once, then dead.
for i in $(seq 10); do jq_ enqueue fast '{}' >/dev/null; done
sleep 2
jq_ work --queue default --stop-when-empty 2>"$T/work1.log"
for i in 1 2 3 4; do jq_ enqueue slow '{}' >/dev/null; done
jq_ enqueue flaky '{}' >/dev/null
jq_ work --stop-when-empty 2>"$T/work2.log"
is "$(sql "SELECT COUNT(*) FROM job_runs WHERE wait_ms IS NULL")" 0 "every run records its wait"
is "$(sql "SELECT MIN(wait_ms) >= 2000 FROM job_runs WHERE type = 'fast'")" 1 "the fast jobs waited 2 s from due to start"

# Buckets older than every range keeps, planted before the server starts:
# its first pruning removes them.
sql "INSERT INTO jobq_run_stats VALUES (60, '', '', UNIX_TIMESTAMP() DIV 1 - 3 * 3600, 0, 0, 5),
       (7200, '', '', UNIX_TIMESTAMP() DIV 1 - 9 * 86400, 0, 0, 5),
       (60, '', '', UNIX_TIMESTAMP() DIV 1 - 3000, 0, 0, 0)"

serve_start
login vic "$T/jar"
# stats QUERY EXPR: EXPR of /api/stats?QUERY's answer.
stats() {
	hit GET "/api/stats?$1" "$T/jar"
	[ "$CODE" = 200 ] || { echo "HTTP $CODE $BODY"; return; }
	printf '%s' "$BODY" | jget "$2"
}
# Waits (15 s at most) until /api/stats?QUERY's total done is N.
wait_done() {
	local i
	for i in $(seq 150); do
		hit GET "/api/stats?$1" "$T/jar"
		[[ $BODY == *'"total":{"done":'$2,* ]] && return 0
		sleep 0.1
	done
	diag "total done never reached $2: $BODY"
	return 1
}
wait_done range=1h 14
ok $? "the runs written before the server started are rolled up within seconds"
is "$(stats range=1h 'd["total"]["done"], d["total"]["retry"], d["total"]["dead"]')" "[14, 1, 1]" \
	"totals by outcome: 14 done, 1 retried, 1 dead"
is "$(stats range=1h 'len(d["done"]), d["step_s"], sum(d["done"]), sum(d["retry"]), sum(d["dead"])')" \
	"[60, 60, 14, 1, 1]" "1h: 60 buckets of a minute that add up to the totals"
is "$(stats range=1h '(d["now_s"] - d["start_s"]) // 60')" 59 "the last bucket is the minute now"
is "$(stats range=24h 'len(d["done"]), d["step_s"], d["total"]["done"], d["total"]["dead"]')" "[96, 900, 14, 1]" \
	"24h: 96 buckets of 15 minutes, the same runs"
is "$(stats range=7d 'len(d["done"]), d["step_s"], d["total"]["done"], d["total"]["retry"]')" "[84, 7200, 14, 1]" \
	"7d: 84 buckets of 2 hours, the same runs"
# The percentiles are read from bins 19% wide: each is within 10% of the
# run the rank names in job_runs (p50: the ceil(n/2)th, p95: the
# ceil(0.95 n)th).  Only bounds no load can move are absolute: the fast
# jobs waited 2 s at least, the slow ones ran 0.3 s at least.
# truth WHERE COL RANK: the RANKth smallest COL among the runs WHERE.
truth() { sql "SELECT $2 FROM job_runs WHERE $1 ORDER BY $2 LIMIT 1 OFFSET $(($3 - 1))"; }
# near QUERY FIELD WANT: d["total"][FIELD] is within 10% of WANT.
near() { stats "$1" "int(abs(d[\"total\"][\"$2\"] - $3) <= 0.1 * $3 + 1)"; }
w=$(truth "type = 'fast'" wait_ms 5)
is "$(near type=fast wait_p50 "$w")$(stats type=fast 'int(d["total"]["wait_p50"] >= 1800 and d["total"]["done"] == 10)')" 11 \
	"type=fast: 10 done, p50 wait $(stats type=fast 'd["total"]["wait_p50"]') ms, the 5th of 10 runs $w ms (>= 2 s)"
r=$(truth "queue = 'mail'" duration_ms 2)
is "$(near queue=mail run_p50 "$r")$(stats queue=mail 'int(d["total"]["run_p50"] >= 270 and d["total"]["done"] == 4)')" 11 \
	"queue=mail: 4 done, p50 run time $(stats queue=mail 'd["total"]["run_p50"]') ms, the 2nd of 4 runs $r ms (>= 0.3 s)"
diag "mail: $(stats queue=mail "d[\"total\"]")"
w=$(truth "queue = 'mail'" wait_ms 4)
is "$(near queue=mail wait_p95 "$w")" 1 "queue=mail: p95 wait $(stats queue=mail 'd["total"]["wait_p95"]') ms, the longest of 4 ($w ms)"
r=$(truth "type = 'fast'" duration_ms 10)
is "$(near type=fast run_p95 "$r")" 1 "type=fast: p95 run time $(stats type=fast 'd["total"]["run_p95"]') ms, the longest of 10 ($r ms)"
is "$(stats 'queue=mail&type=fast' 'd["total"]')" \
	'{"done": 0, "retry": 0, "dead": 0, "wait_p50": null, "wait_p95": null, "run_p50": null, "run_p95": null}' \
	"a queue and type with no run: zeros and no percentiles"
is "$(stats type=flaky 'd["total"]["retry"], d["total"]["dead"], d["total"]["done"]')" "[1, 1, 0]" \
	"type=flaky: its retry and its dead run"
is "$(stats range=1h 'int(d["run_p50"][-1] is not None or d["run_p50"][-2] is not None)')" 1 "the run times are in the last buckets"
is "$(stats range=1h 'd["behind"]')" 0 "nothing left to count"
is "$(sql "SELECT COUNT(*) FROM jobq_run_stats WHERE (res = 60 AND at < UNIX_TIMESTAMP() - 7200) OR (res = 7200 AND at < UNIX_TIMESTAMP() - 8 * 86400)")" 0 \
	"the first pruning removed the buckets no range shows"

# Two servers roll up side by side: every run is counted once.
URL1=$URL PID1=$SERVE_PID
serve_start
for i in $(seq 200); do echo '{"type": "fast", "payload": {}}'; done | jq_ enqueue --batch >/dev/null
jq_ work --queue default --stop-when-empty 2>"$T/work3.log"
wait_done range=1h 214
ok $? "200 more runs with two servers rolling up"
sleep 4
is "$(stats range=1h 'd["total"]["done"]')" 214 "counted once, not twice (second server)"
URL=$URL1
is "$(stats range=7d 'd["total"]["done"]')" 214 "and the same through the first"
is "$(sql "SELECT SUM(n) FROM jobq_run_stats WHERE res = 900 AND queue = '' AND type = '' AND kind = 4")" 216 \
	"one run-time entry per run in the table"

# Bad parameters.
hit GET "/api/stats?range=2h" "$T/jar"
is "$CODE $BODY" '400 {"error":"range: expected 1h, 24h or 7d"}' "an unknown range: 400"
hit GET "/api/stats?queue=m%C3%A4il" "$T/jar"
is "$CODE" 400 "a queue that cannot be a name: 400"
hit GET "/api/stats?type=$(printf 'x%.0s' $(seq 65))" "$T/jar"
is "$CODE" 400 "a type longer than a name: 400"
hit GET "/api/stats"
is "$CODE" 401 "not logged in: 401"

# A run row whose transaction commits seconds after its insert (a
# worker's outcome transaction may wait on a lock after writing its run
# row, up to its wait limit of 1 to 10 s): the roll-up has meanwhile
# seen a newer id that committed at once, and must still count the late
# one when it commits, not pass over it for good.  The roll-up notes the
# newest id every 3 to 4 s and reads up to it 3 s later: within the
# 10 s the late row stays uncommitted it notes the one after it at least
# once, and reads before the late one commits.
run_row() {
	echo "INSERT INTO job_runs (job_id, queue, type, attempt, worker, started_at, duration_ms, outcome, exit_status)" \
		"VALUES ($1, '$2', 'fast', 1, 'w', UTC_TIMESTAMP(6), 5, 'done', 'exit 0')"
}
sql "BEGIN; $(run_row 900001 late); SELECT SLEEP(10); COMMIT" >/dev/null &
late_pid=$!
sleep 0.3
sql "$(run_row 900002 ontime)"
wait_done queue=ontime 1
ok $? "a run that committed at once is rolled up"
wait "$late_pid"
wait_done queue=late 1
ok $? "a run whose transaction committed 10 s after its insert is rolled up too"

serve_stop
SERVE_PID=$PID1
serve_stop
grep -E 'statistics|Sanitizer|runtime error' "$T/serve.log" | sed 's/^/# /'
! grep -qE 'statistics|Sanitizer|runtime error' "$T/serve.log"
ok $? "no statistics error and no sanitizer report in the servers' log"
finish
