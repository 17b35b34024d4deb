#!/bin/bash
# ISSUE 8, defect 9: the work of an idle poll is bounded whatever the
# number of priorities.  An idle worker facing 2,000 delayed jobs at
# 2,000 distinct priorities sent ~3,300 statements a second (41 with one
# priority): the due groups were found by walking every priority.  Now
# it sends about what it sends with one, and a job that falls due is
# still taken.  Counted per user (MariaDB's userstat), so other tests
# running on the same server do not disturb the numbers; no clock is
# compared, only counts over a few seconds of two runs side by side (with
# room for a machine busier in one run than in the other).
. "$top_srcdir/tests/lib.sh"
one_build normal "a scale test"
setup idle_poll

USER_=idle_$$
sql_root "SET GLOBAL userstat = 1" 2>/dev/null
sql_root "SELECT 1 FROM information_schema.USER_STATISTICS LIMIT 1" >/dev/null 2>&1 ||
	skip_all "the server has no per-user statistics (userstat)"
sql_root "CREATE USER '$USER_'@'localhost' IDENTIFIED BY 'pw'; GRANT ALL ON \`$DB\`.* TO '$USER_'@'localhost'"
drop_user() {
	[ "$BASHPID" = "$$" ] && sql_root "DROP USER IF EXISTS '$USER_'@'localhost'" >/dev/null 2>&1
	cleanup
}
trap drop_user EXIT

write_conf <<EOC
[worker]
poll_interval = 20ms
reserve_mode = skip-locked

[queue default]

[handler echo]
exec = $HANDLERS/echo.sh
EOC
sed -i -e "s|^user = root|user = $USER_\npassword = pw|" "$CONF"
chmod 600 "$CONF"

# counters: statements and rows read by the worker's user so far
counters() {
	sql_root "SELECT SELECT_COMMANDS + UPDATE_COMMANDS + OTHER_COMMANDS, ROWS_READ
		FROM information_schema.USER_STATISTICS WHERE USER = '$USER_'"
}

# measure SECS: statements and rows read per second of an idle worker
measure() {
	local secs=$1 s0 r0 s1 r1
	start_worker -j 4
	# wait until it polls (its registry row appears), then count
	wait_for_sql 30 "SELECT COUNT(*) FROM jobq_workers" 1 || diag "the worker did not register"
	sleep 1
	read -r s0 r0 <<<"$(counters)"
	sleep "$secs"
	read -r s1 r1 <<<"$(counters)"
	kill -TERM "$WORKER_PID"
	wait_exit 30 "$WORKER_PID" >/dev/null
	echo "$(((s1 - s0) / secs)) $(((r1 - r0) / secs))"
}

sql "SET SESSION max_recursive_iterations = 100000;
     INSERT INTO jobs (queue, type, payload, priority, available_at)
     WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 2000)
     SELECT 'default', 'echo', '{}', n - 1000, UTC_TIMESTAMP(6) + INTERVAL 1 HOUR FROM s"
is "$(sql "SELECT COUNT(DISTINCT priority) FROM jobs")" "2000" "2000 delayed jobs at 2000 priorities"
read -r many_s many_r <<<"$(measure 3)"

sql "UPDATE jobs SET priority = 0"
read -r one_s one_r <<<"$(measure 3)"
diag "idle worker, 2000 priorities: $many_s statements/s, $many_r rows read/s"
diag "idle worker, one priority:    $one_s statements/s, $one_r rows read/s"
ok $([ "$one_s" -gt 0 ] && echo 0 || echo 1) "the counters see the worker ($one_s statements/s)"
ok $([ "$many_s" -le $((3 * one_s + 30)) ] && echo 0 || echo 1) \
	"2000 priorities: $many_s statements/s, about what one priority costs ($one_s)"
ok $([ "$many_r" -le $((3 * one_r + 300)) ] && echo 0 || echo 1) \
	"2000 priorities: $many_r rows read/s, about what one priority costs ($one_r)"

# A job that falls due among the 2000 delayed priorities is taken.
sql "UPDATE jobs SET priority = CAST(id % 2000 AS SIGNED) - 1000"
start_worker -j 4
id=$(sql "INSERT INTO jobs (queue, type, payload, priority, available_at) VALUES ('default', 'echo', '{}', 777, UTC_TIMESTAMP(6) + INTERVAL 1 SECOND); SELECT LAST_INSERT_ID()")
wait_for_sql 60 "SELECT COUNT(*) FROM job_runs WHERE job_id = $id AND outcome = 'done'" 1
ok $? "a job falling due among 2000 delayed priorities is run"
is "$(sql "SELECT COUNT(*) FROM jobs WHERE available_at <= UTC_TIMESTAMP(6)")" "0" "and only that one"
finish
