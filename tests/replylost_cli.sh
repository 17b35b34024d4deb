#!/bin/bash
# Lost answers to the commands (issue 26's promise for enqueue): the
# database applies a write but its answer never reaches `jobq enqueue`
# (tests/replylost.py throws it away and closes the connection).  The
# command must not say "nothing was written" then, since running it again
# would enqueue the jobs twice; a chunked batch whose every chunk is
# committed exits 0; and a failure before anything was sent still says
# nothing was written.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
. "$top_srcdir/tests/operator/common.sh"
setup replylost_cli
PX=$T/px
replylost_start "$PX"

SOCKET=$T/p.sock write_conf <<EOC
[queue default]
[handler step]
exec = /bin/true
[handler cb]
exec = /bin/true
EOC

# A single job whose INSERT's answer is lost: it is there, and the
# command says it may be.
printf '^INSERT INTO jobs' >"$PX/drop"
run enqueue step '{"single": 1}'
is "$RC" 69 "single job, answer lost: exit 69 (database unavailable)"
is "$(sql "SELECT COUNT(*) FROM jobs WHERE payload = '{\"single\": 1}'")" 1 "the job was written"
like "$ERR" "it may have been written; look \\(jobq status, jobq show\\) before running it again" \
	"and the command says it may have been, not that nothing was"
is "$(printf '%s\n' "$ERR" | grep -c 'nothing was written')" 0 "it never says nothing was written"

# A graph (one transaction) whose COMMIT's answer is lost.
for i in 1 2 3; do
	printf '{"type": "step", "ref": "s%d"%s, "payload": {"graph": %d}}\n' "$i" \
		"$([ "$i" -gt 1 ] && printf ', "after": ["s%d"]' $((i - 1)))" "$i"
done >"$T/graph.jsonl"
printf '^COMMIT' >"$PX/drop"
run_in "$T/graph.jsonl" enqueue --batch
is "$RC/$(sql "SELECT COUNT(*) FROM jobs WHERE payload LIKE '{\"graph\"%'")" "69/3" \
	"a graph whose COMMIT answer is lost: exit 69, and its 3 jobs are there"
like "$ERR" "it may have been written" "and the command says they may be"

# A chunked batch (no refs) whose COMMIT's answer is lost: the batch row
# says every job is committed, so the command says so and exits 0.
for i in 1 2 3 4 5; do printf '{"type": "step", "payload": {"chunked": %d}}\n' "$i"; done >"$T/plain.jsonl"
printf '^COMMIT' >"$PX/drop"
run_in "$T/plain.jsonl" enqueue --batch --group gs --on-complete cb
is "$RC/$(sql "SELECT COUNT(*) FROM jobs WHERE payload LIKE '{\"chunked\"%'")" "0/5" \
	"a chunked batch whose last COMMIT answer is lost: exit 0, its 5 jobs there once"
like "$ERR" "all 5 jobs are committed" "and it says all are committed"

# A chunked batch into a new group that wrote nothing leaves no group
# behind: running it again with other callbacks is not refused.
printf '^SET @jobq_counted' >"$PX/drop"
run_in "$T/plain.jsonl" enqueue --batch --group gz --on-complete cb
if [ "$(sql "SELECT COUNT(*) FROM jobs WHERE group_id IN (SELECT id FROM jobq_groups WHERE name = 'gz')")" = 0 ]; then
	like "$RC/$ERR" "^69/.*nothing was written" "a chunked batch whose chunk failed: nothing written"
	is "$(sql "SELECT COUNT(*) FROM jobq_groups WHERE name = 'gz'")" 0 "and the group it opened is gone"
	run_in "$T/plain.jsonl" enqueue --batch --group gz --on-success cb
	is "$RC/$(sql "SELECT total FROM jobq_groups WHERE name = 'gz'")" 0/5 "run again with --on-success: the group is made anew"
else
	for i in 1 2 3; do ok 0 "# SKIP the chunk committed before its answer was lost"; done
fi

