#!/bin/bash
# Follow-ups that wait for other jobs (issue 23, fd 3 "after"), in exec
# and persistent mode: a handler fans out two follow-ups and fans them
# back in with a third (refs, and its own id); a follow-up waits for a
# job still queued and runs once it is done; one naming a dead job is
# cancelled with the reason (policy all) or runs (policy any); one naming
# an unknown id is cancelled naming it; a parent that fails after writing
# them leaves none; and the follow-ups join a group whose callback counts
# them, even when the first to join is cancelled as it is written; a
# parent whose lease was lost leaves none.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
setup follow_after
TH=$top_srcdir/tests/handlers
LOG=$T/log

. "$top_srcdir/tests/deps_lib.sh"
# id_of NAME: the id of the job whose payload names NAME (queued or ended).
id_of() { sql "SELECT id FROM jobs WHERE JSON_VALUE(payload, '\$.name') = '$1' UNION SELECT job_id FROM job_runs WHERE JSON_VALUE(payload, '\$.name') = '$1' LIMIT 1"; }

for hmode in exec persistent; do
	empty_tables
	sql "DELETE FROM jobq_deps; DELETE FROM jobq_parked; DELETE FROM jobq_parked_deps; DELETE FROM jobq_groups"
	rm -f "$LOG" "$T/gate"
	extra=""
	[ $hmode = persistent ] && extra="mode = persistent"
	write_conf <<EOC
[worker]
poll_interval = 20ms
reserve_ttl = 2s
heartbeat = 500ms
workdir = $T

[queue default]

[handler step]
exec = $TH/deps_log.py $LOG $hmode
env.PYTHONPATH = $HANDLERS
max_attempts = 1
$extra

