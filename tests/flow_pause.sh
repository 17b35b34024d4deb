#!/bin/bash
# pause (issue 13, item 7): `jobq pause QUEUE` stops every worker from
# claiming from QUEUE within one poll, jobs already running finish, the
# other queues go on; `jobq status` marks it; `jobq resume` lets the
# jobs run.  Both reservation modes.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
setup flow_pause

for mode in skip-locked update; do
	empty_tables
	write_conf <<EOC
[worker]
poll_interval = 50ms
reserve_mode = $mode
queues = mail,default

[queue default]

[queue mail]

[handler slow]
queue = mail
exec = $top_srcdir/tests/handlers/gate.sh $T/go.$mode

[handler quick]
queue = mail
exec = /bin/true

[handler echo]
exec = /bin/true
EOC
	start_worker --concurrency 4
	jq_ enqueue slow '{}' >/dev/null
	jq_ enqueue slow '{}' >/dev/null
	wait_for_sql 10 "SELECT COUNT(*) FROM jobs WHERE lease_token IS NOT NULL" 2
	ok $? "[$mode] two slow mail jobs are running"
	is "$(jq_ pause mail)" "queue mail paused" "[$mode] jobq pause mail"
	is "$(jq_ pause mail)" "queue mail was already paused" "[$mode] pausing again changes nothing"
	sleep 0.2 # more than one poll
	for i in 1 2 3 4 5; do jq_ enqueue quick '{}' >/dev/null; jq_ enqueue echo '{}' >/dev/null; done
	wait_for_sql 10 "SELECT COUNT(*) FROM job_runs WHERE type = 'echo'" 5
	ok $? "[$mode] the default queue goes on"
	: >"$T/go.$mode" # the slow jobs end
	wait_for_sql 10 "SELECT COUNT(*) FROM job_runs WHERE type = 'slow' AND outcome = 'done'" 2
	ok $? "[$mode] the jobs that were running when mail was paused finished"
	sleep 0.5
	is "$(sql "SELECT COUNT(*), SUM(attempts) FROM jobs WHERE type = 'quick'")" "5	0" \
		"[$mode] mail's new jobs wait, unclaimed and not charged an attempt"
	# (the oldest ready one is counted in whole seconds: under one, "now")
	like "$(jq_ status)" $'\nmail +0 +0 +0 +0 +0  -  paused\n|\nmail +5 +0 +0 +0 +0  ([0-9][0-9.smhd]* ago|now)  paused\n' "[$mode] status marks mail paused"
	js=$(jq_ status --json)
	like "$js" '"mail":[^}]*"paused":[[:space:]]*true' "[$mode] --json: \"paused\": true for mail"
	like "$js" '"default":[^}]*"paused":[[:space:]]*false' "[$mode] --json: \"paused\": false for default"
	is "$(jq_ resume mail)" "queue mail resumed" "[$mode] jobq resume mail"
	wait_for_sql 10 "SELECT COUNT(*) FROM jobs" 0
	ok $? "[$mode] after resume the waiting jobs run"
	is "$(jq_ resume mail)" "queue mail was not paused" "[$mode] resuming again changes nothing"
	kill -TERM "$WORKER_PID"
	wait_exit 20 "$WORKER_PID"
	is "$?" 0 "[$mode] the worker stops cleanly"
done

# Jobs a busy worker holds reserved ahead (reserve_ahead = 4 beside one
# running handler) do not start once their queue is paused: each goes
# back unstarted, attempt refunded, and runs after resume.  Both handler
# modes: a persistent handler's jobs start through the same path.
for hmode in exec persistent; do
	empty_tables
	rm -f "$T/gate.$hmode"
	if [ $hmode = exec ]; then
		handler="exec = $top_srcdir/tests/handlers/gate.sh $T/gate.$hmode"
	else
		handler="exec = $top_srcdir/tests/handlers/persist_gate.py
mode = persistent
env.PYTHONPATH = $HANDLERS"
	fi
	write_conf <<EOC
[worker]
poll_interval = 50ms
reserve_ahead = 4
queues = mail

[queue mail]

[handler slow]
queue = mail
$handler
EOC
	for i in 1 2 3 4 5; do jq_ enqueue slow "{\"gate\": \"$T/gate.$hmode\"}" >/dev/null; done
	wlog=$T/worker.${#BG_PIDS[@]}.log
	start_worker --concurrency 1
	wait_for_sql 10 "SELECT COUNT(*) FROM jobs WHERE lease_token IS NOT NULL" 5
	ok $? "[$hmode] one job runs and four wait reserved ahead"
	jq_ pause mail >/dev/null
	sleep 0.3 # the held jobs have waited longer than the worker's look at the pauses
	: >"$T/gate.$hmode"
	wait_for_sql 10 "SELECT COUNT(*) FROM job_runs WHERE type = 'slow' AND outcome = 'done'" 1
	ok $? "[$hmode] the job that was running when mail was paused finished"
	wait_for_sql 10 "SELECT COUNT(*) FROM jobs WHERE lease_token IS NULL" 4
	ok $? "[$hmode] the four held ahead were given back"
	sleep 0.5
	is "$(sql "SELECT COUNT(*), SUM(attempts) FROM jobs")" "4	0" \
		"[$hmode] none of them started after the pause, and none was charged an attempt"
	is "$(sql "SELECT COUNT(*) FROM job_runs WHERE type = 'slow' AND outcome = 'done'")" 1 \
		"[$hmode] only the running job ran"
	grep -q "queue mail was paused while the job waited reserved ahead; given back unstarted" "$wlog"
	ok $? "[$hmode] the worker says why it gave them back"
	jq_ resume mail >/dev/null
	wait_for_sql 20 "SELECT COUNT(*) FROM job_runs WHERE type = 'slow' AND outcome = 'done'" 5
	ok $? "[$hmode] after resume they run"
	kill -TERM "$WORKER_PID"
	wait_exit 20 "$WORKER_PID"
	is "$?" 0 "[$hmode] the worker stops cleanly"
done

jq_ pause nosuch 2>"$T/err"
is "$?" 65 "pausing an unknown queue is bad data"
like "$(cat "$T/err")" "^jobq: pause: unknown queue 'nosuch' \(no \[queue nosuch\] section in " "and says which"
# A name no queue can have (outside the name rule) goes to no query:
# the database's collation refused it with its own error, exit 69.
for name in 'é' "$(printf 'q\xff')"; do
	jq_ resume "$name" 2>"$T/err"
	is "$? $(wc -l <"$T/err")" "65 1" "resuming a queue named outside the name rule: bad data, one line"
	like "$(cat "$T/err")" "^jobq: resume: unknown queue '" "and says it is unknown"
done
jq_ pause 2>/dev/null
is "$?" 64 "pause needs a queue"
jq_ resume mail default 2>/dev/null
is "$?" 64 "resume takes one queue"
is "$(sql "SELECT COUNT(*) FROM jobq_paused")" 0 "none of them paused anything"

finish
