#!/bin/bash
# Persistent handlers (mode = persistent): the outcome table of
# DESIGN.md section 3, row by row, through long-lived processes that
# speak the line protocol of jobq-handler(7); the status each reply
# carries is read exactly like an exit code.  Then the helper modules
# (Python serve(), PHP jobq_serve()) with done, retry and dead-letter.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
setup persist
TH=$top_srcdir/tests/handlers

where() {
	sql "SELECT CASE WHEN EXISTS (SELECT 1 FROM jobs WHERE id = $1) THEN 'queue'
		WHEN EXISTS (SELECT 1 FROM failed_jobs WHERE id = $1) THEN 'failed' ELSE 'gone' END"
}
run_of() {
	sql "SELECT CONCAT_WS('|', outcome, exit_status) FROM job_runs WHERE job_id = $1 ORDER BY id"
}
ins() {
	sql "INSERT INTO jobs (queue, type, payload, available_at ${3:-}) VALUES ('default', '$1', '$2', UTC_TIMESTAMP(6) ${4:-}); SELECT LAST_INSERT_ID()"
}
check_retry() {
	local id=$1 words=$2 err_re=$3 what=$4
	is "$(where "$id")" queue "$what: job stays in the queue"
	is "$(sql "SELECT CONCAT_WS('|', attempts, lease_token IS NULL, available_at > created_at) FROM jobs WHERE id = $id")" \
		"1|1|1" "$what: attempts 1, lease released, available later"
	is "$(run_of "$id")" "retry|$words" "$what: run recorded as retry, '$words'"
	like "$(sql "SELECT last_error FROM jobs WHERE id = $id")" "^\\[$words\\] $err_re" \
		"$what: last_error holds the status and stderr"
}
check_dead() {
	local id=$1 words=$2 reason_re=$3 exc=$4 attempts=$5 what=$6
	is "$(where "$id")" failed "$what: job moved to failed_jobs"
	is "$(sql "SELECT CONCAT_WS('|', exit_status, attempts) FROM failed_jobs WHERE id = $id")" \
		"$words|$attempts" "$what: exit_status '$words', attempts $attempts"
	like "$(sql "SELECT reason FROM failed_jobs WHERE id = $id")" "$reason_re" "$what: reason"
	if [ -n "$exc" ]; then
		is "$(sql "SELECT exception FROM failed_jobs WHERE id = $id")" "$exc" \
			"$what: exception holds the job's stderr"
	fi
}

write_conf <<EOC
[worker]
poll_interval = 20ms
backoff = exponential 30s 4m
backoff_jitter = 0
max_attempts = 5
mode = persistent

[queue default]

[handler x]
exec = $TH/persist_raw.py $T

[handler strict]
exec = $TH/persist_raw.py $T
permanent_stderr = ^FATAL:
retry_stderr = (?i)try again

[handler custom]
exec = $TH/persist_raw.py $T
permanent_exit = 3, 100
retry_exit = 65

[handler until]
exec = $TH/persist_raw.py $T
retry_until = 1m

