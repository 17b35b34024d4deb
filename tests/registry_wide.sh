#!/bin/bash
# Issue 8, defect 10: the registry row lists every job a worker runs, at
# any concurrency.  A worker at concurrency 64 runs 64 jobs whose type
# name has 64 characters (the longest allowed): about 5,500 characters of
# "id:type" that once overflowed jobq_workers.current_jobs, so that every
# heartbeat failed with error 1406 and `jobq workers` showed the worker
# as gone.  Now the heartbeats go through and the row lists all 64 jobs;
# on a server whose packet limit is too small for the list, it is cut.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
setup registry_wide

# A database at schema version 1 (current_jobs VARCHAR(4096)) is upgraded.
schema_v1
like "$(jq_ init)" "schema upgraded from version 1 to [0-9]+" "jobq init upgrades a version 1 schema"
is "$(sql "SELECT DATA_TYPE FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE()
	AND TABLE_NAME = 'jobq_workers' AND COLUMN_NAME = 'current_jobs'")" mediumtext \
	"jobq_workers.current_jobs is MEDIUMTEXT"

TYPE=$(printf 'wide%.0s' $(seq 16)) # 64 characters
N=64
write_conf <<EOC
[worker]
poll_interval = 50ms
heartbeat = 300ms
reserve_ttl = 10s

[queue default]

[handler $TYPE]
exec = $top_srcdir/tests/handlers/sleeper.sh 60
EOC
is "${#TYPE}" 64 "the type name has 64 characters"
for _ in $(seq $N); do
	echo "{\"type\": \"$TYPE\", \"payload\": {}}"
done >"$T/batch"
jq_ enqueue --batch <"$T/batch" >/dev/null
is "$(sql "SELECT COUNT(*) FROM jobs")" $N "$N jobs of that type are queued"

start_worker --concurrency $N
w=$WORKER_PID
wait_for_sql 60 "SELECT COUNT(*) FROM jobs WHERE reserved_by LIKE '%:$w:%'" $N
ok $? "the worker took all $N"

# Heartbeats every 300 ms: a worker not seen for 3 of them and 1 s is
# gone.  Past that, it is alive, and its row lists all 64 jobs.
sleep 2.5
out=$(jq_ workers)
like "$out" ":$w:[0-9a-f]+ +alive +$N " "jobq workers shows it alive at concurrency $N"
is "$(jq_ workers --json | grep -c "\"state\":[[:space:]]*\"alive\"")" 1 "and so does jobq workers --json"
want=$(sql "SELECT GROUP_CONCAT(id ORDER BY id) FROM jobs")
listed() {
	sql "SELECT current_jobs FROM jobq_workers WHERE pid = $w" | tr ',' '\n' | cut -d: -f1 | sort -n |
		paste -sd, -
}
i=0
while [ "$(listed)" != "$want" ] && [ $i -lt 100 ]; do
	i=$((i + 1))
	sleep 0.1
done
is "$(listed)" "$want" "the registry row lists all $N job ids"
like "$(sql "SELECT current_jobs FROM jobq_workers WHERE pid = $w")" "^[0-9]+:$TYPE(,[0-9]+:$TYPE){$((N - 1))}\$" \
	"each as id:type"
is "$(grep -c -e 'heartbeat' -e '1406' "$T/worker.0.log")" 0 "no heartbeat failed"

# Two SIGTERMs: the handlers are terminated and the jobs given back.
kill -TERM $w
sleep 0.2
kill -TERM $w
wait_exit 60 $w
is "$?" 0 "the worker stops on a second SIGTERM with status 0"
is "$(sql "SELECT COUNT(*) FROM jobs WHERE lease_token IS NULL AND attempts = 0")" $N "all $N jobs were given back"
# ---- a server with a small max_allowed_packet: the list is cut ----
# The list must never make the heartbeat fail: past a quarter of the
# server's packet limit it is cut after a whole entry, with "+N more".
# jobq refuses to start against a server whose packet cannot hold an
# outcome (see outcome_size.sh), so the limit shrinks under a running
# worker, as an operator's SET GLOBAL would: the worker reads it again
# when it reconnects.  A private server keeps the shared one as it is.
DB2=$T/db2
trap '"$TESTDB_SCRIPT" stop "$DB2" >/dev/null 2>&1; cleanup' EXIT
JOBQ_TESTDB_OPTS="--innodb-buffer-pool-size=64M --innodb-log-file-size=48M" \
	"$TESTDB_SCRIPT" start "$DB2" || { echo "Bail out! cannot start a second MariaDB in $DB2"; exit 99; }
SOCKET=$("$TESTDB_SCRIPT" socket "$DB2")
sql2() { "$TESTDB_SCRIPT" client "$DB2" -N -B "$DB" -e "$*"; }
write_conf <<EOC
[worker]
poll_interval = 50ms
heartbeat = 300ms
reserve_ttl = 10s

[queue default]

[handler $TYPE]
exec = $top_srcdir/tests/handlers/sleeper.sh 60
EOC
jq_ init >/dev/null
jq_ enqueue --batch <"$T/batch" >/dev/null
log=$T/worker.${#BG_PIDS[@]}.log
start_worker --concurrency $N
w=$WORKER_PID
i=0
while [ "$(sql2 "SELECT COUNT(*) FROM jobs WHERE lease_token IS NOT NULL")" != $N ] && [ $i -lt 600 ]; do
	i=$((i + 1))
	sleep 0.1
done
"$TESTDB_SCRIPT" client "$DB2" -N -B -e "SET GLOBAL max_allowed_packet = 16384"
for id in $(sql2 "SELECT id FROM information_schema.PROCESSLIST WHERE db = '$DB' AND id <> CONNECTION_ID()"); do
	sql2 "KILL CONNECTION $id" 2>/dev/null
done
is "$(sql2 "SELECT @@global.max_allowed_packet")" 16384 "the server's packet limit is now 16 KiB"
i=0
while [ "$(sql2 "SELECT current_jobs LIKE '% more' FROM jobq_workers WHERE pid = $w")" != 1 ] && [ $i -lt 300 ]; do
	i=$((i + 1))
	sleep 0.1
done
current=$(sql2 "SELECT current_jobs FROM jobq_workers WHERE pid = $w")
like "$current" "^[0-9]+:$TYPE(,[0-9]+:$TYPE)* \+[0-9]+ more\$" "the list is cut after a whole entry, with +N more"
shown=$(echo "${current% +*}" | tr ',' '\n' | grep -c .)
more=$(echo "$current" | sed -n 's/.* +\([0-9]*\) more$/\1/p')
is "$((shown + more))" $N "the entries shown and the count left out make $N ($shown + $more)"
ok $((${#current} <= 4096 ? 0 : 1)) "and it fits in a quarter of the packet (${#current} characters)"
sleep 2.5
like "$(jq_ workers)" ":$w:[0-9a-f]+ +alive +$N " "jobq workers shows the worker alive"
# (The connection the test killed is logged as lost, once.)
is "$(grep -e 'heartbeat' -e 'error' "$log" | grep -vc 'connection lost')" 0 "no heartbeat failed"
kill -TERM $w
sleep 0.2
kill -TERM $w
wait_exit 60 $w
is "$?" 0 "the worker stops on a second SIGTERM with status 0"

is "$(grep -l -e 'Sanitizer' -e 'runtime error:' "$T"/worker.*.log | wc -l)" 0 \
	"no worker log holds a sanitizer report"
finish
