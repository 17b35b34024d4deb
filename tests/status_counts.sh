#!/bin/bash
# jobq status counts (a queue's rows from the trigger-kept jobq_counts,
# split by index) against a brute-force count of every row, over a table
# that mixes every state, rows written by other programs (a lease token
# with no expiry, on either side of now), several queues and a queue the
# configuration lacks, rows waiting for other jobs, and queues with many
# rows on one side of now or both.  Then the counts through work: enqueue
# (jobq and plain INSERT), claims (which write no counter row), done,
# retry, dead-letter, failed retry, prune, a queue changed and rows
# deleted by plain SQL, a rollback, concurrent workers; and TRUNCATE's
# drift, which `jobq check` reports and --repair-counts corrects.  Not
# timed: contrib/bench measures the speed.
. "$top_srcdir/tests/lib.sh"
one_build normal "a scale test"
. "$top_srcdir/tests/operator/common.sh"
setup status_counts

write_conf <<EOC
[queue default]
[queue mail]
[queue idle]
[queue only_failed]

[handler echo]
exec = $HANDLERS/echo.sh

[handler ok]
exec = /bin/true

[handler flaky]
exec = /bin/false
max_attempts = 2
backoff = 10ms

[handler dead]
exec = /bin/false
max_attempts = 1

[handler gate]
exec = $top_srcdir/tests/handlers/gate.sh $T/open
EOC

# mixed SEED: 3,000 jobs over four queues; each row's state depends on
# its number (every 13th is due at the end of time: waiting for other
# jobs when even, delayed when odd).  Every time is at least an hour from now, so no row
# changes state while the test reads.
mixed() {
	sql "SET SESSION max_recursive_iterations = 10000;
	INSERT INTO jobs (queue, type, payload, available_at, lease_token, lease_expires_at, waiting_on)
	WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 3000)
	SELECT ELT(1 + (n * 7 + $1) % 4, 'default', 'mail', 'legacy', 'idle2'), 'echo', '{}',
	  IF(n % 13 = 0, '9999-12-31 23:59:59', UTC_TIMESTAMP(6) + INTERVAL (IF(n % 3 = 0, 1, -1) * (3600 + n)) SECOND),
	  IF(n % 13 <> 0 AND (n % 5 IN (0, 1) OR n % 11 = 0), MD5(n), NULL),
	  CASE WHEN n % 13 = 0 OR n % 11 = 0 THEN NULL
	       WHEN n % 5 = 0 THEN UTC_TIMESTAMP(6) + INTERVAL (3600 + n) SECOND
	       WHEN n % 5 = 1 THEN UTC_TIMESTAMP(6) - INTERVAL (3600 + n) SECOND END,
	  IF(n % 13 = 0 AND n % 2 = 0, 1 + n % 3, 0)
	FROM s;
	INSERT INTO failed_jobs (id, queue, type, payload, exception)
	WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 50)
	SELECT 1000000 + $1 * 100 + n, IF(n % 2, 'mail', 'only_failed'), 'echo', '{}', 'boom' FROM s"
}

# brute: the counts by reading every row, in status --json's order.
brute() {
	sql "SELECT q.queue,
	  COALESCE(SUM(j.lease_token IS NULL AND j.due_at <= UTC_TIMESTAMP(6)), 0),
	  COALESCE(SUM(j.lease_token IS NULL AND j.due_at > UTC_TIMESTAMP(6)
	    AND NOT (j.due_at >= '9999-12-31 23:59:59' AND j.waiting_on > 0)), 0),
	  COALESCE(SUM(j.lease_token IS NULL AND j.due_at >= '9999-12-31 23:59:59' AND j.waiting_on > 0), 0),
	  SUM(j.lease_token IS NOT NULL AND COALESCE(j.lease_expires_at > UTC_TIMESTAMP(6), 0)),
	  SUM(j.lease_token IS NOT NULL AND COALESCE(j.lease_expires_at <= UTC_TIMESTAMP(6), 1)),
	  (SELECT COUNT(*) FROM failed_jobs f WHERE f.queue = q.queue),
	  COALESCE(MAX(IF(j.lease_token IS NULL AND j.due_at <= UTC_TIMESTAMP(6),
	    TIMESTAMPDIFF(SECOND, j.due_at, UTC_TIMESTAMP(6)), NULL)), -1)
	FROM (SELECT RTRIM(queue) AS queue FROM jobs UNION SELECT RTRIM(queue) FROM failed_jobs
	      UNION SELECT 'default' UNION SELECT 'mail' UNION SELECT 'idle' UNION SELECT 'only_failed') q
	LEFT JOIN jobs j IGNORE INDEX (jobs_due, jobs_reserve, jobs_lease) ON j.queue = q.queue
	GROUP BY q.queue ORDER BY q.queue" | tr '\t' ' '
}

