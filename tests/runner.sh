#!/bin/bash
# How the worker runs a handler (DESIGN.md section 3), in both reservation
# modes: timeouts kill the whole process group (SIGTERM, then SIGKILL
# after kill_grace); a grandchild holding the pipes does not keep a job
# alive; stdin carries the payload intact and may be ignored; stdout and
# stderr are read concurrently, bounded (100 MiB of stderr leaves the
# worker small) and stored as valid UTF-8; the environment is clean; argv
# is split like words but never run through a shell; workdir applies.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
setup runner
TH=$top_srcdir/tests/handlers

# Whether process $1 still exists (a zombie counts as gone).
alive() {
	local state
	state=$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "/proc/$1/status" 2>/dev/null)
	[ -n "$state" ] && [ "$state" != Z ]
}

# Milliseconds on the test's own clock.
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# Waits up to $1 seconds for job $2 to reach failed_jobs, or for worker
# log $3 to report that writing an outcome failed.
wait_outcome() {
	local i=0
	while [ "$(sql "SELECT COUNT(*) FROM failed_jobs WHERE id = $2")" != 1 ]; do
		grep -q "writing outcome" "$3" && return 1
		i=$((i + 1))
		[ $i -le $(($1 * 10)) ] || { waited_out "$1" "wait_outcome $*"; return 1; }
		sleep 0.1
	done
}

# Shortens runs of filler (x) to "x...".
squeeze() { sed -E 's/x{8,}/x.../g'; }

runs() {
	sql "SELECT CONCAT_WS('|', outcome, exit_status) FROM job_runs WHERE job_id = $1 ORDER BY id"
}

# Runs `jobq work --once` (60 s safety net); sets ELAPSED_MS.
work_once() {
	local t0
	t0=$(now_ms)
	timeout 60 "$JOBQ" -c "$CONF" work --once "$@" 2>>"$T/work.$mode.log"
	WORK_RC=$?
	ELAPSED_MS=$(($(now_ms) - t0))
}

# ASan keeps shadow memory and quarantine: allow more RSS there.
if [ "$SANITIZED" = 1 ]; then
	RSS_MAX_KB=$((80 * 1024))
	RSS_GROWTH_KB=$((30 * 1024))
elif [ -n "${JOBQ_VALGRIND:-}" ]; then
	# valgrind's own core and shadow memory count in the worker's RSS.
	RSS_MAX_KB=$((120 * 1024))
	RSS_GROWTH_KB=$((30 * 1024))
else
	RSS_MAX_KB=$((30 * 1024))
	RSS_GROWTH_KB=$((10 * 1024))
fi

# A 1 MiB JSON payload (exactly max_payload's default) of random text.
payload=$T/payload.json
{
	printf '{"data":"'
	head -c 800000 /dev/urandom | base64 -w0 | head -c $((1048576 - 11))
	printf '"}'
} >"$payload"
payload_sha=$(sha256sum <"$payload" | cut -d' ' -f1)
is "$(stat -c %s "$payload")" 1048576 "the test payload is 1 MiB"

mkdir -p "$T/wd" "$T/wd2"
wd=$(cd "$T/wd" && pwd -P)
home=$(getent passwd "$(id -u)" | cut -d: -f6)

