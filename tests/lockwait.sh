#!/bin/bash
# Issue 8, defect 4: a row lock held by another session must not stall
# the worker past its leases.  Worker A (reserve_ttl 10 s, --max-time 12)
# runs three jobs: J2 (18 s, its row never locked), J1 (ends as soon as it
# is let go) and J3 (18 s).  Another session then holds FOR UPDATE on the
# rows of J1 and J3 for 20 s, and J1 is let go, so A's outcome write for
# J1 and its lease extensions for J1 and J3 wait on those locks.  Worker B
# polls meanwhile.  Every handler run holds an flock on its job, so a job
# running twice at once is seen.  Both reservation modes.
#
# What must hold: J2's lease goes on being extended (B never takes it, it
# runs once, to its end, and is done); A stops J3's handler before J3's
# lease ends (A cannot extend it), so B, which takes J3 once the lock is
# gone, never runs it alongside A; A's registry row stays fresh; and
# --max-time fires within a few seconds of its time.  Then the same with
# a table lock (metadata lock waits).  Last, reserve_mode = update with
# a due job's row locked: each claim waits no longer than the wait limit.
. "$top_srcdir/tests/lib.sh"
one_build normal "a timing test"
setup lockwait

TH=$top_srcdir/tests/handlers
# The handlers' files are named relative to workdir = $T: an INI line
# holds at most 198 characters, and a build folder's path may be long.
HOLD=20    # seconds the other session holds its row locks
MAXTIME=12 # A's --max-time

now_ms() {
	local t=${EPOCHREALTIME/./}
	echo $((t / 1000))
}

for mode in skip-locked update; do
	empty_tables
	runs=$T/runs.$mode
	locks=$T/locks.$mode
	gate=$T/gate.$mode
	: >"$runs"
	mkdir -p "$locks"
	write_conf <<EOC
[worker]
poll_interval = 100ms
reserve_mode = $mode
reserve_ttl = 10s

[queue default]