# counted [ARGS]: status --json's counts in brute's format (and its exit
# status in $T/rc: this runs in a subshell).
counted() {
	run status --json "$@"
	echo "$RC" >"$T/rc"
	printf '%s' "$OUT" | python3 -c '
import json, sys
d = json.load(sys.stdin)["queues"]
for q in sorted(d):
    c = d[q]
    old = c["oldest_ready_seconds"] if c["ready"] else -1
    print(q, *(c[k] for k in ("ready", "delayed", "waiting", "reserved", "stale", "failed")), old)'
}

# same WANT GOT: equal, the oldest-ready seconds (last field) within 30 s.
same() {
	python3 -c '
import sys
w = [l.split() for l in sys.argv[1].splitlines()]
g = [l.split() for l in sys.argv[2].splitlines()]
ok = len(w) == len(g) and all(a[:-1] == b[:-1] and abs(int(a[-1]) - int(b[-1])) <= 30 for a, b in zip(w, g))
sys.exit(0 if ok else 1)' "$1" "$2"
}

# Another program's spelling of a queue: 'mail ' is 'mail' to the
# column's collation (and to the workers), so it counts as mail.
sql "INSERT INTO jobs (queue, type, payload, available_at, lease_token, lease_expires_at) VALUES
	('mail ', 'echo', '{}', UTC_TIMESTAMP(6) - INTERVAL 2 HOUR, NULL, NULL),
	('mail ', 'echo', '{}', UTC_TIMESTAMP(6) - INTERVAL 2 HOUR, MD5(1), UTC_TIMESTAMP(6) + INTERVAL 2 HOUR),
	('mail  ', 'echo', '{}', UTC_TIMESTAMP(6) + INTERVAL 2 HOUR, MD5(2), NULL)"
for seed in 1 2; do
	mixed $seed
	want=$(brute)
	got=$(counted)
	is "$(cat "$T/rc")" 0 "round $seed: status --json exits 0"
	same "$want" "$got"
	ok $? "round $seed: the counts equal a count of every row"
	[ "$want" = "" ] || diag "brute: $(echo $want)"
	[ "$got" = "" ] || diag "status: $(echo $got)"
	# A state only the held rows tell apart is not empty, so the
	# subtraction was exercised.
	like "$want" "default [0-9]+ [0-9]+ [0-9]+ [1-9][0-9]* [1-9][0-9]* " "round $seed: default has reserved and stale jobs"
	like "$want" "[a-z0-9]+ [0-9]+ [1-9][0-9]* [1-9][0-9]* [0-9]+ [0-9]+ " "round $seed: a queue has waiting jobs"
	got=$(counted -q mail)
	same "$(printf '%s\n' "$want" | awk '$1 == "mail"')" "$got"
	ok $? "round $seed: --queue mail counts the same"
	# Work moves jobs between states; the counts follow.
	sql "DELETE FROM jobs WHERE id % 4 = $seed; UPDATE jobs SET lease_token = NULL, lease_expires_at = NULL WHERE id % 13 = 0"
	same "$(brute)" "$(counted)"
	ok $? "round $seed: after deletes and releases the counts still match"