# failed retry whose COMMIT's answer is lost: its second try no longer
# finds the job, which the first moved: retried, not "left meanwhile".
sql "INSERT INTO failed_jobs (id, queue, type, payload, attempts, exception, exit_status, reason)
     VALUES (9100, 'default', 'step', '{}', 1, 'x', 'exit 65', 'permanent exit status'),
            (9101, 'default', 'step', '{}', 1, 'x', 'exit 65', 'permanent exit status')"
printf '^COMMIT' >"$PX/drop"
run failed retry 9100
is "$RC/$OUT/$(sql "SELECT COUNT(*) FROM jobs WHERE id = 9100")" "0/retried 1 job/1" \
	"failed retry ID, its COMMIT's answer lost: exit 0, retried 1 job, and it is back in the queue"
printf '^COMMIT' >"$PX/drop"
run failed retry --all
is "$RC/$OUT/$(sql "SELECT COUNT(*) FROM jobs WHERE id = 9101")" "0/retried 1 job/1" "failed retry --all: the same"

# cancel whose transaction's answer is lost: asked again, it finds the
# job cancelled by the first, and says so.
c=$(sql "INSERT INTO jobs (queue, type, payload) VALUES ('default', 'step', '{\"cancel\": 1}'); SELECT LAST_INSERT_ID()")
printf '^START TRANSACTION;UPDATE jobs SET cancel_by' >"$PX/drop"
run cancel "$c"
is "$RC/$OUT" "0/job $c: cancelled" "cancel ID, its answer lost: exit 0, cancelled"
is "$(sql "SELECT outcome FROM job_runs WHERE job_id = $c")" cancelled "and cancelled once"

# lose REGEX: the next statement matching REGEX is applied, its answer
# lost (tests/replylost.py's drop); unlose forgets an order not used.
lose() { printf '%s' "$1" >"$PX/drop"; }
unlose() { rm -f "$PX/drop"; }

# The other changes whose answer is lost after their COMMIT (or their
# statement outside a transaction) was sent: exit 69, and one line that
# says the change may have been made and where to look.
lose '^COMMIT'
run schedule add lost --cron '*/5 * * * *' --type step
unlose
is "$RC/$(sql "SELECT COUNT(*) FROM jobq_schedules WHERE name = 'lost'")" 69/1 \
	"schedule add, its COMMIT's answer lost: exit 69, and the schedule is there"
like "$ERR" "it may have been made; look \\(jobq schedule --list\\) before running it again" \
	"and the command says it may have been made, and where to look"
lose '^UPDATE jobq_schedules'
run schedule edit lost --cron '*/7 * * * *'
unlose
like "$RC/$(sql "SELECT cron FROM jobq_schedules WHERE name = 'lost'")/$ERR" \
	'^69/\*/7 \* \* \* \*/.*it may have been made; look \(jobq schedule --list\)' "schedule edit: the same"
for a in disable enable; do
	lose '^INSERT INTO jobq_schedule_state'
	run schedule $a lost
	unlose
	like "$RC/$ERR" '^69/.*it may have been made; look \(jobq schedule --list\)' "schedule $a: the same"
done
lose '^COMMIT'
run schedule remove lost
unlose
like "$RC/$(sql "SELECT COUNT(*) FROM jobq_schedules WHERE name = 'lost'")/$ERR" \
	'^69/0/.*it may have been made; look \(jobq schedule --list\)' "schedule remove: the same"
lose '^INSERT INTO jobq_paused'
run pause default
unlose
like "$RC/$(sql "SELECT COUNT(*) FROM jobq_paused")/$ERR" '^69/1/.*it may have been made; look \(jobq status\)' \
	"pause: the same"
lose '^DELETE FROM jobq_paused'
run resume default
unlose
like "$RC/$(sql "SELECT COUNT(*) FROM jobq_paused")/$ERR" '^69/0/.*it may have been made; look \(jobq status\)' \
	"resume: the same"

# A user's change and its audit row are one transaction: the row's
# answer lost, nothing is changed; the COMMIT's lost, both may be there.
audits() { sql "SELECT COUNT(*) FROM jobq_audit WHERE action = '$1' AND detail LIKE 'user $2%'"; }
echo password123 >"$T/pw"
run_in "$T/pw" user add bob --stdin
h0=$(sql "SELECT password_hash FROM jobq_users WHERE username = 'bob'")
lose '^INSERT INTO jobq_audit'
run_in "$T/pw" user passwd bob --stdin
unlose
is "$RC/$(sql "SELECT password_hash = '$h0' FROM jobq_users WHERE username = 'bob'")/$(audits user-password bob)" \
	69/1/0 "user passwd whose audit row's answer is lost: exit 69, the password unchanged, no row"