[handler excl]
workdir = $T
exec = $TH/exclusive.sh 18 ${runs##*/} ${locks##*/}
max_attempts = 5

[handler gate]
exec = $TH/gate.sh $gate
EOC
	j2=$(jq_ enqueue excl '{}')
	j1=$(jq_ enqueue gate '{}')
	j3=$(jq_ enqueue excl '{}')

	alog=$T/worker.${#BG_PIDS[@]}.log
	a_start=$(now_ms)
	start_worker --concurrency 3 --max-time $MAXTIME
	a=$WORKER_PID
	wait_for_sql 30 "SELECT COUNT(*) FROM jobs WHERE reserved_by LIKE '%:$a:%'" 3
	ok $? "[$mode] worker A ($a) took jobs $j2, $j1 and $j3"
	i=0
	while [ "$(grep -c '^start ' "$runs")" -lt 2 ] && [ $i -lt 300 ]; do
		i=$((i + 1))
		sleep 0.1
	done

	# The other session: lock the rows of J1 and J3, and no other (one
	# primary-key lookup each, READ COMMITTED), hold them, commit.
	sql "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED; BEGIN;
		SELECT id FROM jobs WHERE id = $j1 FOR UPDATE; SELECT id FROM jobs WHERE id = $j3 FOR UPDATE;
		DO SLEEP($HOLD); COMMIT" >/dev/null 2>&1 &
	locker=$!
	BG_PIDS+=("$locker")
	wait_for_sql 30 "SELECT COUNT(*) FROM information_schema.PROCESSLIST
		WHERE DB = '$DB' AND INFO LIKE 'DO SLEEP($HOLD)%'" 1
	ok $? "[$mode] another session holds the rows of $j1 and $j3 for $HOLD s"
	lock_start=$(now_ms)

	blog=$T/worker.${#BG_PIDS[@]}.log
	start_worker --concurrency 3
	b=$WORKER_PID
	: >"$gate" # J1 ends now; A's write of its outcome waits on the lock

	# A stops J3's handler before J3's lease (as the server has it) ends.
	j3_pid=$(sed -n "s/^start $j3 1 //p" "$runs")
	i=0
	while ! flock -n "$locks/$j3.lock" true && [ $i -lt 400 ]; do
		i=$((i + 1))
		sleep 0.05
	done
	gone=$(now_ms)
	expires=$(sql "SELECT ROUND(UNIX_TIMESTAMP(lease_expires_at) * 1000) FROM jobs WHERE id = $j3")
	ok $((gone < expires ? 0 : 1)) \
		"[$mode] A's handler of $j3 (pid $j3_pid) is gone before its lease ends ($((expires - gone)) ms to spare)"
	like "$(cat "$alog")" "job $j3: stopping its handler: its lease could not be extended" \
		"[$mode] A says why it stopped that handler"

	# --max-time: the stop begins on time, lock or no lock.
	i=0
	while ! grep -q -e '--max-time reached' "$alog" && [ $i -lt 600 ]; do
		i=$((i + 1))
		sleep 0.1
	done
	fired=$(($(now_ms) - a_start))
	ok $((fired <= (MAXTIME + 4) * 1000 ? 0 : 1)) \
		"[$mode] --max-time $MAXTIME fired after $fired ms (at most $((MAXTIME + 4)) s)"

	# Well into the lock, A's registry row is fresh: its heartbeats go on.
	while [ $(($(now_ms) - lock_start)) -lt 13000 ]; do sleep 0.2; done
	is "$(sql "SELECT TIMESTAMPDIFF(MICROSECOND, last_seen_at, UTC_TIMESTAMP(6)) < 7000000
		FROM jobq_workers WHERE pid = $a")" 1 "[$mode] 13 s into the lock, A heart-beat within 7 s"
	is "$(sql "SELECT reserved_by LIKE '%:$a:%' FROM jobs WHERE id = $j2")" 1 \
		"[$mode] 13 s into the lock, A still holds $j2"

	wait "$locker"
	wait_exit 60 $a
	is "$?" 0 "[$mode] A exits 0 once its handlers are done"
	kill -TERM $b
	kill -TERM $b 2>/dev/null # a second one: give back what it runs
	wait_exit 60 $b
	is "$?" 0 "[$mode] B stops on SIGTERM with status 0"

	is "$(grep -c '^overlap ' "$runs")" 0 "[$mode] no job ran twice at once"
	is "$(grep -c "^start $j2 " "$runs") $(grep -c "^end $j2 " "$runs")" "1 1" \
		"[$mode] $j2 ran once, to its end"
	is "$(sql "SELECT CONCAT_WS(' ', COUNT(*), MIN(outcome), MIN(attempt), MIN(worker LIKE '%:$a:%'))
		FROM job_runs WHERE job_id = $j2")" "1 done 1 1" "[$mode] $j2: one run, by A, attempt 1, done"
	is "$(grep -c "job $j2: lease lost" "$alog")" 0 "[$mode] A never lost the lease of $j2"
	is "$(sql "SELECT COUNT(*) FROM jobs WHERE id = $j2")" 0 "[$mode] $j2 left the queue"
done

# ---- a table lock: metadata lock waits are bounded too ----
# Another session holds LOCK TABLES jobs WRITE for 20 s (an ALTER TABLE
# would look alike): every statement on jobs waits for a metadata lock,
# by default for up to a year.  The worker (--max-time 8) stops its 30 s
# handler before the lease ends, and --max-time fires within a few
# seconds of its time.
empty_tables
runs=$T/runs.mdl
locks=$T/locks.mdl
: >"$runs"
mkdir -p "$locks"
write_conf <<EOC
[worker]
poll_interval = 100ms
reserve_ttl = 10s

[queue default]

[handler excl]
workdir = $T
exec = $TH/exclusive.sh 30 ${runs##*/} ${locks##*/}
EOC
id=$(jq_ enqueue excl '{}')
log=$T/worker.${#BG_PIDS[@]}.log
start_worker --max-time 8
w=$WORKER_PID
i=0
while ! grep -q "^start $id " "$runs" && [ $i -lt 300 ]; do
	i=$((i + 1))
	sleep 0.1
done
# Lock right after a heartbeat, so that the expiry read here is the last.
first=$(sql "SELECT ROUND(UNIX_TIMESTAMP(lease_expires_at) * 1000) FROM jobs WHERE id = $id")
expires=$first
i=0
while [ "$expires" = "$first" ] && [ $i -lt 300 ]; do
	i=$((i + 1))
	sleep 0.05
	expires=$(sql "SELECT ROUND(UNIX_TIMESTAMP(lease_expires_at) * 1000) FROM jobs WHERE id = $id")
done
sql "LOCK TABLES jobs WRITE; DO SLEEP($HOLD); UNLOCK TABLES" >/dev/null 2>&1 &
locker=$!
BG_PIDS+=("$locker")
ok $((expires > first ? 0 : 1)) "[table lock] jobs is locked $((expires - $(now_ms))) ms before the lease of $id ends"
i=0
while ! flock -n "$locks/$id.lock" true && [ $i -lt 600 ]; do
	i=$((i + 1))
	sleep 0.05
done
gone=$(now_ms)
ok $((gone < expires ? 0 : 1)) "[table lock] the handler is gone before its lease ends ($((expires - gone)) ms to spare)"
i=0
while ! grep -q -e '--max-time reached' "$log" && [ $i -lt 600 ]; do
	i=$((i + 1))
	sleep 0.1
done
started=$(grep -m1 'worker started' "$log" | cut -d' ' -f1)
reached=$(grep -m1 -e '--max-time reached' "$log" | cut -d' ' -f1)
fired=$((($(date -d "${reached:-2000-01-01}" +%s%N) - $(date -d "${started:-2100-01-01}" +%s%N)) / 1000000))
ok $((fired >= 0 && fired <= 12000 ? 0 : 1)) "[table lock] --max-time 8 fired after $fired ms"
wait "$locker"
wait_exit 60 $w
is "$?" 0 "[table lock] the worker exits 0"
is "$(sql "SELECT COUNT(*) FROM jobs WHERE id = $id")" 1 "[table lock] job $id is still queued"

# reserve_mode = update: a row lock another session holds on a due job
# (an application's open transaction) makes each claim that reaches it
# wait, for at most the worker's wait limit (heartbeat 3 s: 1 s), then
# fail with a lock wait timeout; the queue starts nothing until the lock
# goes, then every job (etc/jobq.ini.5, reserve_mode).
empty_tables
write_conf <<EOC
[worker]
poll_interval = 50ms
reserve_mode = update
heartbeat = 3s

[queue default]

[handler t]
exec = /bin/true
EOC
first=$(jq_ enqueue t '{}')
for i in 1 2 3 4 5; do jq_ enqueue t '{}' >/dev/null; done
sql "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED; BEGIN; SELECT id FROM jobs WHERE id = $first FOR UPDATE;
	DO SLEEP(6); COMMIT" >/dev/null 2>&1 &
locker=$!
BG_PIDS+=("$locker")
wait_for_sql 30 "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE DB = '$DB' AND INFO LIKE 'DO SLEEP(6)%'" 1
ok $? "[due row] another session holds the row of due job $first for 6 s"
log=$T/worker.${#BG_PIDS[@]}.log
start_worker
w=$WORKER_PID
sleep 4.5
# A wait ends with the server's lock wait timeout or, when the statement
# timeout comes first, with that.
waits=$(grep -c -E 'reserving jobs: .*(Lock wait timeout|max_statement_time|maximum statement execution time)' "$log")
ok $((waits >= 3 ? 0 : 1)) "[due row] the claims waited the wait limit each, not the server's timeout: $waits ended so in 4.5 s"
is "$(sql "SELECT COUNT(*) FROM job_runs")" 0 "[due row] the queue started nothing while the lock was held"
wait "$locker"
wait_for_sql 30 "SELECT COUNT(*) FROM jobs" 0
ok $? "[due row] once it went, every job ran"
kill -TERM "$w"
wait_exit 30 "$w"
is "$?" 0 "[due row] the worker exits 0"
is "$(grep -l -e 'Sanitizer' -e 'runtime error:' "$T"/worker.*.log | wc -l)" 0 \
	"no worker log holds a sanitizer report"
finish
