#!/bin/bash
# Issue 8, defect 8: running out of file descriptors.  Each running
# handler holds four pipes, so `ulimit -n 30` cannot carry concurrency
# 20; the worker used to start anyway and spin ("pipe: Too many open
# files" thousands of times a second, each job given back and taken again
# at once).  Now:
#  - a hard limit too low: the worker refuses to start (exit 78), naming
#    the open-files limit and the concurrency it allows, and takes no job;
#  - a soft limit too low under a higher hard one: the worker raises its
#    soft limit and runs all 20 at once;
#  - a handler that cannot be started (the limit lowered under a running
#    worker with prlimit): the job goes back, and the worker pauses before
#    taking a job again, logging the error once, and recovers once
#    descriptors are available again.
. "$top_srcdir/tests/lib.sh"
one_build normal "the system's limits"
setup fdlimit

command -v prlimit >/dev/null || skip_all "prlimit (util-linux) is not installed"
write_conf <<EOC
[worker]
poll_interval = 20ms

[queue default]

[handler nap]
exec = $top_srcdir/tests/handlers/sleeper.sh 1
EOC

# ---- a hard limit too low: refuse ----
id=$(jq_ enqueue nap '{}')
out=$( (ulimit -n 30 && exec timeout 20 "$JOBQ" -c "$CONF" work -j 20 --stop-when-empty) 2>&1)
rc=$?
is "$rc" 78 "ulimit -n 30, concurrency 20: the worker refuses to start (exit 78)"
like "$out" "concurrency 20 needs [0-9]+ open files .*open-files limit \(RLIMIT_NOFILE, ulimit -n\) is 30: it allows concurrency [1-9][0-9]* at most" \
	"it names the limit and the concurrency it allows"
is "$(echo "$out" | grep -c .)" 1 "in one line"
allowed=$(echo "$out" | sed -n 's/.*it allows concurrency \([0-9]*\) at most.*/\1/p')
is "$(sql "SELECT CONCAT_WS(' ', attempts, lease_token IS NULL) FROM jobs WHERE id = $id")" "0 1" \
	"job $id was not touched"

# The concurrency it names does run under that limit.
out=$( (ulimit -n 30 && exec timeout 60 "$JOBQ" -c "$CONF" work -j "${allowed:-1}" --stop-when-empty) 2>&1)
is "$?" 0 "at the concurrency it allows (${allowed:-?}) the worker runs and exits 0"
is "$(sql "SELECT COUNT(*) FROM jobs")" 0 "and runs the job"
is "$(echo "$out" | grep -c 'Too many open files')" 0 "without running out of descriptors"

# ---- a soft limit too low, the hard one high enough: raise it ----
for _ in $(seq 20); do jq_ enqueue nap '{}' >/dev/null; done
start=$SECONDS
out=$( (ulimit -S -n 30 && exec timeout 60 "$JOBQ" -c "$CONF" work -j 20 --stop-when-empty) 2>&1)
rc=$?
is "$rc" 0 "ulimit -S -n 30, concurrency 20: the worker runs and exits 0"
is "$(sql "SELECT COUNT(*) FROM jobs")" 0 "all 20 jobs ran"
is "$(sql "SELECT COUNT(*) FROM job_runs WHERE outcome = 'done'")" 21 "each once, done"
is "$(echo "$out" | grep -c 'Too many open files')" 0 "no handler start failed"
ok $((SECONDS - start < 15 ? 0 : 1)) "the 1 s jobs ran side by side ($((SECONDS - start)) s for 20)"

# ---- a handler that cannot start: back off, then recover ----
empty_tables
log=$T/worker.${#BG_PIDS[@]}.log
start_worker -j 1
w=$WORKER_PID
wait_for_sql 30 "SELECT COUNT(*) FROM jobq_workers WHERE pid = $w" 1
ok $? "a worker ($w) is running"
open=$(ls /proc/$w/fd | wc -l)
prlimit --pid $w --nofile=$((open + 1)):
ok $? "its open-files (soft) limit is lowered to $((open + 1)) ($open open)"
id=$(jq_ enqueue nap '{}')
i=0
while ! grep -q 'Too many open files' "$log" && [ $i -lt 300 ]; do
	i=$((i + 1))
	sleep 0.1
done
like "$(cat "$log")" "job $id: pipe: Too many open files; taking no new job for" \
	"the failed start is logged, with the pause that follows"
sleep 3
n=$(grep -c 'Too many open files' "$log")
ok $((n <= 2 ? 0 : 1)) "3 s later it was logged $n time(s), not thousands"
is "$(sql "SELECT CONCAT_WS(' ', attempts <= 1, COUNT(*) > 0) FROM jobs WHERE id = $id")" "1 1" \
	"job $id is still queued, its attempts given back"
prlimit --pid $w --nofile=1024:
wait_for_sql 60 "SELECT COUNT(*) FROM jobs WHERE id = $id" 0
ok $? "once descriptors are available again, job $id runs"
like "$(cat "$log")" "handlers start again" "and the worker says so"
kill -TERM $w
wait_exit 30 $w
is "$?" 0 "the worker stops on SIGTERM with status 0"
is "$(grep -l -e 'Sanitizer' -e 'runtime error:' "$T"/worker.*.log | wc -l)" 0 \
	"no worker log holds a sanitizer report"
finish
