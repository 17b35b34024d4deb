#!/bin/bash
# jobq status counts (served by indexes) against a brute-force count of
# every row, over a table that mixes every state, rows written by other
# programs (a lease token with no expiry, on either side of now), several
# queues and a queue the configuration lacks.  Not timed: contrib/bench
# measures the speed.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/operator/common.sh"
setup status_counts

write_conf <<EOC
[queue default]
[queue mail]
[queue idle]
[queue only_failed]

[handler echo]
exec = $HANDLERS/echo.sh
EOC

# mixed SEED: 3,000 jobs over four queues; each row's state depends on
# its number.  Every time is at least an hour from now, so no row
# changes state while the test reads.
mixed() {
	sql "SET SESSION max_recursive_iterations = 10000;
	INSERT INTO jobs (queue, type, payload, available_at, lease_token, lease_expires_at)
	WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 3000)
	SELECT ELT(1 + (n * 7 + $1) % 4, 'default', 'mail', 'legacy', 'idle2'), 'echo', '{}',
	  UTC_TIMESTAMP(6) + INTERVAL (IF(n % 3 = 0, 1, -1) * (3600 + n)) SECOND,
	  IF(n % 5 IN (0, 1) OR n % 11 = 0, MD5(n), NULL),
	  CASE WHEN n % 11 = 0 THEN NULL
	       WHEN n % 5 = 0 THEN UTC_TIMESTAMP(6) + INTERVAL (3600 + n) SECOND
	       WHEN n % 5 = 1 THEN UTC_TIMESTAMP(6) - INTERVAL (3600 + n) SECOND END
	FROM s;
	INSERT INTO failed_jobs (id, queue, type, payload, exception)
	WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 50)
	SELECT 1000000 + $1 * 100 + n, IF(n % 2, 'mail', 'only_failed'), 'echo', '{}', 'boom' FROM s"
}

# brute: the counts by reading every row, in status --json's order.
brute() {
	sql "SELECT q.queue,
	  COALESCE(SUM(j.lease_token IS NULL AND j.due_at <= UTC_TIMESTAMP(6)), 0),
	  COALESCE(SUM(j.lease_token IS NULL AND j.due_at > UTC_TIMESTAMP(6)), 0),
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
    print(q, *(c[k] for k in ("ready", "delayed", "reserved", "stale", "failed")), old)'
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
	like "$want" "default [0-9]+ [0-9]+ [1-9][0-9]* [1-9][0-9]* " "round $seed: default has reserved and stale jobs"
	got=$(counted -q mail)
	same "$(printf '%s\n' "$want" | awk '$1 == "mail"')" "$got"
	ok $? "round $seed: --queue mail counts the same"
	# Work moves jobs between states; the counts follow.
	sql "DELETE FROM jobs WHERE id % 4 = $seed; UPDATE jobs SET lease_token = NULL, lease_expires_at = NULL WHERE id % 13 = 0"
	same "$(brute)" "$(counted)"
	ok $? "round $seed: after deletes and releases the counts still match"
done
finish