[handler ex]
exec = $TH/exitwith.sh
mode = exec
EOC
done0=$(jq_ enqueue x '{"out":"hello from the handler","err":"just a warning","exit":0}')
ex75=$(jq_ enqueue x '{"err":"upstream timed out","exit":75}')
ex65=$(jq_ enqueue x '{"err":"bad data: no field to\nsecond line","exit":65}')
ex78=$(jq_ enqueue x '{"err":"config broken","exit":78}')
ex64=$(jq_ enqueue x '{"exit":64}')
ex1=$(jq_ enqueue x '{"err":"oops","exit":1}')
ex3=$(jq_ enqueue x '{"err":"three","exit":3}')
segv=$(jq_ enqueue x '{"err":"about to crash","signal":"SEGV"}')
perm=$(jq_ enqueue strict '{"err":"FATAL: mailbox does not exist","exit":1}')
notperm=$(jq_ enqueue strict '{"err":"not FATAL: busy","exit":1}')
retrymatch=$(jq_ enqueue strict '{"err":"server busy, please try again later","exit":65}')
strict65=$(jq_ enqueue strict '{"err":"bad input","exit":65}')
usedup=$(ins x '{"err":"still failing","exit":75}' ", attempts" ", 4")
jobmax=$(ins x '{"err":"only once","exit":75}' ", max_attempts" ", 1")
old=$(ins until '{"err":"too late","exit":75}' ", created_at" ", UTC_TIMESTAMP(6) - INTERVAL 2 MINUTE")
young=$(jq_ enqueue until '{"err":"in time","exit":75}')
c3=$(jq_ enqueue custom '{"err":"custom three","exit":3}')
c100=$(jq_ enqueue custom '{"exit":100}')
c65=$(jq_ enqueue custom '{"err":"custom 65","exit":65}')
c66=$(jq_ enqueue custom '{"err":"custom 66","exit":66}')
died=$(jq_ enqueue x '{"err":"leaving","die":3}')
died0=$(jq_ enqueue x '{"err":"leaving quietly","die":0}')
ctl=$(jq_ enqueue x '{"ctl":["{\"progress\": 40, \"note\": \"half\"}"],"out":"with a control line"}')
pretty=$(ins x '{
  "out": "a payload over\nseveral lines"
}')
exec0=$(jq_ enqueue ex '{"out":"exec mode still","exit":0}')
is "$(sql "SELECT COUNT(*) FROM jobs")" 25 "25 jobs enqueued"

log=$T/work.log
timeout 120 "$JOBQ" -c "$CONF" work --stop-when-empty --concurrency 2 2>"$log"
is "$?" 0 "jobq work --stop-when-empty exits 0"
is "$(sql "SELECT COUNT(DISTINCT job_id) FROM job_runs")" 25 "every job ran once"

is "$(where "$done0")" gone "reply 0: job deleted"
is "$(sql "SELECT CONCAT_WS('|', outcome, exit_status, output, error) FROM job_runs WHERE job_id = $done0")" \
	'done|exit 0|hello from the handler\n|just a warning\n' "reply 0: done, the job's own stdout and stderr kept"
check_retry "$ex75" "exit 75" "upstream timed out" "reply 75"
check_dead "$ex65" "exit 65" "exit 65 is a permanent failure" 'bad data: no field to\nsecond line\n' 1 "reply 65"
check_dead "$ex78" "exit 78" "permanent" 'config broken\n' 1 "reply 78"
check_dead "$ex64" "exit 64" "permanent" "" 1 "reply 64"
check_retry "$ex1" "exit 1" "oops" "reply 1"
check_retry "$ex3" "exit 3" "three" "reply 3"
check_retry "$segv" "killed by SIGSEGV" "about to crash" "crash mid-job (SIGSEGV)"
check_dead "$perm" "exit 1" "stderr matched permanent_stderr" 'FATAL: mailbox does not exist\n' 1 "permanent_stderr"
check_retry "$notperm" "exit 1" "not FATAL" "permanent_stderr not matching"
check_retry "$retrymatch" "exit 65" "server busy" "retry_stderr with reply 65"
check_dead "$strict65" "exit 65" "permanent failure" 'bad input\n' 1 "reply 65, retry_stderr not matching"
check_dead "$usedup" "exit 75" "^attempts used up \(5 of 5" 'still failing\n' 5 "attempt 5 of 5"
check_dead "$jobmax" "exit 75" "^attempts used up \(1 of 1" 'only once\n' 1 "the job's own max_attempts 1"
check_dead "$old" "exit 75" "^retry_until passed" 'too late\n' 1 "retry_until passed"
check_retry "$young" "exit 75" "in time" "retry_until not yet passed"
check_dead "$c3" "exit 3" "permanent" 'custom three\n' 1 "permanent_exit = 3, 100: reply 3"
check_dead "$c100" "exit 100" "permanent" "" 1 "permanent_exit = 3, 100: reply 100"
check_retry "$c65" "exit 65" "custom 65" "retry_exit = 65: reply 65"
check_retry "$c66" "exit 66" "custom 66" "permanent_exit replaces 64-78: reply 66"
check_retry "$died" "exit 3" "leaving" "exit 3 mid-job, no status line"
# Exit 0 without a status line is done, as the same exit is in exec mode.
is "$(where "$died0")|$(run_of "$died0")" "gone|done|exit 0" "exit 0 mid-job, no status line: done"
is "$(run_of "$ctl")" "done|exit 0" "a control line before the status line: done"
is "$(sql "SELECT output FROM job_runs WHERE job_id = $ctl")" 'with a control line\n' "a control line: stdout kept"
is "$(sql "SELECT CONCAT_WS('|', outcome, output) FROM job_runs WHERE job_id = $pretty")" \
	'done|a payload over\nseveral lines\n' "a payload stored over several lines reaches the handler whole"