done
# Sides of now of different sizes (status counts the side the server
# estimates smaller, queue_status.c): 'late' has many rows due later and
# few due, 'big' many on both sides of now, and some waiting.
sql "SET SESSION max_recursive_iterations = 100000;
INSERT INTO jobs (queue, type, payload, available_at, lease_token, lease_expires_at, waiting_on)
WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 37000)
SELECT IF(n <= 12040, 'late', 'big'), 'echo', '{}',
  IF(n > 30000 AND n % 7 = 0, '9999-12-31 23:59:59',
    UTC_TIMESTAMP(6) + INTERVAL (IF(n <= 40 OR (n > 12040 AND n % 2), -1, 1) * (3600 + n)) SECOND),
  IF(n % 401 = 0, MD5(n), NULL),
  IF(n % 401 = 0, UTC_TIMESTAMP(6) + INTERVAL IF(n % 3, 1, -1) HOUR, NULL),
  IF(n > 30000 AND n % 7 = 0 AND n % 401 <> 0, 1 + n % 2, 0)
FROM s"
want=$(brute)
same "$want" "$(counted)"
ok $? "queues past the capped counts on one side of now and on both count right"
like "$want" "big 1[0-9]{4} 1[0-9]{4} [1-9][0-9]{2} [1-9]" \
	"big has more than 10,000 jobs on both sides, and waiting ones"
like "$want" "late [0-9]{2} 1[0-9]{4} " "late has more than 10,000 jobs due later, few due"