[handler cb]
exec = $TH/deps_log.py $LOG $hmode
env.PYTHONPATH = $HANDLERS
$extra
EOC
	m="[$hmode]"

	# A job still queued (it waits at a gate), and a dead one.
	x=$(jq_ enqueue step "{\"name\": \"X$hmode\", \"gate\": \"$T/gate\"}")
	dead=$(jq_ enqueue step '{"name": "DEAD", "exit": 65}')
	start_worker --concurrency 3
	wait_for_sql 30 "SELECT COUNT(*) FROM failed_jobs WHERE id = $dead" 1
	ok $? "$m the dead dependency is dead-lettered"

	# P writes seven follow-ups, five in a group with a callback; F3
	# waits for F1, F2 and P itself ("self": its own parent, done with it).
	g="{\"group\": \"fa-$hmode\", \"on_complete\": \"cb\"}"
	payload=$(cat <<EOP
{"name": "P", "follow": [
 {"type": "step", "ref": "a", "payload": {"name": "F1", "sleep": 0.5}, "group": "fa-$hmode", "on_complete": "cb"},
 {"type": "step", "ref": "b", "payload": {"name": "F2", "sleep": 0.2}, "group": "fa-$hmode", "on_complete": "cb"},
 {"type": "step", "after": ["a", "b", "self"], "payload": {"name": "F3"}, "group": "fa-$hmode", "on_complete": "cb"},
 {"type": "step", "after": [$x], "payload": {"name": "F4"}, "group": "fa-$hmode", "on_complete": "cb"},
 {"type": "step", "after": [$dead], "payload": {"name": "F5"}, "group": "fa-$hmode", "on_complete": "cb"},
 {"type": "step", "after": [$dead], "after_policy": "any", "payload": {"name": "F6"}},
 {"type": "step", "after": [9007199254740000], "payload": {"name": "F7"}}
]}
EOP
)
	p=$(jq_ enqueue step "$payload")
	wait_for_sql 30 "SELECT COUNT(*) FROM job_runs WHERE job_id = $p AND outcome = 'done'" 1
	ok $? "$m P is done"
	kids=$(sql "SELECT follow_ups FROM job_runs WHERE job_id = $p AND outcome = 'done'")
	IFS=, read -r f1 f2 f3 f4 f5 f6 f7 <<<"$kids"
	is "$(id_of F1),$(id_of F2),$(id_of F3),$(id_of F4),$(id_of F5),$(id_of F6),$(id_of F7)" "$kids" \
		"$m its done run names its seven follow-ups, in the order written"
	wait_for_sql 30 "SELECT COUNT(DISTINCT job_id) FROM job_runs WHERE job_id IN ($f1, $f2, $f3, $f5, $f6, $f7)" 6
	ok $? "$m every follow-up but F4 has ended"
	before "$(t end F1)" "$(t start F3)" && before "$(t end F2)" "$(t start F3)"
	ok $? "$m F3 started after F1 and F2 (its refs) ended"
	is "$(starts F1),$(starts F2),$(starts F3)" "1,1,1" "$m each ran once"
	is "$(sql "SELECT CONCAT(waiting_on, ' ', available_at >= '9999-12-31') FROM jobs WHERE id = $f4")" "1 1" \
		"$m F4 waits for X, which has not run"
	like "$(jq_ show "$f4")" "waits for +$x" "$m show lists what F4 waits for"
	like "$(jq_ show "$x")" "waited for by +$f4" "$m and what waits for X"
	like "$(run_of "$f5")" "^cancelled\\|cancelled by dependency $dead \\(dead\\)" "$m F5 is cancelled, naming the dead job"
	is "$(sql "SELECT outcome FROM job_runs WHERE job_id = $f6")" done "$m F6 (after_policy any) ran"
	like "$(run_of "$f7")" "^cancelled\\|cancelled by dependency 9007199254740000 \\(not known\\)" \
		"$m F7, after an id no table knows, is cancelled naming it"
	is "$(sql "SELECT worker = (SELECT worker FROM job_runs WHERE job_id = $p AND outcome = 'done') FROM job_runs WHERE job_id = $f5")" 1 \
		"$m F5's run names the worker whose job wrote it, not 'jobq enqueue'"
	# A run row that ends nothing, written after the one that ended the
	# job (a worker whose lease was lost writes "lost" late), does not
	# hide that end: a job that waits for it is not taken for unknown.
	sql "INSERT INTO job_runs (job_id, queue, type, attempt, worker, started_at, duration_ms, outcome, exit_status)
		VALUES ($f1, 'default', 'step', 1, 'late', UTC_TIMESTAMP(6), 1, 'lost', '')"
	e=$(jq_ enqueue --after "$f1" step '{"name": "E"}')
	is "$?/$(sql "SELECT COUNT(*) FROM jobs WHERE id = '$e' AND waiting_on > 0")" "0/0" \
		"$m --after a done job whose last run row says lost: known as done, not waiting"
	wait_for_sql 30 "SELECT COUNT(*) FROM job_runs WHERE job_id = '$e' AND outcome = 'done'" 1
	ok $? "$m and it runs"
	is "$(sql "SELECT COUNT(*) FROM jobq_groups WHERE name = 'fa-$hmode' AND ended_at IS NULL")" 1 \
		"$m the group is open while F4 waits"
	touch "$T/gate"
	wait_for_sql 30 "SELECT COUNT(*) FROM job_runs WHERE job_id = $f4 AND outcome = 'done'" 1
	ok $? "$m X done: F4 runs"
	before "$(t end "X$hmode")" "$(t start F4)"
	ok $? "$m F4 started after X ended"
	wait_for_sql 30 "SELECT COUNT(*) FROM job_runs WHERE type = 'cb' AND outcome = 'done'" 1
	ok $? "$m the group's callback ran"
	is "$(sql "SELECT CONCAT_WS(' ', JSON_VALUE(payload, '$.total'), JSON_VALUE(payload, '$.done'),
		JSON_VALUE(payload, '$.cancelled')) FROM job_runs WHERE type = 'cb'")" "5 4 1" \
		"$m once, counting 5 follow-ups: 4 done, 1 cancelled"

	# A new group whose first follow-up is cancelled as it is written (it
	# waits for the dead job): the group completes only once every
	# follow-up of the run has joined and ended, its callback counting
	# both, not as soon as the first is counted.
	r=$(jq_ enqueue step "{\"name\": \"R\", \"follow\": [
 {\"type\": \"step\", \"after\": [$dead], \"payload\": {\"name\": \"RF1\"}, \"group\": \"fb-$hmode\", \"on_complete\": \"cb\"},
 {\"type\": \"step\", \"payload\": {\"name\": \"RF2\", \"sleep\": 0.3}, \"group\": \"fb-$hmode\", \"on_complete\": \"cb\"}]}")
	wait_for_sql 30 "SELECT COUNT(*) FROM jobq_groups WHERE name = 'fb-$hmode' AND ended_at IS NOT NULL" 1
	ok $? "$m the group of R's follow-ups completes"
	is "$(sql "SELECT COUNT(*) FROM job_runs WHERE job_id = $r AND outcome = 'done'")/$(sql "SELECT group_id IS NOT NULL FROM jobs WHERE JSON_VALUE(payload, '\$.name') = 'RF2' UNION ALL SELECT 1 FROM job_runs WHERE JSON_VALUE(payload, '\$.name') = 'RF2' AND outcome = 'done' LIMIT 1")" "1/1" \
		"$m R is done, and RF2 joined the group"
	is "$(sql "SELECT CONCAT_WS(' ', total, done, cancelled) FROM jobq_groups WHERE name = 'fb-$hmode'")" "2 1 1" \
		"$m the group counts both follow-ups: 1 done, 1 cancelled"
	is "$(sql "SELECT CONCAT_WS(' ', JSON_VALUE(j.payload, '$.total'), JSON_VALUE(j.payload, '$.done'),
		JSON_VALUE(j.payload, '$.cancelled')) FROM jobq_groups g JOIN (SELECT id, payload FROM jobs UNION ALL
		SELECT job_id, payload FROM job_runs WHERE outcome = 'done') j ON j.id = g.complete_job
		WHERE g.name = 'fb-$hmode' LIMIT 1")" "2 1 1" "$m and so does its callback"

	# A parent that writes a waiting follow-up, then fails: none.
	q=$(jq_ enqueue step "{\"name\": \"Q\", \"exit\": 1, \"follow\": [{\"type\": \"step\", \"after\": [$x], \"payload\": {\"name\": \"QF\"}}]}")
	wait_for_sql 30 "SELECT COUNT(*) FROM failed_jobs WHERE id = $q" 1
	ok $? "$m Q fails"
	is "$(id_of QF)" "" "$m its waiting follow-up was never enqueued"
	is "$(sql "SELECT COUNT(*) FROM jobq_deps")" 0 "$m jobq_deps is empty"

	# A parent whose lease was lost as it ran: its run says "lost", and
	# none of its follow-ups exists.
	rm -f "$T/gate"
	l=$(jq_ enqueue step "{\"name\": \"L\", \"gate\": \"$T/gate\", \"follow\": [{\"type\": \"step\", \"after\": [$x, \"self\"], \"payload\": {\"name\": \"LF\"}}]}")
	wait_for_sql 30 "SELECT COUNT(*) FROM jobs WHERE id = $l AND lease_token IS NOT NULL" 1
	sql "UPDATE jobs SET lease_token = 'taken', lease_expires_at = UTC_TIMESTAMP(6) + INTERVAL 1 HOUR WHERE id = $l"
	touch "$T/gate"
	wait_for_sql 30 "SELECT COUNT(*) FROM job_runs WHERE job_id = $l" 1
	ok $? "$m L ends"
	is "$(sql "SELECT CONCAT_WS('|', outcome, follow_ups) FROM job_runs WHERE job_id = $l")/$(id_of LF)" "lost/" \
		"$m its lease lost: its run says so, and its follow-up was never enqueued"
	stop_workers
done
finish
