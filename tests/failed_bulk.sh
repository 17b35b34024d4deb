#!/bin/bash
# Bulk actions on the dead-letter table (ISSUE-8 defects 14 and 16):
# retry --all / retry IDs go on past a job the server refuses (its id is
# in jobs again: a duplicate key made with plain SQL), name it, exit 1;
# --dry-run counts and changes nothing; clear and a forget of several
# jobs ask on a terminal (stating the count), refuse without one unless
# --yes; a long retry --all shows its progress on a terminal only.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
. "$top_srcdir/tests/operator/common.sh"
setup failed_bulk

# dead FIRST LAST: dead letters with ids FIRST..LAST, made with SQL.
dead() {
	sql "INSERT INTO failed_jobs (id, queue, type, payload, attempts, exception)
	     SELECT seq, 'default', 'echo', CONCAT('{\"n\": ', seq, '}'), 3, 'boom'
	     FROM (SELECT $1 + a.i * 10 + b.i AS seq FROM
	       (SELECT 0 i UNION SELECT 1 UNION SELECT 2 UNION SELECT 3 UNION SELECT 4 UNION SELECT 5 UNION SELECT 6 UNION SELECT 7 UNION SELECT 8 UNION SELECT 9) a,
	       (SELECT 0 i UNION SELECT 1 UNION SELECT 2 UNION SELECT 3 UNION SELECT 4 UNION SELECT 5 UNION SELECT 6 UNION SELECT 7 UNION SELECT 8 UNION SELECT 9) b) s
	     WHERE seq <= $2"
}
on_tty() {
	local answer=$1
	shift
	printf '%s\n' "$answer" | script -qec "$JOBQ -c $CONF $*" /dev/null >"$T/tty" 2>&1
	RC=$?
	TTY=$(tr -d '\r' <"$T/tty")
}

# ---- retry --all past a duplicate key ----
dead 1 50
is "$(count failed_jobs)" 50 "50 dead letters"
# Job 17 is queued again under the same id (an application re-inserted it).
sql "INSERT INTO jobs (id, queue, type, payload) VALUES (17, 'default', 'echo', '{\"requeued\": true}')"
run failed retry --all --dry-run
is "$RC/$OUT/$(count failed_jobs)" "1/would retry 49 jobs/50" "retry --all --dry-run counts and moves nothing, job 17 not among them"
like "$ERR" "job 17: the queue already holds a job with id 17" "and names the clash as the retry will"
run failed retry --all
is "$RC" 1 "retry --all with one clash: exit 1 (some failed), not 69"
is "$OUT" "retried 49 jobs" "the other 49 were retried"
like "$ERR" "job 17: the queue already holds a job with id 17" "the clash is named with its reason"
like "$ERR" "1 job could not be retried and stays dead-lettered: 17" "and listed at the end"
is "$(sql "SELECT GROUP_CONCAT(id) FROM failed_jobs")" "17" "job 17 stays dead-lettered"
is "$(count jobs)/$(sql "SELECT payload FROM jobs WHERE id = 17")" '50/{"requeued": true}' "the queued job 17 is untouched; 49 moved"

# Several clashes, all named; a run after them still goes on.
sql "DELETE FROM jobs; DELETE FROM failed_jobs"
dead 101 140
sql "INSERT INTO jobs (id, queue, type, payload) VALUES (105, 'default', 'echo', '{}'), (120, 'default', 'echo', '{}'), (139, 'default', 'echo', '{}')"
run failed retry --all
is "$RC/$OUT" "1/retried 37 jobs" "three clashes among 40: 37 retried, exit 1"
like "$ERR" "3 jobs could not be retried and stay dead-lettered: 105 120 139" "all three named"
is "$(sql "SELECT GROUP_CONCAT(id ORDER BY id) FROM failed_jobs")" "105,120,139" "they stay dead-lettered"

