#!/bin/bash
# The control channel (issue 13): follow-up jobs exist iff their parent
# is recorded done, exactly once; retry_after replaces the backoff, and
# retry_until is checked against it, not against the backoff;
# garbage on the channel is a handler error; the result is kept in the
# run history.  In both reservation modes.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
setup control
TH=$top_srcdir/tests/handlers
cp "$TH/control.sh" "$T/control.sh"

children() { sql "SELECT COUNT(*) FROM jobs WHERE type = 'child' AND payload = '{\"from\":$1}'"; }
# Runs the worker until nothing is ready (at most $1 rounds): a job whose
# retry is due in a moment needs another round.
drain() {
	local i
	for ((i = 0; i < $1; i++)); do
		timeout 120 "$JOBQ" -c "$CONF" work --stop-when-empty 2>>"$T/work.$mode.log" || return 1
		[ "$(sql "SELECT COUNT(*) FROM jobs WHERE type <> 'child' AND available_at <= UTC_TIMESTAMP(6) + INTERVAL 2 SECOND")" = 0 ] && return 0
		sleep 0.5
	done
}

for mode in skip-locked update; do
	empty_tables
	write_conf <<EOC
[worker]
poll_interval = 20ms
reserve_mode = $mode
backoff = exponential 30s 4m
backoff_jitter = 0
workdir = $T

[queue default]

[handler child]
exec = /bin/true