is "$(printf '%s\n' "$ERR" | grep -c 'may have been made')" 0 "and it does not say it may have been"
lose '^COMMIT'
run_in "$T/pw" user passwd bob --stdin
unlose
is "$RC/$(sql "SELECT password_hash = '$h0' FROM jobq_users WHERE username = 'bob'")/$(audits user-password bob)" \
	69/0/1 "user passwd whose COMMIT's answer is lost: exit 69, the password changed, with its row"
like "$ERR" "it may have been made; look \\(jobq user list, jobq audit\\) before running it again" \
	"and the command says it may have been made, and where to look"
lose '^INSERT IGNORE INTO jobq_users'
run_in "$T/pw" user add carol --stdin
unlose
is "$RC/$(sql "SELECT COUNT(*) FROM jobq_users WHERE username = 'carol'")/$(audits user-add carol)" 69/0/0 \
	"user add whose INSERT's answer is lost: exit 69, no user, no row"
run_in "$T/pw" user add carol --stdin
is "$RC/$(sql "SELECT COUNT(*) FROM jobq_users WHERE username = 'carol'")/$(audits user-add carol)" 0/1/1 \
	"run again: carol is added, with her row"
for a in "role carol admin" "remove carol"; do
	lose '^COMMIT'
	run user $a
	unlose
	like "$RC/$ERR" '^69/.*it may have been made; look \(jobq user list, jobq audit\)' "user ${a%% *}: the same"
done
is "$(sql "SELECT COUNT(*) FROM jobq_users WHERE username = 'carol'")/$(audits user-role carol)/$(audits user-remove carol)" \
	0/1/1 "carol made admin and removed, each with its row"
lose '^INSERT INTO jobq_audit'
run sessions end bob
unlose
is "$RC/$(sql "SELECT COUNT(*) FROM jobq_audit WHERE action = 'end-sessions'")" 69/0 \
	"sessions end whose audit row's answer is lost: exit 69, no row"
lose '^COMMIT'
run sessions end bob
unlose
like "$RC/$(sql "SELECT COUNT(*) FROM jobq_audit WHERE action = 'end-sessions'")/$ERR" \
	'^69/1/.*it may have been made; look \(jobq sessions, jobq audit\)' "sessions end whose COMMIT's answer is lost: the same"

# cancel by a filter whose second chunk's answer is lost: it says how
# many the first cancelled, and that the second's may have been.
empty_tables
for i in $(seq 150); do echo '{"type": "step", "payload": {"bulk": 1}}'; done >"$T/bulk.jsonl"
run_in "$T/bulk.jsonl" enqueue --batch
lose "^UPDATE jobs SET cancel_by.* WHERE id IN \\($(sql "SELECT id FROM jobs ORDER BY id LIMIT 100, 1"),"
run cancel -q default --yes
unlose
is "$RC/$(sql "SELECT COUNT(*) FROM jobs")" 69/0 "cancel -q whose second chunk's answer is lost: exit 69, all 150 cancelled"
like "$ERR" "\\(100 jobs cancelled before it; .*the next chunk of up to 100 .*may have been cancelled too; look \\(jobq status\\)" \
	"and it says 100 were cancelled before, and the next chunk may have been"

# cancel by a filter whose second chunk's read of ids loses its answer:
# that SELECT changed nothing, so the command says how many the first
# chunk cancelled and not that the next may have been.
empty_tables
run_in "$T/bulk.jsonl" enqueue --batch
lose "^SELECT id FROM jobs WHERE .* AND id > $(sql "SELECT id FROM jobs ORDER BY id LIMIT 99, 1") ORDER BY id"
run cancel -q default --yes
unlose
is "$RC/$(sql "SELECT COUNT(*) FROM jobs")" 69/50 "cancel -q whose second chunk's read is lost: exit 69, 100 cancelled, 50 left"
like "$ERR" "\\(100 jobs cancelled before it\\)$" "and it says 100 were cancelled before it"
is "$(printf '%s\n' "$ERR" | grep -c 'may have been')" 0 "and not that the next chunk may have been"