# retry of named ids: the same.
sql "DELETE FROM jobs; DELETE FROM failed_jobs"
dead 1 3
sql "INSERT INTO jobs (id, queue, type, payload) VALUES (2, 'default', 'echo', '{}')"
run failed retry 1 2 3
is "$RC/$OUT" "1/retried 2 jobs" "retry 1 2 3 with 2 clashing: 2 retried, exit 1"
like "$ERR" "job 2: the queue already holds" "job 2 named"
is "$(sql "SELECT GROUP_CONCAT(id) FROM failed_jobs")" "2" "job 2 stays dead-lettered"
dead 4 4
run failed retry --dry-run 4
is "$RC/$OUT/$(count failed_jobs)" "0/would retry 1 job/2" "retry --dry-run ID"
run failed retry --dry-run 2
is "$RC/$OUT" "1/would retry 0 jobs" "retry --dry-run of the clashing ID: 0 jobs, exit 1 as the retry"
like "$ERR" "job 2: the queue already holds a job with id 2.*1 job would not be retried and stays dead-lettered: 2" \
	"naming it with the reason"

# A dead job's unique key: shown, and named with its holder when a retry
# (or its dry run) is refused for it.
sql "DELETE FROM jobs; DELETE FROM failed_jobs"
dead 31 31
sql "UPDATE failed_jobs SET unique_key = 'uk3' WHERE id = 31"
run failed show --json 31
is "$(printf '%s' "$OUT" | jget 'd["unique_key"]')" "uk3" "failed show --json: the dead job's unique key"
run failed show 31
like "$OUT" "unique key +uk3" "failed show: the unique key"
sql "INSERT INTO jobs (id, queue, type, payload, unique_key) VALUES (35, 'default', 'echo', '{}', 'uk3')"
run failed retry --dry-run 31
is "$RC/$OUT" "1/would retry 0 jobs" "retry --dry-run of a job whose key is held: refused, as the retry is"
like "$ERR" "job 31: its unique key is held by another job in the queue \\(job 35, key 'uk3'\\)" "naming the key and the job that holds it"
run failed retry 31
is "$RC/$OUT/$(count failed_jobs "id = 31")" "1/retried 0 jobs/1" "the retry is refused, the job stays dead"
like "$ERR" "job 31: its unique key is held by another job in the queue \\(job 35, key 'uk3'\\)" "naming the key and the job that holds it"
run failed retry --payload '{"n": 2}' 31
is "$RC" 1 "a retry with an edited payload is refused too"
like "$ERR" "its unique key is held by another job in the queue \\(job 35, key 'uk3'\\)" "saying the same"
run failed retry --dry-run --payload '{"n": 2}' 31
is "$RC" 1 "and its dry run says so too"
sql "DELETE FROM jobs"
run failed retry 31
is "$RC/$OUT/$(sql "SELECT unique_key FROM jobs WHERE id = 31")" "0/retried 1 job/uk3" "once the key is free the job goes back with it"

# An id given twice is one job: acted on once, not "left meanwhile".
sql "DELETE FROM jobs; DELETE FROM failed_jobs"
dead 1 4
run failed retry 1 3 1
is "$RC/$OUT/$ERR" "0/retried 2 jobs/" "retry 1 3 1: the id given twice is retried once, exit 0"
is "$(sql "SELECT GROUP_CONCAT(id ORDER BY id) FROM failed_jobs")/$(sql "SELECT GROUP_CONCAT(id ORDER BY id) FROM jobs")" \
	"2,4/1,3" "jobs 1 and 3 moved"
run failed forget --dry-run 2 2
is "$RC/$OUT" "0/would forget 1 job" "forget --dry-run 2 2 counts one job"
printf '4\n2 4\n' >"$T/ids"
run_in "$T/ids" failed forget --yes -
is "$RC/$OUT/$ERR/$(count failed_jobs)" "0/forgot 2 jobs//0" "forget --yes - with an id twice on stdin: each forgotten once, exit 0"

