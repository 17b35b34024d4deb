#!/bin/bash
# Issue 8, defect 4 (the other half): the database stops answering
# altogether -- its server frozen with SIGSTOP for 30 s, as a network
# partition would look -- while a worker (reserve_ttl 20 s, --max-time 15)
# runs a 60 s job.  Its statements hang until the connection's read
# timeout, which the worker keeps just above its wait limit (not the 60 s
# of read_timeout); it notices the loss within seconds, its --max-time
# fires on time, and since it cannot extend the lease it stops the
# handler before the lease (as the server last recorded it) ends.  The
# shared server must keep answering the other tests, so this one runs a
# private server of its own ($T/db2).
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
setup dbstall

DB2=$T/db2
FREEZE=30
MAXTIME=15

server_pid() { cat "$DB2/mariadbd.pid"; }
stop_db2() {
	kill -CONT "$(server_pid)" 2>/dev/null
	"$TESTDB_SCRIPT" stop "$DB2" >/dev/null 2>&1
}
trap 'stop_db2; cleanup' EXIT
sql2() {
	"$TESTDB_SCRIPT" client "$DB2" -N -B "$DB" -e "SET time_zone = '+00:00'; $*"
}
now_ms() {
	local t=${EPOCHREALTIME/./}
	echo $((t / 1000))
}

# jobq-testdb itself: its usage on --help, and a status of a folder
# that is not there says "not answering" without making the folder.
usage=$("$TESTDB_SCRIPT" --help)
is "$?" "0" "jobq-testdb --help exits 0"
like "$usage" "^usage: jobq-testdb start" "and prints its usage"
"$TESTDB_SCRIPT" status "$DB2"
is "$?" "1" "jobq-testdb status of a folder that is not there exits 1"
is "$([ -e "$DB2" ] && echo made || echo absent)" "absent" "and does not make the folder"
like "$("$TESTDB_SCRIPT" frob "$DB2" 2>&1)" "unknown command 'frob'" "an unknown command is named"

JOBQ_TESTDB_OPTS="--innodb-buffer-pool-size=64M --innodb-log-file-size=48M" \
	"$TESTDB_SCRIPT" start "$DB2" || { echo "Bail out! cannot start a second MariaDB in $DB2"; exit 99; }
SOCKET=$("$TESTDB_SCRIPT" socket "$DB2")
runs=$T/runs
mkdir -p "$T/locks"
write_conf <<EOC
[worker]
poll_interval = 100ms
reserve_ttl = 20s

[queue default]

[handler excl]
workdir = $T
exec = $top_srcdir/tests/handlers/exclusive.sh 60 runs locks
EOC
jq_ init >/dev/null
ok $? "schema on the private server"
id=$(jq_ enqueue excl '{}')

log=$T/worker.${#BG_PIDS[@]}.log
start_worker --max-time $MAXTIME
w=$WORKER_PID
i=0
while ! grep -q "^start $id " "$runs" 2>/dev/null && [ $i -lt 300 ]; do
	i=$((i + 1))
	sleep 0.1
done
ok $((i < 300 ? 0 : 1)) "the worker ($w) runs job $id"

# Freeze the server right after a heartbeat extended the lease, so that
# the expiry read here is the last one the server records.
first=$(sql2 "SELECT ROUND(UNIX_TIMESTAMP(lease_expires_at) * 1000) FROM jobs WHERE id = $id")
expires=$first
i=0
while [ "$expires" = "$first" ] && [ $i -lt 300 ]; do
	i=$((i + 1))
	sleep 0.05
	expires=$(sql2 "SELECT ROUND(UNIX_TIMESTAMP(lease_expires_at) * 1000) FROM jobs WHERE id = $id")
done
kill -STOP "$(server_pid)"
frozen=$(now_ms)
ok $((expires > first ? 0 : 1)) "a heartbeat extended the lease; the server is frozen $((expires - frozen)) ms before it ends"

i=0
while ! grep -q 'database connection lost' "$log" && [ $i -lt 300 ]; do
	i=$((i + 1))
	sleep 0.1
done
lost=$(($(now_ms) - frozen))
ok $((lost < 15000 ? 0 : 1)) "the worker notices the loss within 15 s ($lost ms)"

i=0
while ! flock -n "$T/locks/$id.lock" true && [ $i -lt 600 ]; do
	i=$((i + 1))
	sleep 0.05
done
gone=$(now_ms)
ok $((gone < expires ? 0 : 1)) "its handler is gone before the lease ends ($((expires - gone)) ms to spare)"
like "$(cat "$log")" "job $id: stopping its handler: its lease could not be extended" "the worker says why"

# When the stop began, by the worker's own log: from its first line to
# the one that says --max-time was reached.
log_ms() {
	local t
	t=$(grep -m1 -e "$1" "$log" | cut -d' ' -f1)
	[ -n "$t" ] && echo $(($(date -d "$t" +%s%N) / 1000000))
}
i=0
while ! grep -q -e '--max-time reached' "$log" && [ $i -lt 600 ]; do
	i=$((i + 1))
	sleep 0.1
done
started=$(log_ms 'worker started')
fired=$(($(log_ms '--max-time reached') - ${started:-0}))
ok $((fired <= (MAXTIME + 5) * 1000 ? 0 : 1)) "--max-time $MAXTIME fired after $fired ms, the server frozen"

# Stopping, with nothing left to run, the worker waits reserve_ttl for
# the server to take its last outcome, then gives up and exits.
while [ $(($(now_ms) - frozen)) -lt $((FREEZE * 1000)) ]; do sleep 0.2; done
kill -CONT "$(server_pid)"
wait_exit 90 $w
is "$?" 0 "the worker exits 0"
is "$(sql2 "SELECT COUNT(*) FROM jobs WHERE id = $id")" 1 "job $id is still queued: nothing was lost"
is "$(grep -c '^overlap ' "$runs")" 0 "no run overlapped another"
is "$(grep -l -e 'Sanitizer' -e 'runtime error:' "$T"/worker.*.log | wc -l)" 0 \
	"no worker log holds a sanitizer report"
finish