[handler follow_fail]
exec = ./control.sh follow_fail
[handler follow_kill]
exec = ./control.sh follow_kill
[handler follow_ok]
exec = ./control.sh follow_ok
[handler follow_three]
exec = ./control.sh follow_three
[handler follow_crash_once]
exec = ./control.sh follow_crash_once
backoff = 200ms
[handler retry_after]
exec = ./control.sh retry_after
[handler retry_soon]
exec = ./control.sh retry_in 5m
backoff = exponential 30m 1h
retry_until = 10m
[handler retry_late]
exec = ./control.sh retry_in 20m
backoff = 1s
retry_until = 10m
[handler garbage]
exec = ./control.sh garbage
[handler garbage_last]
exec = ./control.sh garbage
max_attempts = 1
[handler late_garbage]
exec = ./control.sh late_garbage
[handler bad_type]
exec = ./control.sh bad_type
[handler bad_after]
exec = ./control.sh bad_after
[handler flood]
exec = ./control.sh flood
[handler result]
exec = ./control.sh result
EOC
	ff=$(jq_ enqueue follow_fail '{}')
	fk=$(jq_ enqueue follow_kill '{}')
	fo=$(jq_ enqueue follow_ok '{}')
	fc=$(jq_ enqueue follow_crash_once '{}')
	f3=$(jq_ enqueue follow_three '{}')
	ra=$(jq_ enqueue retry_after '{}')
	rso=$(jq_ enqueue retry_soon '{}')
	rla=$(jq_ enqueue retry_late '{}')
	ga=$(jq_ enqueue garbage '{}')
	gl=$(jq_ enqueue garbage_last '{}')
	lg=$(jq_ enqueue late_garbage '{}')
	bt=$(jq_ enqueue bad_type '{}')
	ba=$(jq_ enqueue bad_after '{}')
	rs=$(jq_ enqueue result '{}')
	fl=$(jq_ enqueue flood '{}')
	drain 6
	is "$?" 0 "[$mode] the worker runs every job and exits"
	like "$(head -n 1 "$T/work.$mode.log")" "reserve_mode=$mode" "[$mode] the worker uses reserve_mode $mode"

	is "$(where "$ff"),$(children "$ff")" "queue,0" "[$mode] follow-up written, then exit 1: retried, no follow-up"
	is "$(where "$fk"),$(children "$fk")" "queue,0" "[$mode] follow-up written, then SIGKILL: retried, no follow-up"
	is "$(where "$fo"),$(children "$fo")" "gone,1" "[$mode] follow-up written, exit 0: done, exactly one follow-up"
	is "$(sql "SELECT CONCAT_WS('|', queue, available_at > UTC_TIMESTAMP(6) + INTERVAL 50 MINUTE) FROM jobs WHERE type = 'child' AND payload = '{\"from\":$fo}'")" \
		"default|1" "[$mode] the follow-up has its queue and its 1h delay"
	kids=$(sql "SELECT GROUP_CONCAT(id ORDER BY id) FROM jobs WHERE type = 'child' AND payload = '{\"from\":$fo}'")
	is "$(sql "SELECT CONCAT_WS('|', outcome, follow_ups) FROM job_runs WHERE job_id = $fo")" "done|$kids" \
		"[$mode] the done run names its follow-up's id"
	like "$(jq_ show "$fo")" "follow-ups $kids" "[$mode] jobq show lists it"
	like "$(jq_ show --json "$fo" | tr -d ' \t\n')" "\"follow_ups\":\[$kids\]" "[$mode] and show --json"
	kids=$(sql "SELECT GROUP_CONCAT(id ORDER BY id) FROM jobs WHERE type = 'child' AND payload = '{\"from\":$f3}'")
	is "$(where "$f3"),$(children "$f3"),$(sql "SELECT follow_ups FROM job_runs WHERE job_id = $f3")" "gone,3,$kids" \
		"[$mode] three follow-ups: each enqueued, each id in the done run"
	is "$(where "$fc"),$(children "$fc")" "gone,1" "[$mode] first attempt crashed after writing, second exit 0: exactly one follow-up"
	is "$(sql "SELECT GROUP_CONCAT(CONCAT_WS(':', outcome, follow_ups) ORDER BY id) FROM job_runs WHERE job_id = $fc")" \
		"retry,done:$(sql "SELECT id FROM jobs WHERE type = 'child' AND payload = '{\"from\":$fc}'")" \
		"[$mode] the crashed attempt is a retry (no follow-up), the second done with its follow-up"

	d=$(retry_delay "$ra" 1)
	ok $([ -n "$d" ] && [ "$d" -ge 419000 ] && [ "$d" -le 425000 ]; echo $?) \
		"[$mode] retry_after 7m replaces the 30s backoff (got ${d}ms)"
	d=$(retry_delay "$rso" 1)
	ok $([ "$(where "$rso")" = queue ] && [ -n "$d" ] && [ "$d" -ge 299000 ] && [ "$d" -le 305000 ]; echo $?) \
		"[$mode] retry_after 5m within retry_until (10m), where the 30m backoff it replaces is not: retried after 5m (got ${d}ms)"
	is "$(where "$rla")" failed "[$mode] retry_after 20m past retry_until (10m): dead-lettered, the 1s backoff it replaces no matter"
	like "$(sql "SELECT reason FROM failed_jobs WHERE id = $rla")" "^retry_until passed \(retry_after asked for more than 10m; last: exit 75\)" \
		"[$mode] ... and the reason says retry_after asked for it"

	is "$(where "$ga")" queue "[$mode] garbage on the channel, exit 0: the job is retried"
	is "$(sql "SELECT CONCAT_WS('|', outcome, exit_status) FROM job_runs WHERE job_id = $ga")" "retry|exit 0" \
		"[$mode] garbage: the run is a retry of an exit 0"
	like "$(sql "SELECT error FROM job_runs WHERE job_id = $ga")" "jobq: control channel line 2: not JSON \\(at byte 0\\)" \
		"[$mode] garbage: the run's error names the line and the problem"
	like "$(sql "SELECT last_error FROM jobs WHERE id = $ga")" "control channel line 2: not JSON" \
		"[$mode] garbage: so does the job's last_error"
	like "$(sql "SELECT error FROM job_runs WHERE job_id = $lg")" "jobq: control channel line 5: not JSON" \
		"[$mode] garbage after a checkpoint and three progress lines: the error names line 5, as written"
	is "$(where "$gl")" failed "[$mode] garbage on the last attempt: dead-lettered"
	like "$(sql "SELECT reason FROM failed_jobs WHERE id = $gl")" "attempts used up .*control channel line 2: not JSON" \
		"[$mode] garbage on the last attempt: the reason says why"
	is "$(where "$bt"),$(sql "SELECT COUNT(*) FROM jobs WHERE type = 'nope'")" "queue,0" \
		"[$mode] a follow-up of an unknown type: retried, nothing enqueued"
	like "$(sql "SELECT error FROM job_runs WHERE job_id = $bt")" "control channel line 1: enqueue: unknown job type 'nope'" \
		"[$mode] a follow-up of an unknown type: the error says so"
	is "$(where "$ba"),$(sql "SELECT COUNT(*) FROM jobs WHERE type = 'child' AND payload = '{}'")" "queue,0" \
		"[$mode] a follow-up that waits for a later follow-up's ref: refused, retried, nothing enqueued"
	like "$(sql "SELECT error FROM job_runs WHERE job_id = $ba")" "control channel line 1: enqueue: \"after\": \"b\" is not the ref of an earlier follow-up" \
		"[$mode] the error names the line and the ref"

	is "$(where "$fl")" queue "[$mode] more than 64K on the channel: the job is retried"
	like "$(sql "SELECT error FROM job_runs WHERE job_id = $fl")" "jobq: control channel: more than 65536 bytes written" \
		"[$mode] more than 64K on the channel: the run's error says so"

	is "$(where "$rs"),$(sql "SELECT result FROM job_runs WHERE job_id = $rs")" 'gone,{"rows":3}' \
		"[$mode] the result is kept in the run history"
	like "$(jq_ show "$rs")" 'result \{"rows":3\}' "[$mode] jobq show prints a done job's result"
	like "$(jq_ show --json "$rs" | tr -d ' \t\n')" '"result":\{"rows":3\}' "[$mode] jobq show --json has the result as JSON"