# schedule --run whose COMMIT's answer is lost: the command reconnects
# and reads the fire's row back, and says which job it made (run again
# blind, it would be enqueued twice); or, when the COMMIT never took
# (its session killed while the proxy held it), that nothing was
# enqueued.  Its INSERT's answer lost, nothing was (the fire's
# transaction rolled back), and it does not say it may have been.
empty_tables
run schedule add lostrun --cron '0 0 1 1 *' --type step
lose '^COMMIT'
run schedule --run lostrun
unlose
j=$(sql "SELECT id FROM jobs")
is "$RC/$(sql "SELECT COUNT(*) FROM jobs")" 0/1 "schedule --run, its COMMIT's answer lost: read back, exit 0, the job is there"
like "$OUT" "lostrun: enqueued now as job $j " "and the command says which job it made"
like "$OUT" "answer to the fire's COMMIT was lost; read back after reconnecting, it was committed" \
	"... and that it read it back"
rm -f "$PX/held"
printf '^COMMIT' >"$PX/hold"
"$JOBQ" -c "$CONF" schedule --run lostrun >"$T/out" 2>"$T/err" &
p=$!
for i in $(seq 100); do [ -e "$PX/held" ] && break; sleep 0.1; done
c=$(sql "SELECT id FROM information_schema.processlist WHERE db = '$DB' AND command = 'Sleep' AND id <> CONNECTION_ID()")
sql_root "KILL CONNECTION $c"
rm -f "$PX/hold"
wait $p
RC=$?
is "$RC/$(sql "SELECT COUNT(*) FROM jobs")" 69/1 "schedule --run whose COMMIT is lost before it took: exit 69, no job"
like "$(cat "$T/err")" "read back after reconnecting, the fire is not there: nothing was enqueued" \
	"and the command says nothing was enqueued"
is "$(grep -c 'may have been' "$T/err")" 0 "... not that it may have been"
lose '^INSERT INTO jobs'
run schedule --run lostrun
unlose
is "$RC/$(sql "SELECT COUNT(*) FROM jobs")" 69/1 "schedule --run, its INSERT's answer lost: exit 69, no second job"
is "$(printf '%s\n' "$ERR" | grep -c 'may have been')" 0 "and it does not say it may have been"

# prune whose DELETE's answer is lost (a statement that commits by
# itself): the runs are gone, and the command does not count them as
# kept: it says the chunk may have been deleted.
sql "INSERT INTO job_runs (job_id, queue, type, attempt, worker, started_at, duration_ms, outcome, exit_status) VALUES
     (9801, 'default', 'step', 1, 'x', UTC_TIMESTAMP(6) - INTERVAL 3 DAY, 1, 'done', 'exit 0'),
     (9802, 'default', 'step', 1, 'x', UTC_TIMESTAMP(6) - INTERVAL 3 DAY, 1, 'done', 'exit 0')"
lose '^DELETE FROM job_runs'
run prune --older-than 1d --yes
unlose
is "$RC/$(sql "SELECT COUNT(*) FROM job_runs WHERE job_id IN (9801, 9802)")" 69/0 \
	"prune whose DELETE's answer is lost: exit 69, the runs deleted"
like "$ERR" "the answer to the last chunk was lost: it may have been deleted too; look \\(jobq prune --dry-run\\)" \
	"and it says the chunk may have been deleted"

# Nothing sent: the server cannot be reached at all.
touch "$PX/cut"
for ((i = 0; i < 50; i++)); do [ -S "$T/p.sock" ] || break; sleep 0.1; done # the proxy looks every 0.1 s
run enqueue step '{"cut": 1}'
rm -f "$PX/cut"
is "$RC/$(sql "SELECT COUNT(*) FROM jobs WHERE payload = '{\"cut\": 1}'")" "69/0" "no server: exit 69, nothing written"
is "$(printf '%s\n' "$ERR" | grep -c 'may have been written')" 0 "and it does not say it may have been"
finish