is "$(run_of "$exec0")" "done|exit 0" "mode = exec in a section overrides the [worker] default"
is "$(sql "SELECT COUNT(*) FROM jobs WHERE lease_token IS NOT NULL")" 0 "no job is left reserved"
ok $(grep -qE 'Sanitizer|runtime error' "$log"; [ $? = 1 ]; echo $?) "no sanitizer report in the worker log"
n=$(pgrep -f "$TH/persist_raw.py $T" | wc -l)
is "$n" 0 "no handler process outlives the worker"

# The helper modules, in persistent mode and in exec mode.
empty_tables
write_conf <<EOC
[worker]
poll_interval = 20ms
backoff = exponential 30s 4m
backoff_jitter = 0

[queue default]

[handler py]
exec = $TH/persist_py.py
mode = persistent
env.PYTHONPATH = $HANDLERS
env.PYTHONDONTWRITEBYTECODE = 1

[handler pyexec]
exec = $TH/persist_py.py
env.PYTHONPATH = $HANDLERS
env.PYTHONDONTWRITEBYTECODE = 1

[handler php]
exec = /usr/bin/php $TH/persist_php.php
mode = persistent
env.HANDLER_LIB = $HANDLERS

[handler phpexec]
exec = /usr/bin/php $TH/persist_php.php
env.HANDLER_LIB = $HANDLERS
EOC
declare -A ids
for t in py pyexec php phpexec; do
	if [ "${t#php}" != "$t" ] && ! [ -x /usr/bin/php ]; then
		continue
	fi
	ids[$t.ok]=$(jq_ enqueue $t '{"say":"hi"}')
	ids[$t.retry]=$(jq_ enqueue $t '{"fail":"retry"}')
	ids[$t.dead]=$(jq_ enqueue $t '{"fail":"permanent"}')
	ids[$t.ok2]=$(jq_ enqueue $t '{"say":"again"}')
done
timeout 120 "$JOBQ" -c "$CONF" work --stop-when-empty --concurrency 1 2>"$T/mod.log"
is "$?" 0 "helper modules: the worker exits 0"
for t in py pyexec php phpexec; do
	if [ "${t#php}" != "$t" ] && ! [ -x /usr/bin/php ]; then
		continue
	fi
	id=${ids[$t.ok]}
	is "$(sql "SELECT CONCAT_WS('|', outcome, exit_status, output) FROM job_runs WHERE job_id = $id")" \
		"done|exit 0|hi from job $id attempt 1\\n" "$t: a function that returns: done, its output kept"
	is "$(run_of "${ids[$t.retry]}")" "retry|exit 75" "$t: an exception: retry"
	like "$(sql "SELECT last_error FROM jobs WHERE id = ${ids[$t.retry]}")" "something went wrong" \
		"$t: the exception's text is the error"
	check_dead "${ids[$t.dead]}" "exit 65" "exit 65 is a permanent failure" "" 1 "$t: the permanent exception"
	a=$(sql "SELECT output FROM job_runs WHERE job_id = ${ids[$t.ok]}")
	b=$(sql "SELECT output FROM job_runs WHERE job_id = ${ids[$t.ok2]}")
	is "$b" "again from job ${ids[$t.ok2]} attempt 1\\n" "$t: the next job gets its own payload and id"