done

# A done outcome whose lease was lost (release-stale, another worker)
# writes nothing: no follow-up either, in both reservation modes.
for mode in skip-locked update; do
	empty_tables
	rm -f "$T/go.$mode"
	write_conf <<EOC
[worker]
poll_interval = 20ms
reserve_mode = $mode
workdir = $T

[queue default]

[handler child]
exec = /bin/true
[handler follow_wait]
exec = ./control.sh follow_wait $T/go.$mode
EOC
	fw=$(jq_ enqueue follow_wait '{}')
	start_worker --stop-when-empty
	wait_for_sql 30 "SELECT lease_token IS NOT NULL FROM jobs WHERE id = $fw" 1
	sql "UPDATE jobs SET lease_token = 'stolen-by-another-worker-000000' WHERE id = $fw"
	touch "$T/go.$mode"
	wait_for_sql 30 "SELECT COUNT(*) FROM job_runs WHERE job_id = $fw" 1
	is "$(sql "SELECT CONCAT_WS('|', outcome, exit_status) FROM job_runs WHERE job_id = $fw")" "lost|exit 0" \
		"[$mode] a lost lease: the done outcome is dropped (run recorded as lost)"
	is "$(where "$fw"),$(children "$fw")" "queue,0" "[$mode] a lost lease: the job stays, and no follow-up was inserted"
	kill -TERM "$WORKER_PID" 2>/dev/null
	wait_exit 30 "$WORKER_PID" >/dev/null
done

# progress: written with the heartbeat, shown while running, cleared at the end.
empty_tables
write_conf <<EOC
[worker]
poll_interval = 20ms
reserve_ttl = 3s
heartbeat = 1s
workdir = $T

[queue default]

[handler progress]
exec = ./control.sh progress $T/go
EOC
pg=$(jq_ enqueue progress '{}')
start_worker --stop-when-empty
wait_for_sql 30 "SELECT CONCAT_WS('|', progress, progress_note) FROM jobs WHERE id = $pg" "40|half way"
is "$?" 0 "progress: the last progress line reaches the database with a heartbeat"
like "$(jq_ show "$pg")" "progress +40%  half way" "progress: jobq show prints it while the job runs"
like "$(jq_ show --json "$pg" | tr -d '\t\n')" '"progress":40,"progress_note":"half way"' "progress: so does jobq show --json"
touch "$T/go"
wait_exit 60 "$WORKER_PID"
is "$?" 0 "progress: the worker ends once the job is done"
is "$(where "$pg")" gone "progress: the job is done"
like "$(jq_ show "$pg")" 'result "finished"' "progress: afterwards jobq show prints the result"
unlike_progress=$(jq_ show "$pg" | grep -c '^  progress ')
is "$unlike_progress" 0 "progress: a done job shows no progress"

finish
