#!/bin/bash
# Hardening defect 1: an outcome larger than the server's
# max_allowed_packet trapped the worker (the server dropped the
# connection, the worker reconnected and resent the same batch forever,
# --max-time ignored).  The property: every statement the worker sends
# fits max_allowed_packet.
#   1. Output limits whose outcome cannot fit (4M + 4M of bytes that each
#      become a three-byte U+FFFD, stderr stored twice) are refused by
#      `jobq check` and `jobq work` with exit 78, naming the handler.
#   2. Outcomes that fit one by one but not together (2M limits,
#      concurrency 5, a ~4 s database stop so that five wait to be
#      written at once) are split into several transactions, nothing cut.
#   3. When the server's max_allowed_packet shrinks under a running
#      worker (the server comes back with 4M), the texts are cut to fit,
#      with a marker, every job gets its outcome, and --max-time ends the
#      worker.
#   4. --max-time ends the worker even when the server never comes back
#      to take an outcome (one lease length after it).
# Parts 2 and 3 stop and start a private server of their own ($T/db2),
# as tests/restart.sh does, in both reservation modes.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
setup outcome_size
TH=$top_srcdir/tests/handlers
G=$T/gate
mkdir -p "$G"

# ---- 1. limits that cannot fit are refused ----
packet=$(sql "SELECT @@max_allowed_packet")
diag "shared server: max_allowed_packet = $packet"
write_conf <<EOC
[worker]
poll_interval = 20ms

[queue default]

[handler flood]
exec = $TH/gate_batch.sh $G 1 4
stdout_limit = 4M
stderr_limit = 4M
EOC
touch "$G/go"
id=$(jq_ enqueue flood '{}')
jq_ check >"$T/check.out" 2>"$T/check.err"
is "$?" 78 "check: 4M + 4M output limits cannot fit a $packet-byte packet: exit 78"
like "$(cat "$T/check.err")" "jobq\.ini:[0-9]+: \[handler flood\]: stdout_limit 4\.0 MiB \+ 2 x stderr_limit 4\.0 MiB can take 36\.[0-9] MiB once stored.* max_allowed_packet of 16\.0 MiB: keep stdout_limit \+ 2 x stderr_limit under [0-9.]+ MiB, or raise max_allowed_packet" \
	"check names the file, line, handler, sizes and the fix"
is "$(wc -l <"$T/check.err")" 1 "on one line"
start_worker --max-time 5
wait_exit 60 "$WORKER_PID"
is "$?" 78 "work refuses the same limits at start with exit 78 (and does not loop)"
like "$(cat "$T/worker.0.log")" "\[handler flood\]: stdout_limit 4\.0 MiB .* max_allowed_packet" \
	"work says why"
is "$(sql "SELECT CONCAT_WS('|', attempts, lease_token IS NULL) FROM jobs WHERE id = $id")" "0|1" \
	"the job was not touched"
sed -i 's/^stdout_limit = 4M/stdout_limit = 1M/; s/^stderr_limit = 4M/stderr_limit = 1M/' "$CONF"
OUT=$(jq_ check 2>&1)
is "$?" 0 "check: 1M + 1M limits fit: exit 0"
like "$OUT" "output limits: every handler's outcome fits max_allowed_packet \($packet bytes\): ok" \
	"check reports the limits fit"

# ---- 2 and 3: a private server whose max_allowed_packet changes ----
db2_use
start_db2() {
	JOBQ_TESTDB_OPTS="--innodb-buffer-pool-size=64M --innodb-log-file-size=96M --max-allowed-packet=$1" \
		"$TESTDB_SCRIPT" start "$DB2"
}
# Waits up to $1 seconds until $2 files match glob $3.
wait_files() {
	local secs=$1 want=$2 glob=$3 i=0
	# shellcheck disable=SC2086
	while [ "$(ls $glob 2>/dev/null | wc -l)" != "$want" ]; do
		i=$((i + 1))
		[ $i -le $((secs * 10)) ] || { waited_out "$1" "wait_files $*"; return 1; }
		sleep 0.1
	done
}
# Connections lost after the worker's first reconnection, in log $1 (the
# server going away is noticed by whatever statement comes first, maybe
# a write; a statement too large for the server would lose it again).
lost_after_restore() {
	awk '/connection restored/ { back = 1 } back && /connection lost/' "$1" | wc -l
}