done
p1=$(sql "SELECT error FROM job_runs WHERE job_id = ${ids[py.ok]}")
p2=$(sql "SELECT error FROM job_runs WHERE job_id = ${ids[py.ok2]}")
is "$p1" "$p2" "py persistent: the same process served both jobs (${p1%\\n})"
p1=$(sql "SELECT error FROM job_runs WHERE job_id = ${ids[pyexec.ok]}")
p2=$(sql "SELECT error FROM job_runs WHERE job_id = ${ids[pyexec.ok2]}")
ok $([ "$p1" != "$p2" ]; echo $?) "py exec mode: a process per job"
# The keys: refused where they would do nothing, or with a bad value.
conf_err() {
	write_conf <<EOC
[queue default]
[handler a]
exec = $TH/persist_raw.py $T
$1
EOC
	jq_ check 2>&1 >/dev/null
	echo "rc=$?"
}
like "$(conf_err "max_jobs = 10")" "jobq.ini:9: max_jobs: only for mode = persistent \\(handler 'a' is mode = exec\\).*rc=78" \
	"max_jobs in an exec-mode section: refused, exit 78"
like "$(conf_err "idle_timeout = 1m")" "jobq.ini:9: idle_timeout: only for mode = persistent" "idle_timeout in an exec-mode section: refused"
write_conf <<EOC
[worker]
max_memory = 200M
[queue default]
[handler a]
exec = $TH/persist_raw.py $T
EOC
like "$(jq_ check 2>&1 >/dev/null; echo "rc=$?")" "jobq.ini:[0-9]+: max_memory: only for mode = persistent, and no handler is.*rc=78" \
	"max_memory in [worker] with no persistent handler: refused, exit 78"
