#!/bin/bash
# Resource limits per handler (issue 8): limit_as, limit_cpu,
# limit_nofile and limit_nproc are set with setrlimit in the child, soft
# and hard, [worker] holding defaults; a handler over its limit is
# stopped by the kernel and its job retried or dead-lettered as the
# handler's policy says.  limit_nproc counts the run user's processes
# and does not bind root: it is tested with user = nobody, and as root
# to show (and warn) that it has no effect there.
. "$top_srcdir/tests/lib.sh"
one_build normal "the system's limits"
setup limits
TH=$top_srcdir/tests/handlers

HANDLER_PATH=/usr/local/bin:/usr/bin:/bin
have_python=
PATH=$HANDLER_PATH command -v python3 >/dev/null && have_python=1

# One `jobq work --once` (a 120 s safety net).
work_once() {
	timeout 120 "$JOBQ" -c "$CONF" work --once 2>>"$T/work.log"
}

# What the last run of job $1 was: outcome|exit_status.
last_run() {
	sql "SELECT CONCAT_WS('|', outcome, exit_status) FROM job_runs WHERE job_id = $1 ORDER BY id DESC LIMIT 1"
}
column() { sql "SELECT $2 FROM job_runs WHERE job_id = $1 ORDER BY id DESC LIMIT 1"; }

# One job of type $1 with payload {}, run once; prints its id.
run_job() {
	local id
	id=$(jq_ enqueue "$1" '{}') || return 1
	work_once
	echo "$id"
}

sed -e "s|@TH@|$TH|g" <<'EOC' | write_conf
[worker]
poll_interval = 20ms
backoff = 1h
max_attempts = 3
timeout = 2m
limit_nofile = 64

[queue default]

[handler show]
exec = /bin/cat /proc/self/limits
limit_as = 256M
limit_cpu = 7s
limit_nproc = 500

[handler show_defaults]
exec = /bin/cat /proc/self/limits
limit_nofile = none

[handler spin]
exec = /bin/sh -c 'while :; do :; done'
limit_cpu = 1s

[handler spin_trap]
exec = /bin/bash -c 'trap "" XCPU; while :; do :; done'
limit_cpu = 1s
max_attempts = 1

[handler mem_big]
exec = @TH@/hog.py mem 268435456
limit_as = 128M
permanent_exit = 1

[handler mem_small]
exec = @TH@/hog.py mem 16777216
limit_as = 128M

[handler files]
exec = @TH@/hog.py files 100
limit_nofile = 16

[handler files_free]
exec = @TH@/hog.py files 40
EOC
if [ -z "$have_python" ]; then
	# hog.py needs python3 in the handlers' PATH: drop its handlers
	sed -i '/^\[handler mem_big\]/,$d' "$CONF"
fi

run jq_ check
is "$RC" "0" "a configuration with limit_* keys passes check"
# (as root, the one warning is that limit_nproc does not bind root)
is "$(grep -vc "limit_nproc: handler 'show' runs as root" "$T/err")" "0" "without any other warning"

# ---- the limits reach the handler: soft = hard; limit_cpu's hard is a second above ----
id=$(run_job show)
out=$(printf '%b' "$(column "$id" output)")
like "$out" $'Max cpu time +7 +8 +seconds' "limit_cpu = 7s: soft 7 s, hard 8 s (SIGXCPU, then SIGKILL)"
like "$out" $'Max address space +268435456 +268435456 +bytes' "limit_as = 256M: soft and hard 256 MiB"
like "$out" $'Max processes +500 +500 +processes' "limit_nproc = 500: soft and hard"
like "$out" $'Max open files +64 +64 +files' "limit_nofile = 64 from [worker]"
id=$(run_job show_defaults)
out=$(printf '%b' "$(column "$id" output)")
worker_nofile=$(ulimit -Sn)
like "$out" "Max open files +$worker_nofile " "limit_nofile = none: the worker's own limit ($worker_nofile)"
like "$out" $'Max cpu time +unlimited' "an unset limit_cpu leaves the worker's (unlimited)"

# ---- limit_cpu: SIGXCPU, the job retried ----
id=$(run_job spin)
is "$(last_run "$id")" "retry|killed by SIGXCPU" "a CPU hog over limit_cpu = 1s is killed by SIGXCPU; the job is retried"
like "$(sql "SELECT last_error FROM jobs WHERE id = $id")" "killed by SIGXCPU" "last_error says SIGXCPU"
diag "limit_cpu = 1s: the CPU hog ended after $(column "$id" duration_ms) ms on the clock"
# A handler that ignores SIGXCPU gets SIGKILL a CPU second later; with
# max_attempts = 1 the job is dead-lettered.
id=$(run_job spin_trap)
is "$(last_run "$id")" "dead|killed by SIGKILL" "ignoring SIGXCPU: SIGKILL at the hard limit"
like "$(sql "SELECT reason FROM failed_jobs WHERE id = $id")" "attempts used up \(1 of 1; last: killed by SIGKILL\)" \
	"and the job is dead-lettered (max_attempts = 1)"