# Waits up to $1 seconds until file $3 has $2 lines.
wait_lines() {
	local secs=$1 want=$2 file=$3 i=0
	while [ "$(cat "$file" 2>/dev/null | wc -l)" != "$want" ]; do
		i=$((i + 1))
		[ $i -le $((secs * 10)) ] || { waited_out "$1" "wait_lines $*"; return 1; }
		sleep 0.1
	done
}
start_db2 32M || { echo "Bail out! cannot start a second MariaDB in $DB2"; exit 99; }
SOCKET=$("$TESTDB_SCRIPT" socket "$DB2")

# Runs five flood jobs (2 MiB of 0xFF on each stream, exit 1: a retry)
# at concurrency 5 and stops the server while they finish, so that all
# five outcomes wait; starts it again with max_allowed_packet $1.
# Extra worker options follow.
five_outcomes_across_a_stop() {
	local packet_after=$1
	shift
	rm -f "$G"/*
	sql2 "DELETE FROM jobs; DELETE FROM job_runs; DELETE FROM failed_jobs; DELETE FROM jobq_workers"
	for i in 1 2 3 4 5; do jq_ enqueue flood "{\"n\": $i}" >/dev/null; done
	start_worker --concurrency 5 "$@"
	wait_files 60 5 "$G/started.*"
	ok $? "[$mode] five handlers are running"
	"$TESTDB_SCRIPT" stop "$DB2"
	touch "$G/go"
	wait_lines 60 5 "$G/ran"
	ok $? "[$mode] the five handlers finished while the server was down"
	sleep 2 # the worker sees five finished handlers with nowhere to write
	start_db2 "$packet_after"
	ok $? "[$mode] server back after about 4 s, max_allowed_packet $packet_after"
}

for mode in skip-locked update; do
	write_conf <<EOC
[worker]
poll_interval = 20ms
reserve_mode = $mode
reserve_ttl = 60s
backoff = exponential 1h 2h

[queue default]

[handler flood]
exec = $TH/gate_batch.sh $G 1 2
stdout_limit = 2M
stderr_limit = 2M
EOC
	jq_ init >/dev/null
	ok $? "[$mode] schema on the private server"

	# 2. Five ~18 MiB outcomes, a 32 MiB packet: several transactions.
	log=$T/worker.${#BG_PIDS[@]}.log
	five_outcomes_across_a_stop 32M
	wait_for_sql2 120 "SELECT COUNT(*) FROM job_runs WHERE outcome = 'retry'" 5
	ok $? "[$mode] all five outcomes written after the restart"
	is "$(sql2 "SELECT COUNT(*) FROM jobs WHERE attempts = 1 AND lease_token IS NULL AND last_error LIKE '[exit 1] err of job %'")" 5 \
		"[$mode] five jobs released for a retry, last_error '[exit 1] ...'"
	is "$(sql2 "SELECT COUNT(*) FROM jobs WHERE CHAR_LENGTH(last_error) > 2000000")" 5 \
		"[$mode] each last_error keeps its 2 MiB of stderr"
	is "$(sql2 "SELECT COUNT(*) FROM job_runs WHERE CHAR_LENGTH(output) > 2000000 AND CHAR_LENGTH(error) > 2000000")" 5 \
		"[$mode] each run keeps its 2 MiB of stdout and of stderr"
	is "$(sql2 "SELECT COUNT(*) FROM jobs j WHERE last_error LIKE '%cut to fit%' OR EXISTS (SELECT 1 FROM job_runs r WHERE r.job_id = j.id AND (r.output LIKE '%cut to fit%' OR r.error LIKE '%cut to fit%'))")" 0 \
		"[$mode] nothing was cut: the outcomes fit one by one"
	kill -TERM "$WORKER_PID"
	wait_exit 60 "$WORKER_PID"
	is "$?" 0 "[$mode] the worker stops on SIGTERM"
	is "$(lost_after_restore "$log")" 0 "[$mode] once the server was back, no write lost the connection"

	# 3. The server comes back with a 4 MiB packet: the texts are cut.
	log=$T/worker.${#BG_PIDS[@]}.log
	five_outcomes_across_a_stop 4M --max-time 15
	wait_for_sql2 120 "SELECT COUNT(*) FROM job_runs WHERE outcome = 'retry'" 5
	ok $? "[$mode] all five outcomes written to a server with a 4 MiB packet"
	wait_exit 120 "$WORKER_PID"
	is "$?" 0 "[$mode] --max-time ends the worker"
	is "$(sql2 "SELECT @@max_allowed_packet")" 4194304 "[$mode] the server's packet is 4 MiB now"
	is "$(sql2 "SELECT COUNT(*) FROM jobs WHERE attempts = 1 AND lease_token IS NULL AND last_error LIKE '[exit 1] err of job %'")" 5 \
		"[$mode] five jobs released for a retry, last_error starts with the exit and stderr"
	is "$(sql2 "SELECT COUNT(*) FROM jobs j JOIN job_runs r ON r.job_id = j.id WHERE
		OCTET_LENGTH(j.last_error) + OCTET_LENGTH(r.output) + OCTET_LENGTH(r.error) < 4194304
		AND j.last_error LIKE '%bytes cut to fit max_allowed_packet ...]%'
		AND r.error LIKE '%bytes cut to fit max_allowed_packet ...]%'
		AND RIGHT(j.last_error, 1) = _utf8mb4 0xEFBFBD")" 5 \
		"[$mode] each outcome was cut below 4 MiB, with a marker, keeping the end of stderr"
	like "$(cat "$log")" "handler output cut to fit the server's max_allowed_packet \(4194304 bytes\)" \
		"[$mode] the worker says it cut them"
	is "$(lost_after_restore "$log")" 0 "[$mode] once the server was back, no write lost the connection"
	"$TESTDB_SCRIPT" stop "$DB2"
	start_db2 32M
	ok $? "[$mode] server back with a 32 MiB packet"
done

# ---- 4. --max-time ends a worker whose outcome cannot be written ----
# The server goes away for good while a handler finishes: one lease
# length after --max-time the worker stops waiting for it and exits; the
# job is left to come back when its lease expires.
write_conf <<EOC
[worker]
poll_interval = 20ms
reserve_ttl = 4s

[queue default]

[handler flood]
exec = $TH/gate_batch.sh $G 0
EOC
rm -f "$G"/*
sql2 "DELETE FROM jobs; DELETE FROM job_runs; DELETE FROM failed_jobs; DELETE FROM jobq_workers"
id=$(jq_ enqueue flood '{}')
log=$T/worker.${#BG_PIDS[@]}.log
start_worker --max-time 3
wait_files 60 1 "$G/started.*"
ok $? "the handler is running"
"$TESTDB_SCRIPT" stop "$DB2"
touch "$G/go"
wait_exit 90 "$WORKER_PID"
is "$?" 0 "with the server gone, --max-time still ends the worker"
like "$(cat "$log")" "1 outcomes could not be written; those jobs return when their leases expire" \
	"it says the outcome was not written"
start_db2 32M
is "$(sql2 "SELECT COUNT(*) FROM jobs WHERE id = $id AND lease_token IS NOT NULL")" 1 \
	"the job is still there, to come back when its lease expires"
is "$(grep -l -e 'Sanitizer' -e 'runtime error:' "$T"/worker.*.log | wc -l)" 0 \
	"no worker log holds a sanitizer report"
finish