like "$(conf_err "mode = forking")" "jobq.ini:9: mode: 'forking' is not exec or persistent.*rc=78" "a bad mode: refused, exit 78"
like "$(conf_err "mode = persistent
max_memory = 10K")" "jobq.ini:10: max_memory: '10K' is too small \\(at least 1M, or none\\)" "max_memory under 1M: refused"
like "$(conf_err "mode = persistent
max_jobs = 0")" "jobq.ini:10: max_jobs: " "max_jobs = 0: refused (none means no limit)"
like "$(conf_err "mode = persistent
max_jobs = 100
max_memory = 200M
idle_timeout = 10m")" "rc=0" "mode = persistent with max_jobs, max_memory and idle_timeout: accepted"
# The helper modules' lines on descriptor 3, read straight from a file:
# the same control lines in both modes, and in persistent mode one
# status line per request.
req='{"id":7,"type":"t","queue":"default","attempt":1,"max_attempts":5,"enqueued_at":"x","payload":{}}'
req2='{"id":8,"type":"t","queue":"default","attempt":2,"max_attempts":5,"enqueued_at":"x","payload":{"fail":1}}'
ctl_lines='{"progress":40,"note":"half"}
{"enqueue":{"type":"next","payload":{"from":7},"queue":"low","delay":"5m"}}
{"result":{"ok":true}}'
for lang in py php; do
	if [ $lang = php ] && ! [ -x /usr/bin/php ]; then
		continue
	fi
	cmd=("$TH/persist_ctl.py")
	[ $lang = php ] && cmd=(/usr/bin/php "$TH/persist_ctl.php")
	printf '%s\n%s\n' "$req" "$req2" |
		env -i PATH=/usr/bin:/bin PYTHONPATH="$HANDLERS" PYTHONDONTWRITEBYTECODE=1 HANDLER_LIB="$HANDLERS" \
		"${cmd[@]}" 3>"$T/ctl.$lang" >/dev/null 2>"$T/err.$lang"
	is "$?" 0 "$lang module, persistent: ends with 0 at the end of its input"
	is "$(sed 's/, */,/g; s/: */:/g' "$T/ctl.$lang")" "$ctl_lines
{\"status\":0}
${ctl_lines//7/8}
{\"retry_after\":\"10m\"}
{\"status\":75}" "$lang module, persistent: control lines, then one status line per job"
	echo '{}' | env -i PATH=/usr/bin:/bin PYTHONPATH="$HANDLERS" PYTHONDONTWRITEBYTECODE=1 HANDLER_LIB="$HANDLERS" \
		JOBQ_JOB_ID=7 JOBQ_ATTEMPT=1 "${cmd[@]}" 3>"$T/ctlx.$lang" >/dev/null 2>&1
	is "$?" 0 "$lang module, exec mode: exits 0"
	is "$(sed 's/, */,/g; s/: */:/g' "$T/ctlx.$lang")" "$ctl_lines" "$lang module, exec mode: the same control lines, no status line"
	echo '{"fail":1}' | env -i PATH=/usr/bin:/bin PYTHONPATH="$HANDLERS" PYTHONDONTWRITEBYTECODE=1 HANDLER_LIB="$HANDLERS" \
		JOBQ_JOB_ID=7 JOBQ_ATTEMPT=1 "${cmd[@]}" 3>/dev/null >/dev/null 2>&1
	is "$?" 75 "$lang module, exec mode: an exception exits 75"
done
# ---- the control lines through the worker: applied in persistent mode ----
# persist_ctl.py writes a follow-up, progress and a result, then is done
# (or retries after 10m when the payload says fail): the follow-up exists
# only for the done job, the result is kept, retry_after wins, and
# retry_until is checked against it, not against the backoff it replaces.
empty_tables
write_conf <<EOC
[worker]
poll_interval = 20ms
backoff = exponential 30s 4m
backoff_jitter = 0

[queue default]
[queue low]

[handler pc]
mode = persistent
exec = $TH/persist_ctl.py
env.PYTHONPATH = $HANDLERS

[handler pcu]
mode = persistent
exec = $TH/persist_ctl.py
env.PYTHONPATH = $HANDLERS
backoff = exponential 30m 1h
retry_until = 15m

[handler next]
queue = low
exec = /bin/true
EOC
okid=$(jq_ enqueue pc '{}')
failid=$(jq_ enqueue pc '{"fail": 1}')
untilid=$(jq_ enqueue pcu '{"fail": 1}')
jq_ work --stop-when-empty --queue default 2>"$T/pc.log"
is "$(sql "SELECT CONCAT_WS('|', queue, payload, available_at > UTC_TIMESTAMP(6) + INTERVAL 4 MINUTE) FROM jobs WHERE type = 'next'")" \
	"low|{\"from\":$okid}|1" "persistent mode: the done job's follow-up is enqueued once, in queue low, 5m later"
is "$(sql "SELECT result FROM job_runs WHERE job_id = $okid")" '{"ok":true}' "... and its result is kept with the run"
is "$(sql "SELECT follow_ups FROM job_runs WHERE job_id = $okid")" "$(sql "SELECT id FROM jobs WHERE type = 'next'")" \
	"... and the done run names the follow-up's id"
is "$(sql "SELECT CONCAT_WS('|', attempts, available_at > UTC_TIMESTAMP(6) + INTERVAL 9 MINUTE) FROM jobs WHERE id = $failid")" \
	"1|1" "persistent mode: the failed job retries after retry_after (10m), not the 30s backoff"
is "$(sql "SELECT COUNT(*) FROM jobs WHERE type = 'next' AND payload LIKE '%$failid%'")" 0 "... and leaves no follow-up"
is "$(sql "SELECT CONCAT_WS('|', attempts, available_at > UTC_TIMESTAMP(6) + INTERVAL 9 MINUTE) FROM jobs WHERE id = $untilid")" \
	"1|1" "persistent mode: retry_after (10m) within retry_until (15m) retries, where the 30m backoff it replaces would not"
finish