# agree: the trigger-kept counts equal a count of every row, of jobs and
# of the dead letter (both sides printed the same way, for the
# diagnostics).
agree() {
	local kept rows
	kept=$(sql "SELECT RTRIM(queue), SUM(jobs), SUM(failed) FROM jobq_counts GROUP BY RTRIM(queue)
		HAVING SUM(jobs) <> 0 OR SUM(failed) <> 0 ORDER BY 1")
	rows=$(sql "SELECT queue, SUM(j), SUM(f) FROM (
		SELECT RTRIM(queue) AS queue, COUNT(*) AS j, 0 AS f FROM jobs GROUP BY RTRIM(queue)
		UNION ALL SELECT RTRIM(queue), 0, COUNT(*) FROM failed_jobs GROUP BY RTRIM(queue)) AS t
		GROUP BY queue ORDER BY 1")
	[ "$kept" = "$rows" ] && return 0
	diag "jobq_counts: $(echo $kept); jobs, failed_jobs: $(echo $rows)"
	return 1
}

empty_tables
agree
ok $? "after deleting every row by plain SQL the counts are zero"
for i in $(seq 10); do jq_ enqueue ok '{}' >/dev/null; done
for i in $(seq 5); do jq_ enqueue -q mail flaky '{}' >/dev/null; done
for i in $(seq 4); do jq_ enqueue dead '{}' >/dev/null; done
printf '{"type": "ok", "payload": {"n": %d}}\n' $(seq 30) | jq_ enqueue --batch >/dev/null
sql "INSERT INTO jobs (queue, type, payload, available_at) VALUES
	('default', 'ok', '{}', UTC_TIMESTAMP()), ('mail', 'ok', '{}', UTC_TIMESTAMP()),
	('mail ', 'ok', '{}', UTC_TIMESTAMP())"
sql "START TRANSACTION; INSERT INTO jobs (queue, type, payload, available_at) VALUES ('default', 'ok', '{}', UTC_TIMESTAMP()); ROLLBACK"
agree
ok $? "jobq enqueue, enqueue --batch, plain INSERTs and a rolled-back one are counted exactly"
is "$(sql "SELECT COUNT(*) FROM jobs")" 52 "52 jobs in the table"

# A claim changes no queue: the UPDATE trigger writes no counter row.
kept=$(sql "SELECT queue, shard, jobs FROM jobq_counts ORDER BY queue, shard")
for i in 1 2 3; do jq_ enqueue -q idle gate '{}' >/dev/null; done
before=$(sql "SELECT queue, shard, jobs FROM jobq_counts ORDER BY queue, shard")
start_worker -q idle -j 3 --stop-when-empty
wait_for_sql 20 "SELECT COUNT(*) FROM jobs WHERE queue = 'idle' AND lease_token IS NOT NULL" 3
ok $? "a worker claimed the three jobs of idle"
sql "UPDATE jobs SET attempts = attempts + 1 WHERE queue = 'idle'; UPDATE jobs SET priority = 1 WHERE queue = 'default'"
is "$(sql "SELECT queue, shard, jobs FROM jobq_counts ORDER BY queue, shard")" "$before" \
	"claims and updates that keep the queue wrote no counter row"
touch "$T/open"
wait_exit 30 "$WORKER_PID"
is "$?" 0 "the worker finished the claimed jobs"
is "$(sql "SELECT queue, shard, jobs FROM jobq_counts ORDER BY queue, shard" | grep -v '^idle')" \
	"$(echo "$kept" | grep -v '^idle')" "only idle's counters moved"
agree
ok $? "done jobs are counted off"

# drain: work until no job is left (a retry waits out its 10 ms backoff).
drain() {
	local i
	for i in 1 2 3 4 5; do
		jq_ work -q default,mail --stop-when-empty --quiet || return 1
		[ "$(sql "SELECT COUNT(*) FROM jobs")" = 0 ] && return 0
		sleep 0.2
	done
}
out=$(drain 2>&1)
ok $? "a worker runs done, retried and dead-lettered jobs" || diag "$out"
is "$(sql "SELECT COUNT(*) FROM jobs")/$(sql "SELECT COUNT(*) FROM failed_jobs")" "0/9" \
	"every job ran; 9 were dead-lettered (4 at once, 5 after a retry)"
agree
ok $? "done, retry and dead-letter keep the counts exact"
jq_ failed retry --all >/dev/null
is "$(sql "SELECT COUNT(*) FROM jobs")" 9 "failed retry --all puts the 9 jobs back"
agree
ok $? "a failed retry is counted"
drain 2>/dev/null
jq_ prune --older-than 0 --failed --yes >/dev/null
is "$(sql "SELECT COUNT(*) FROM jobs")/$(sql "SELECT COUNT(*) FROM failed_jobs")" "0/0" \
	"they failed again and prune deleted them"
agree
ok $? "the counts are zero again after prune"

# Another program moves jobs between queues and deletes them.
sql "INSERT INTO jobs (queue, type, payload, available_at)
	SELECT ELT(1 + seq % 3, 'default', 'mail', 'other'), 'ok', '{}', UTC_TIMESTAMP() + INTERVAL 1 DAY
	FROM (SELECT 1 AS seq UNION SELECT 2 UNION SELECT 3 UNION SELECT 4 UNION SELECT 5 UNION SELECT 6
	      UNION SELECT 7 UNION SELECT 8 UNION SELECT 9) s"
sql "UPDATE jobs SET queue = 'moved' WHERE queue IN ('default', 'mail'); UPDATE jobs SET queue = 'mail ' WHERE queue = 'other'"
agree
ok $? "a queue changed by plain UPDATE moves the count"
same "$(brute)" "$(counted)"
ok $? "and status counts the moved jobs in their new queues"
sql "DELETE FROM jobs WHERE queue = 'moved' LIMIT 4"
agree
ok $? "a plain DELETE is counted off"
empty_tables

# Several workers on one queue while jobs keep coming, by jobq and by
# plain INSERTs.
for i in 1 2 3; do start_worker -q default -j 4 --quiet; done
pids="${BG_PIDS[*]: -3}"
for i in $(seq 8); do
	printf '{"type": "ok", "payload": {"n": %d}}\n' $(seq 25) | jq_ enqueue --batch >/dev/null &
	sql "INSERT INTO jobs (queue, type, payload, available_at) VALUES
		('default', 'ok', '{}', UTC_TIMESTAMP()), ('default', 'flaky', '{}', UTC_TIMESTAMP()),
		('default', 'dead', '{}', UTC_TIMESTAMP())" &
done
wait_for_sql 60 "SELECT COUNT(*) FROM jobs" 0
ok $? "three workers drained 224 jobs"
for p in $pids; do kill -TERM "$p"; wait_exit 20 "$p" >/dev/null; done
is "$(sql "SELECT COUNT(*) FROM failed_jobs")" 16 "16 were dead-lettered"
agree
ok $? "concurrent workers and writers leave the counts exact"
is "$(sql "SELECT COUNT(DISTINCT shard) > 1 FROM jobq_counts WHERE queue = 'default'")" 1 \
	"their writes spread over several shard rows"

# TRUNCATE bypasses the triggers: check finds it, --repair-counts fixes it.
sql "INSERT INTO jobs (queue, type, payload, available_at) VALUES
	('default', 'ok', '{}', UTC_TIMESTAMP() + INTERVAL 1 DAY), ('default', 'ok', '{}', UTC_TIMESTAMP() + INTERVAL 1 DAY),
	('mail', 'ok', '{}', UTC_TIMESTAMP() + INTERVAL 1 DAY)"
run check
is "$RC" 0 "check exits 0"
like "$OUT" "job counts: jobq_counts agrees with the jobs table: ok" "and says the counts agree"
sql "TRUNCATE jobs"
sql "INSERT INTO jobs (queue, type, payload, available_at) VALUES ('mail', 'ok', '{}', UTC_TIMESTAMP())"
run check
is "$RC" 0 "after TRUNCATE jobs check still exits 0 (workers do not read the counts)"
is "$(printf '%s\n' "$ERR" | grep -c 'job counts')" 1 "and warns in one line"
like "$ERR" "^jobq: warning: job counts differ from the jobs table for 2 queues \('default' counted 2, holds 0; 'mail' counted 2, holds 1\), so 'jobq status' is off \(did something TRUNCATE jobs\?\): run 'jobq check --repair-counts'$" \
	"naming each queue, both numbers and the remedy"
run check --repair-counts
is "$RC" 0 "check --repair-counts exits 0"
like "$OUT" "job counts: repaired from a count of the jobs table" "it repairs"
like "$OUT" "job counts: jobq_counts agrees with the jobs table: ok" "and the check that follows agrees"
is "$ERR" "" "with no warning"
agree
ok $? "the counts equal the table again"
same "$(brute)" "$(counted)"
ok $? "and status counts right"
run check --repair-counts
like "$OUT" "agrees" "a second repair changes nothing"
agree
ok $? "the counts are still exact"

# The dead letter's counts (sql/026-dead-counts.sql): kept through a
# queue changed by hand, and the drift of a TRUNCATE failed_jobs.
empty_tables
sql "INSERT INTO failed_jobs (id, queue, type, payload, exception) VALUES
	(7001, 'mail', 'ok', '{}', 'x'), (7002, 'mail', 'ok', '{}', 'x'), (7003, 'default', 'ok', '{}', 'x')"
sql "UPDATE failed_jobs SET queue = 'other' WHERE id = 7002"
agree
ok $? "a dead job moved to another queue by hand moves its count"
same "$(brute)" "$(counted)"
ok $? "and status counts the dead letter by queue"
run check
like "$OUT" "dead-letter counts: jobq_counts agrees with the failed_jobs table: ok" "check says the dead-letter counts agree"
sql "TRUNCATE failed_jobs"
sql "INSERT INTO failed_jobs (id, queue, type, payload, exception) VALUES (7004, 'mail', 'ok', '{}', 'x')"
run check
is "$RC" 0 "after TRUNCATE failed_jobs check still exits 0"
like "$ERR" "^jobq: warning: dead-letter counts differ from the failed_jobs table for 3 queues \('default' counted 1, holds 0; 'mail' counted 2, holds 1; 'other' counted 1, holds 0\), so 'jobq status' is off \(did something TRUNCATE failed_jobs\?\): run 'jobq check --repair-counts'$" \
	"and warns in one line, naming each queue and both numbers"
like "$OUT" "job counts: jobq_counts agrees with the jobs table: ok" "the jobs' counts still agree"
run status --json
is "$RC" 0 "status with counts off exits 0"
run check --repair-counts
like "$OUT" "dead-letter counts: repaired from a count of the failed_jobs table" "--repair-counts repairs them"
is "$ERR" "" "with no warning after"
agree
ok $? "the dead letter's counts equal the table again"
same "$(brute)" "$(counted)"
ok $? "and status counts right"
finish