# ---- progress on a terminal ----
sql "DELETE FROM jobs; DELETE FROM failed_jobs"
dead 201 220
# Another session holds job 210 for three seconds: the run lasts longer
# than the one-second progress interval, whatever the machine's speed.
"$TESTDB_SCRIPT" client "$JOBQ_TESTDB" -N -B "$DB" -e "START TRANSACTION;
	SELECT id FROM failed_jobs WHERE id = 210 FOR UPDATE; SELECT 'jobq-locker', SLEEP(3); COMMIT" >/dev/null &
locker=$!
BG_PIDS+=("$locker")
wait_for_sql 20 "SELECT COUNT(*) FROM information_schema.processlist WHERE db = '$DB' AND info LIKE '%jobq-locker%'
	AND info NOT LIKE '%processlist%' AND state = 'User sleep'" 1 ||
	diag "the locker did not start"
on_tty "" failed retry --all
wait "$locker"
like "$TTY" "retried [0-9]+ of 20 \(0 failed\)" "on a terminal: progress 'retried N of 20' on stderr"
like "$TTY" "retried 20 jobs" "then the total"
is "$RC/$(count failed_jobs)" "0/0" "exit 0, all 20 retried"
sql "DELETE FROM jobs"
dead 201 220
run failed retry --all
is "$RC/$OUT/$ERR" "0/retried 20 jobs/" "not on a terminal: no progress lines"

# ---- clear ----
sql "DELETE FROM failed_jobs"
dead 1 30
sql "UPDATE failed_jobs SET failed_at = UTC_TIMESTAMP(6) - INTERVAL 2 DAY WHERE id <= 10"
run failed clear --dry-run
is "$RC/$OUT/$(count failed_jobs)" "0/would clear 30 failed jobs/30" "clear --dry-run counts, deletes nothing"
run failed clear --older-than 1d --dry-run
is "$OUT" "would clear 10 failed jobs" "clear --older-than 1d --dry-run: 10"
run failed clear
is "$RC/$(count failed_jobs)" "64/30" "clear with no terminal and no --yes: 64, nothing deleted"
like "$ERR" "pass --yes" "and says to pass --yes"
on_tty n failed clear --older-than 1d
like "$TTY" "delete 10 dead-lettered jobs that failed more than 1d ago for good\? \[y/N\]" "on a terminal clear asks, stating the count"
is "$RC/$(count failed_jobs)" "1/30" "a no: exit 1, nothing deleted"
printf '' | script -qec "$JOBQ -c $CONF failed clear --older-than 1d" /dev/null >"$T/tty" 2>&1
RC=$?
is "$RC/$(count failed_jobs)" "1/30" "an end of input at the question: a no, nothing deleted"
is "$(tr -d '\r' <"$T/tty" | grep -c '^jobq: clear: not confirmed; nothing deleted$')" "1" \
	"... and the message starts a line of its own, not the question's"
on_tty yes failed clear --older-than 1d
like "$TTY" "cleared 10 failed jobs" "a yes clears"
is "$RC/$(count failed_jobs)" "0/20" "exactly the 10 counted"

# ---- forget ----
run failed forget 11 12 13
is "$RC/$(count failed_jobs)" "64/20" "forget of three with no terminal and no --yes: 64"
run failed forget --dry-run 11 12 13
is "$RC/$OUT/$(count failed_jobs)" "0/would forget 3 jobs/20" "forget --dry-run: counts, deletes nothing"
run failed forget --dry-run 11 999
is "$RC/$(count failed_jobs)" "65/20" "forget --dry-run with an unknown id: 65"
on_tty n failed forget 11 12 13
like "$TTY" "forget 3 dead-lettered jobs for good\? \[y/N\]" "on a terminal forget of three asks"
is "$RC/$(count failed_jobs)" "1/20" "a no keeps them"
on_tty y failed forget 11 12 13
is "$RC/$(count failed_jobs)" "0/17" "a yes forgets them"
run failed forget 14
is "$RC/$OUT/$(count failed_jobs)" "0/forgot 1 job/16" "forget of one named job needs no --yes"
run failed list --yes
is "$RC" 64 "--yes where nothing is deleted: 64"
run failed show --dry-run 14
is "$RC" 64 "--dry-run with show: 64"
finish