ms=$(column "$id" duration_ms)
ok $([ "$ms" -ge 1900 ]; echo $?) "it ran 2 CPU seconds at least (${ms} ms), not killed by the timeout (2m)"

if [ -n "$have_python" ]; then
	# ---- limit_as: allocations fail ----
	id=$(run_job mem_big)
	is "$(last_run "$id")" "dead|exit 1" "allocating 256 MiB under limit_as = 128M fails: exit 1"
	like "$(sql "SELECT exception FROM failed_jobs WHERE id = $id")" "MemoryError" \
		"dead-lettered at once (permanent_exit = 1), stderr says MemoryError"
	id=$(run_job mem_small)
	is "$(last_run "$id")" "done|exit 0" "allocating 16 MiB under the same limit works"

	# ---- limit_nofile: open fails ----
	id=$(run_job files)
	is "$(last_run "$id")" "retry|exit 75" "opening 100 files under limit_nofile = 16 fails: exit 75, retried"
	like "$(column "$id" error)" "Too many open files" "stderr says Too many open files"
	n=$(printf '%b' "$(column "$id" output)" | head -1)
	ok $([ "$n" -lt 16 ]; echo $?) "it got fewer than 16 descriptors ($n)"
	id=$(run_job files_free)
	is "$(last_run "$id")" "done|exit 0" "40 opens under the [worker] default limit_nofile = 64 work"
else
	for i in 1 2 3 4 5 6 7 8; do echo "ok $((TAP_N + i)) # SKIP no python3 in $HANDLER_PATH"; done
	TAP_N=$((TAP_N + 8))
fi

# ---- limit_nproc: per real user; root is not bound ----
if [ -n "$have_python" ] && [ "$(id -u)" = 0 ] && getent passwd nobody >/dev/null; then
	empty_tables
	sed -e "s|@TH@|$TH|g" <<'EOC' | write_conf
[worker]
poll_interval = 20ms
backoff = 1h
timeout = 2m

[queue default]

[handler procs]
exec = @TH@/hog.py procs 20
user = nobody
limit_nproc = 4

[handler procs_root]
exec = @TH@/hog.py procs 20
limit_nproc = 4
EOC
	run jq_ check
	is "$RC" "0" "limit_nproc on a handler that runs as root passes check"
	like "$ERR" "$(basename "$CONF"):20: warning: limit_nproc: handler 'procs_root' runs as root, which the process limit does not bind" \
		"with a warning that root is not bound by it"
	# nobody's processes elsewhere on the machine count too: when there
	# are 4 already, the exec itself fails, which is the limit as well.
	id=$(run_job procs)
	like "$(last_run "$id")" "^retry\|(exit 75|exec failed: Resource temporarily unavailable)$" \
		"as nobody, forking 20 under limit_nproc = 4 fails (exit 75), the job is retried"
	like "$(column "$id" "CONCAT_WS('|', exit_status, error)")" "Resource temporarily unavailable" \
		"the reason is EAGAIN"
	n=$(printf '%b' "$(column "$id" output)" | head -1)
	ok $([ "${n:-0}" -lt 4 ]; echo $?) "it got fewer than 4 children (${n:-0}): the handler itself counts"
	id=$(run_job procs_root)
	is "$(last_run "$id")" "done|exit 0" "as root the same handler is not bound (documented)"
	is "$(printf '%b' "$(column "$id" output)" | head -1)" "20" "and forks all 20 children"
else
	for i in 1 2 3 4 5 6 7; do echo "ok $((TAP_N + i)) # SKIP needs root, nobody and python3"; done
	TAP_N=$((TAP_N + 7))
fi

# ---- a limit above the worker's own hard limit: refused at start ----
write_conf <<EOC
[queue default]
[handler many]
exec = /bin/true
limit_nofile = 100
limit_cpu = 30s
EOC
run prlimit --nofile=64:64 --cpu=30:30 -- "$JOBQ" -c "$CONF" check
is "$RC" "78" "limits above the worker's own hard limits: check exits 78"
like "$ERR" "jobq.ini:9: limit_nofile: 100 is above the worker's own hard limit \(64\)" "naming limit_nofile and its line"
like "$ERR" "jobq.ini:10: limit_cpu: 30s is not below the worker's own hard limit \(30s\)" "and limit_cpu (its SIGKILL second)"
run prlimit --nofile=64:64 --cpu=30:30 -- "$JOBQ" -c "$CONF" work --once
is "$RC" "78" "the worker refuses to start rather than fail every job"

# ---- bad values ----
for bad in "limit_as = 512|limit_as: '512' is too small" "limit_cpu = 1500ms|limit_cpu: '1500ms' is not a whole number of seconds" \
	"limit_nofile = 4|limit_nofile: bad number '4'" "limit_nproc = 0|limit_nproc: bad number '0'" \
	"limit_as = lots|limit_as: bad size 'lots'"; do
	write_conf <<EOC
[queue default]
[handler x]
exec = /bin/true
${bad%%|*}
EOC
	run jq_ check
	like "$RC:$ERR" "^78:.*jobq.ini:9: ${bad#*|}" "${bad%%|*}: exit 78, FILE:LINE and the reason"
done
finish