for mode in skip-locked update; do
	empty_tables
	rm -f "$T"/*.pid "$T/wd2/pwned"
	# A quoted heredoc: the exec lines must reach jobq exactly as written.
	sed -e "s|@T@|$T|g" -e "s|@TH@|$TH|g" -e "s|@MODE@|$mode|g" <<'EOC' | write_conf
[worker]
poll_interval = 20ms
reserve_mode = @MODE@
backoff = 1h
max_attempts = 3

[queue default]

[handler tree]
exec = @TH@/tree.sh @T@/tree.pid
timeout = 1s
kill_grace = 5s

[handler stubborn]
exec = @TH@/stubborn.sh @T@/stubborn.pid
timeout = 1s
kill_grace = 2s

[handler escape]
exec = @TH@/escape.sh @T@/escape.pid

[handler samegroup]
exec = @TH@/escape.sh @T@/same.pid same-group

[handler sha]
exec = /usr/bin/sha256sum
timeout = 30s

[handler noread]
exec = /bin/true

[handler chatty]
exec = @TH@/chatty.sh
timeout = 30s

[handler bigerr]
exec = @TH@/bigerr.sh 100
stderr_limit = 64K
timeout = 60s

[handler bigerr1]
exec = @TH@/bigerr.sh 1 1

[handler bigerr16]
exec = @TH@/bigerr.sh 20
stderr_limit = 16K

[handler small]
exec = @TH@/exitwith.sh

[handler badutf8]
exec = @TH@/badutf8.sh

[handler env]
exec = /usr/bin/env
max_attempts = 7
env.GREETING = hello, world
env.LANG = C

[handler argv]
exec = /usr/bin/printf "<%s>\n" 'two words' "\$HOME" '$(id)' 'a;b' x\ y "it's" * && touch pwned
workdir = @T@/wd2

[handler pwd]
exec = /bin/pwd
workdir = @T@/wd
EOC

	# --- timeouts ---
	id=$(jq_ enqueue tree '{}')
	work_once
	gpid=$(cat "$T/tree.pid" 2>/dev/null)
	is "$(runs "$id")" "retry|timed out after 1s" "[$mode] timeout: outcome retry, 'timed out after 1s'"
	ok $([ -n "$gpid" ] && ! alive "$gpid"; echo $?) "[$mode] timeout: the handler's grandchild ($gpid) is gone too"
	[ -n "$gpid" ] && alive "$gpid" && kill -KILL "$gpid"
	ms=$(sql "SELECT duration_ms FROM job_runs WHERE job_id = $id")
	ok $([ "$ms" -ge 950 ] && [ "$ms" -lt 4000 ]; echo $?) \
		"[$mode] timeout: SIGTERM ended it after ~1s, without waiting for kill_grace (${ms}ms)"
	like "$(sql "SELECT last_error FROM jobs WHERE id = $id")" '^\[timed out after 1s\]' "[$mode] timeout: last_error says it timed out"

	id=$(jq_ enqueue stubborn '{}')
	work_once
	is "$(runs "$id")" "retry|timed out after 1s" "[$mode] SIGTERM ignored: outcome retry, 'timed out after 1s'"
	ms=$(sql "SELECT duration_ms FROM job_runs WHERE job_id = $id")
	ok $([ "$ms" -ge 2900 ] && [ "$ms" -lt 8000 ]; echo $?) \
		"[$mode] SIGTERM ignored: SIGKILL after timeout 1s + kill_grace 2s (${ms}ms)"
	gpid=$(cat "$T/stubborn.pid" 2>/dev/null)
	ok $([ -n "$gpid" ] && ! alive "$gpid"; echo $?) "[$mode] SIGTERM ignored: its child ($gpid), ignoring SIGTERM too, is gone"
	[ -n "$gpid" ] && alive "$gpid" && kill -KILL "$gpid"
	ok $([ "$ELAPSED_MS" -lt $((20000 * TIME_SCALE)) ]; echo $?) "[$mode] SIGTERM ignored: the worker was done in ${ELAPSED_MS}ms, not the handler's 60 s"

	# --- grandchildren holding the pipes ---
	id=$(jq_ enqueue escape '{}')
	work_once
	gpid=$(cat "$T/escape.pid" 2>/dev/null)
	is "$(runs "$id")" "done|exit 0" "[$mode] escaped grandchild: the job is done"
	is "$(sql "SELECT output FROM job_runs WHERE job_id = $id")" 'handler done\n' "[$mode] escaped grandchild: stdout kept"
	ok $([ -n "$gpid" ] && alive "$gpid"; echo $?) "[$mode] escaped grandchild: it still runs (holding stdout and stderr)"
	ok $([ "$ELAPSED_MS" -lt $((15000 * TIME_SCALE)) ]; echo $?) "[$mode] escaped grandchild: the worker did not wait for it (${ELAPSED_MS}ms)"
	[ -n "$gpid" ] && kill "$gpid" 2>/dev/null

	id=$(jq_ enqueue samegroup '{}')
	work_once
	gpid=$(cat "$T/same.pid" 2>/dev/null)
	is "$(runs "$id")" "done|exit 0" "[$mode] grandchild in the group: the job is done"
	ok $([ -n "$gpid" ] && ! alive "$gpid"; echo $?) "[$mode] grandchild in the group: killed when the handler exited"
	[ -n "$gpid" ] && alive "$gpid" && kill -KILL "$gpid"
	ok $([ "$ELAPSED_MS" -lt $((15000 * TIME_SCALE)) ]; echo $?) "[$mode] grandchild in the group: the worker did not wait for it (${ELAPSED_MS}ms)"

	# --- stdin ---
	id=$(jq_ enqueue sha - <"$payload")
	is "$(sql "SELECT CONCAT(LENGTH(payload), ' ', SHA2(payload, 256)) FROM jobs WHERE id = $id")" \
		"1048576 $payload_sha" "[$mode] 1 MiB payload stored as sent"
	work_once
	is "$(runs "$id")" "done|exit 0" "[$mode] 1 MiB payload: handler done"
	is "$(sql "SELECT output FROM job_runs WHERE job_id = $id")" "$payload_sha  -\\n" \
		"[$mode] 1 MiB payload: the handler read exactly the payload (sha256)"

	id1=$(jq_ enqueue noread - <"$payload")
	id2=$(jq_ enqueue small '{"out":"after","exit":0}')
	timeout 60 "$JOBQ" -c "$CONF" work --stop-when-empty 2>>"$T/work.$mode.log"
	is "$?" 0 "[$mode] handler ignoring a 1 MiB stdin: worker exits 0"
	is "$(runs "$id1")" "done|exit 0" "[$mode] handler ignoring a 1 MiB stdin: done"
	is "$(runs "$id2")" "done|exit 0" "[$mode] handler ignoring a 1 MiB stdin: the next job ran too"

	id=$(jq_ enqueue chatty - <"$payload")
	work_once
	is "$(runs "$id")" "done|exit 0" "[$mode] 1 MiB out, 1 MiB err before reading 1 MiB in: no deadlock, done"
	like "$(sql "SELECT error FROM job_runs WHERE job_id = $id")" "stdin sha256 $payload_sha\\\\n\$" \
		"[$mode] ... and the handler got the whole payload"
	is "$(sql "SELECT LENGTH(output) < 70000 AND output LIKE '%bytes dropped%' FROM job_runs WHERE job_id = $id")" 1 \
		"[$mode] ... and stdout was kept bounded, with the dropped marker"

	# --- 100 MiB on stderr ---
	id0=$(jq_ enqueue small '{"out":"warm up","exit":0}')
	start_worker
	wait_for_sql 60 "SELECT COUNT(*) FROM job_runs WHERE job_id = $id0" 1
	ok $? "[$mode] 100 MiB stderr: a worker ran a small job first"
	hwm0=$(sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p' /proc/$WORKER_PID/status)
	id=$(jq_ enqueue bigerr '{}')
	wait_outcome 40 "$id" "$T/worker.$((${#BG_PIDS[@]} - 1)).log"
	ok $? "[$mode] 100 MiB stderr: exit 65 dead-letters the job"
	hwm=$(sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p' /proc/$WORKER_PID/status)
	ok $([ -n "$hwm" ] && [ "$hwm" -lt "$RSS_MAX_KB" ]; echo $?) \
		"[$mode] 100 MiB stderr: worker peak RSS ${hwm} kB < $RSS_MAX_KB kB"
	ok $([ -n "$hwm" ] && [ -n "$hwm0" ] && [ $((hwm - hwm0)) -lt "$RSS_GROWTH_KB" ]; echo $?) \
		"[$mode] 100 MiB stderr: peak RSS grew by $((${hwm:-0} - ${hwm0:-0})) kB < $RSS_GROWTH_KB kB"
	kill -TERM "$WORKER_PID"
	wait_exit 30 "$WORKER_PID"
	is "$?" 0 "[$mode] 100 MiB stderr: the worker exits 0 on SIGTERM"
	total=$((21 + 100 * 1048576 + 20))
	is "$(sql "SELECT LENGTH(exception) <= 65536 + 100, LENGTH(exception) >= 60000 FROM failed_jobs WHERE id = $id")" "1	1" \
		"[$mode] 100 MiB stderr: the stored error is bounded (~64 KiB)"
	is "$(sql "SELECT exception FROM failed_jobs WHERE id = $id" | squeeze)" \
		"first line of stderr\\nx...\\n[... $((total - 65536)) bytes dropped ...]\\nx...last line of stderr\\n" \
		"[$mode] 100 MiB stderr: head, 'bytes dropped' marker, tail"
	is "$(sql "SELECT LENGTH(error) < 70000 AND error LIKE '%bytes dropped%' FROM job_runs WHERE job_id = $id")" 1 \
		"[$mode] 100 MiB stderr: the run's error is bounded too"

	# A retry keeps "[exit words] stderr" in jobs.last_error, bounded too.
	id=$(jq_ enqueue bigerr1 '{}')
	work_once
	is "$(runs "$id")" "retry|exit 1" "[$mode] 1 MiB stderr, exit 1: retry"
	is "$(sql "SELECT LENGTH(last_error) < 70000, last_error LIKE '[exit 1] first line of stderr%bytes dropped%last line of stderr\n' FROM jobs WHERE id = $id")" "1	1" \
		"[$mode] 1 MiB stderr, exit 1: last_error is '[exit 1] ' + the bounded stderr"

	# The same with stderr_limit = 16K: the capture is bounded by the
	# limit, whatever the database columns could hold.
	id=$(jq_ enqueue bigerr16 '{}')
	work_once
	total=$((21 + 20 * 1048576 + 20))
	is "$(sql "SELECT CONCAT_WS('|', exit_status, LENGTH(exception) <= 16384 + 100, LENGTH(exception) > 15000) FROM failed_jobs WHERE id = $id")" "exit 65|1|1" \
		"[$mode] 20 MiB stderr, stderr_limit 16K: dead-lettered, error bounded by the limit"
	is "$(sql "SELECT exception FROM failed_jobs WHERE id = $id" | squeeze)" \
		"first line of stderr\\nx...\\n[... $((total - 16384)) bytes dropped ...]\\nx...last line of stderr\\n" \
		"[$mode] 20 MiB stderr, stderr_limit 16K: head, 'bytes dropped' marker, tail"

	# --- invalid UTF-8 ---
	id=$(jq_ enqueue badutf8 '{}')
	work_once
	is "$(sql "SELECT exit_status FROM failed_jobs WHERE id = $id")" "exit 65" "[$mode] invalid UTF-8: the outcome was written"
	for col in "exception) FROM failed_jobs WHERE id" "output) FROM job_runs WHERE job_id" "error) FROM job_runs WHERE job_id"; do
		hex=$(sql "SELECT HEX($col = $id")
		ok $([ -n "$hex" ] && echo "$hex" | xxd -r -p | iconv -f UTF-8 -t UTF-8 >/dev/null 2>&1; echo $?) \
			"[$mode] invalid UTF-8: ${col%%)*} is valid UTF-8"
	done
	# Each byte that starts no well-formed sequence (and NUL) is U+FFFD.
	want=$(printf 'err: \uFFFD|\uFFFD(|\uFFFD\uFFFD|\uFFFD\uFFFD\uFFFD|\uFFFD| ok \u00e9\n' | xxd -p | tr -d '\n' | tr a-f A-F)
	is "$(sql "SELECT HEX(exception) FROM failed_jobs WHERE id = $id")" "$want" "[$mode] invalid UTF-8: repaired with U+FFFD, valid text kept"

	# --- environment, argv, workdir ---
	id=$(jq_ enqueue env '{"x":1}')
	created=$(sql "SELECT DATE_FORMAT(created_at, '%Y-%m-%dT%H:%i:%s.%fZ') FROM jobs WHERE id = $id")
	id3=$(sql "INSERT INTO jobs (queue, type, payload, available_at, attempts) VALUES ('default', 'env', '{}', UTC_TIMESTAMP(6), 2); SELECT LAST_INSERT_ID()")
	JOBQ_LEAK_MARKER=leaked HOME=/nonexistent/worker-home TZ=Europe/Paris \
		timeout 60 "$JOBQ" -c "$CONF" work --stop-when-empty 2>>"$T/work.$mode.log"
	envout=$(sql "SELECT REPLACE(output, '\n', ' ') FROM job_runs WHERE job_id = $id")
	env3=$(sql "SELECT REPLACE(output, '\n', ' ') FROM job_runs WHERE job_id = $id3")
	for want in "JOBQ_JOB_ID=$id" JOBQ_TYPE=env JOBQ_QUEUE=default JOBQ_ATTEMPT=1 JOBQ_MAX_ATTEMPTS=7 \
		"JOBQ_ENQUEUED_AT=$created" TZ=UTC "GREETING=hello, world" LANG=C "HOME=$home"; do
		like " $envout" " $want " "[$mode] env: the handler sees $want"
	done
	like " $envout" " PATH=/" "[$mode] env: PATH is set"
	like " $env3" " JOBQ_ATTEMPT=3 " "[$mode] env: JOBQ_ATTEMPT counts attempts (third attempt sees 3)"
	like " $envout" " TRACEPARENT=00-[0-9a-f]{32}-[0-9a-f]{16}-01 " "[$mode] env: TRACEPARENT, a trace id of its own for a job enqueued without one"
	ok $([[ $envout != *JOBQ_LEAK_MARKER* && $envout != *nonexistent* && $envout != *Paris* ]]; echo $?) \
		"[$mode] env: nothing of the worker's own environment leaks"
	extra=$(for kv in $(sql "SELECT output FROM job_runs WHERE job_id = $id" | sed 's/\\n/\n/g' | cut -d= -f1); do
		case $kv in PATH | LANG | LC_ALL | TZ | HOME | USER | LOGNAME | GREETING | JOBQ_* | TRACEPARENT) ;; *) echo "$kv" ;; esac
	done | paste -sd' ')
	is "$extra" "" "[$mode] env: no variables beyond the contract's"

	id=$(jq_ enqueue argv '{}')
	id2=$(jq_ enqueue pwd '{}')
	timeout 60 "$JOBQ" -c "$CONF" work --stop-when-empty 2>>"$T/work.$mode.log"
	is "$(sql "SELECT output FROM job_runs WHERE job_id = $id")" \
		'<two words>\n<$HOME>\n<$(id)>\n<a;b>\n<x y>\n<it'"'"'s>\n<*>\n<&&>\n<touch>\n<pwned>\n' \
		"[$mode] argv: split like words, quotes removed, nothing expanded"
	ok $([ ! -e "$T/wd2/pwned" ]; echo $?) "[$mode] argv: never run through a shell (&& did not run touch)"
	is "$(sql "SELECT output FROM job_runs WHERE job_id = $id2")" "$wd\\n" "[$mode] workdir: the handler runs in it"
	ok $(grep -qE 'Sanitizer|runtime error' "$T/work.$mode.log" "$T"/worker.*.log; [ $? = 1 ]; echo $?) \
		"[$mode] no sanitizer report in the worker logs"
done
finish
