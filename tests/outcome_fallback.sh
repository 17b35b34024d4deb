#!/bin/bash
# Hardening defect 2: one outcome the server refused threw away the
# whole batch ("writing 3 outcomes failed ... those jobs return when
# their leases expire"): after a TRUNCATE jobs restarted the ids, a
# dead-letter insert hit an older failed_jobs row with the same id, two
# jobs that had succeeded ran again and the bad one looped forever with
# no run record.  The property: a permanent error in one job's outcome
# never costs another job its outcome, and the refused job still reaches
# a final, visible state.
#   1. The id clash, reproduced as it happens: a first life dead-letters
#      jobs 2 and 4, TRUNCATE jobs, a second life's jobs 1 (done), 2
#      (dead) and 3 (done) finish together.  1 and 3 are done once, 2 is
#      dead-lettered under its id with a run record, the older dead job 2
#      is kept under a new id (past every dead-letter id: the old 4 is
#      left alone), and the next job's id clashes with nothing.
#   2. Other refusals (a trigger that refuses some run rows): the batch
#      is written one by one, the refused outcome without what the server
#      objects to -- without the handler's output, or without its run
#      row -- and the worker says so.
#   3. A write that loses the connection every time (a trigger stalls it,
#      a watcher kills the connection): it is written alone, so the
#      others get theirs, and after three losses without the handler's
#      output; it is never resent as it was forever.
# The outcomes are lined up by stopping the worker (SIGSTOP) while the
# handlers finish, so that it finds all three at once (one batch).  Both
# reservation modes.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
setup outcome_fallback
TH=$top_srcdir/tests/handlers
G=$T/gate
mkdir -p "$G"

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

# Waits up to $1 seconds until every child of process $2 has exited
# (is a zombie its parent has not reaped yet).
wait_children_done() {
	local secs=$1 pid=$2 i=0
	while ps -o stat= --ppid "$pid" | grep -qv '^Z'; do
		i=$((i + 1))
		[ $i -le $((secs * 10)) ] || { waited_out "$1" "wait_children_done $*"; return 1; }
		sleep 0.1
	done
}

# Runs the ${1:-3} queued jobs at once so that their outcomes are
# written as one batch: the worker is stopped while the handlers finish.
run_three_together() {
	local n=${1:-3}
	rm -f "$G"/*
	log=$T/worker.${#BG_PIDS[@]}.log
	start_worker --concurrency "$n" --stop-when-empty
	wait_files 60 "$n" "$G/started.*"
	ok $? "[$mode] $n handlers are running"
	kill -STOP "$WORKER_PID"
	touch "$G/go"
	wait_children_done 60 "$WORKER_PID"
	ok $? "[$mode] all $n finished while the worker was stopped"
	kill -CONT "$WORKER_PID"
	wait_exit 60 "$WORKER_PID"
	is "$?" 0 "[$mode] the worker empties the queue and exits 0"
}

# Runs since run id $1 of job $2: "outcome|exit_status" lines.
runs_of() {
	sql "SELECT CONCAT_WS('|', outcome, exit_status) FROM job_runs WHERE id > $1 AND job_id = $2 ORDER BY id"
}

for mode in skip-locked update; do
	write_conf <<EOC
[worker]
poll_interval = 20ms
reserve_mode = $mode
backoff = exponential 1h 2h

[queue default]

[handler ok]
exec = $TH/gate_batch.sh $G 0

[handler dead]
exec = $TH/gate_batch.sh $G 65

[handler soft]
exec = $TH/gate_batch.sh $G 1
EOC

	# ---- 1. the dead-letter id clash ----
	empty_tables
	sql "TRUNCATE jobs"
	for t in ok dead ok dead; do jq_ enqueue $t '{"life": 1}' >/dev/null; done
	touch "$G/go"
	jq_ work --stop-when-empty 2>"$T/life1.log"
	is "$(sql "SELECT GROUP_CONCAT(id ORDER BY id) FROM failed_jobs")" "2,4" \
		"[$mode] first life: jobs 2 and 4 dead-lettered"
	sql "TRUNCATE jobs"
	sql "UPDATE failed_jobs SET failed_at = '2026-01-02 03:04:05'"
	maxrun=$(sql "SELECT MAX(id) FROM job_runs")
	a=$(jq_ enqueue ok '{"life": 2}')
	b=$(jq_ enqueue dead '{"life": 2}')
	c=$(jq_ enqueue ok '{"life": 2}')
	is "$a,$b,$c" "1,2,3" "[$mode] after TRUNCATE jobs the ids start again: job 2 exists in failed_jobs"
	run_three_together
	is "$(sql "SELECT COUNT(*) FROM jobs")" 0 "[$mode] nothing is left in jobs"
	is "$(runs_of "$maxrun" "$a")/$(runs_of "$maxrun" "$c")" "done|exit 0/done|exit 0" \
		"[$mode] jobs 1 and 3 are done, one run each"
	is "$(sort -n "$G/ran" | tr '\n' ' ')" "1 2 3 " "[$mode] each handler ran once"
	is "$(runs_of "$maxrun" "$b")" "dead|exit 65" "[$mode] job 2 has its run record: dead, exit 65"
	is "$(sql "SELECT CONCAT_WS('|', payload, exit_status, reason, TRIM(TRAILING CHAR(10) FROM exception)) FROM failed_jobs WHERE id = 2")" \
		'{"life": 2}|exit 65|exit 65 is a permanent failure|err of job 2' \
		"[$mode] job 2 is dead-lettered under its own id, with its own error"
	moved=$(sql "SELECT id FROM failed_jobs WHERE payload = '{\"life\": 1}' AND reason LIKE 'was dead job 2 %'")
	ok $([ -n "$moved" ] && [ "$moved" -gt 4 ]; echo $?) \
		"[$mode] the older dead job 2 is kept, under a new id past every dead-letter id (got '$moved')"
	like "$(sql "SELECT CONCAT_WS('|', type, failed_at, exit_status, reason) FROM failed_jobs WHERE id = '$moved'")" \
		"^dead\|2026-01-02 03:04:05\.000000\|exit 65\|was dead job 2 until its id was reused by a newer job; exit 65 is a permanent failure$" \
		"[$mode] its evidence is unchanged and its reason says what it was"
	is "$(sql "SELECT CONCAT_WS('|', payload, failed_at) FROM failed_jobs WHERE id = 4")" \
		'{"life": 1}|2026-01-02 03:04:05.000000' "[$mode] the older dead job 4 is untouched"
	like "$(cat "$log")" "job 2: failed_jobs already held an older dead job 2 \(failed at 2026-01-02 03:04:05\.000000 UTC, before the id was reused\); it is kept as dead job $moved" \
		"[$mode] the worker says so"
	like "$(cat "$log")" "job 1: written on its own: the transaction it shared with 2 other outcomes was refused" \
		"[$mode] the three outcomes were one batch, written one by one after the refusal"
	next=$(jq_ enqueue ok '{"life": 3}')
	ok $([ "$next" -gt "$moved" ]; echo $?) "[$mode] the next job's id ($next) is past every dead-letter id"
	is "$(grep -c 'outcomes failed' "$log")" 0 "[$mode] no batch of outcomes was thrown away"

	# ---- 2. a trigger refuses some run rows ----
	empty_tables
	x=$(jq_ enqueue ok '{}')
	y=$(jq_ enqueue soft '{}')
	z=$(jq_ enqueue dead '{}')
	maxrun=$(sql "SELECT COALESCE(MAX(id), 0) FROM job_runs")
	"$TESTDB_SCRIPT" client "$JOBQ_TESTDB" "$DB" <<EOS
DELIMITER //
CREATE TRIGGER refuse_runs BEFORE INSERT ON job_runs FOR EACH ROW
BEGIN
	IF NEW.job_id = $y AND NEW.output IS NOT NULL THEN
		SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'this test refuses run rows with output';
	END IF;
	IF NEW.job_id = $z THEN
		SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'this test refuses every run row';
	END IF;
END //
DELIMITER ;
EOS
	run_three_together
	sql "DROP TRIGGER refuse_runs"
	is "$(runs_of "$maxrun" "$x")" "done|exit 0" "[$mode] the good job is done, with its run"
	is "$(sql "SELECT CONCAT_WS('|', attempts, lease_token IS NULL, last_error) FROM jobs WHERE id = $y")" \
		"1|1|(not stored: the server refused this outcome with its texts: statement 3 of a batch: this test refuses run rows with output (error 1644))" \
		"[$mode] the job whose run output is refused is retried, its last_error says why the text is missing"
	is "$(sql "SELECT CONCAT_WS('|', outcome, exit_status, output IS NULL, error LIKE '(not stored: %') FROM job_runs WHERE id > $maxrun AND job_id = $y")" \
		"retry|exit 1|1|1" "[$mode] and it has a run record, without the output"
	is "$(sql "SELECT CONCAT_WS('|', exit_status, TRIM(TRAILING CHAR(10) FROM exception)) FROM failed_jobs WHERE id = $z")" \
		"exit 65|err of job $z" "[$mode] the job whose run row is refused is dead-lettered with its error"
	is "$(runs_of "$maxrun" "$z")" "" "[$mode] (without a run record)"
	like "$(cat "$log")" "job $y: written without the handler's output, which the server refused: statement 3 of a batch: this test refuses run rows with output" \
		"[$mode] the worker says what it left out, and why"
	like "$(cat "$log")" "job $z: written without its run record, which the server refused: statement 4 of a batch: this test refuses every run row" \
		"[$mode] for both"
	like "$(cat "$log")" "job $x: written on its own: the transaction it shared with 2 other outcomes was refused" \
		"[$mode] the three outcomes were one batch"
	is "$(sql "SELECT COUNT(*) FROM jobs WHERE lease_token IS NOT NULL")" 0 "[$mode] no job is left reserved"

	# ---- 3. a write that keeps losing the connection ----
	# A trigger holds the run row of y (with output) in a long sleep and
	# a watcher kills the connection that sleeps (the process list shows
	# the trigger's statement): to the worker, the server went away under
	# that write, every time.
	empty_tables
	x=$(jq_ enqueue ok '{}')
	y=$(jq_ enqueue soft '{}')
	maxrun=$(sql "SELECT COALESCE(MAX(id), 0) FROM job_runs")
	"$TESTDB_SCRIPT" client "$JOBQ_TESTDB" "$DB" <<EOS
DELIMITER //
CREATE TRIGGER stall_runs BEFORE INSERT ON job_runs FOR EACH ROW
BEGIN
	IF NEW.job_id = $y AND NEW.output IS NOT NULL THEN
		DO SLEEP(60);
	END IF;
END //
DELIMITER ;
EOS
	sleep_killer_start
	run_three_together 2
	sleep_killer_stop
	sql "DROP TRIGGER stall_runs"
	kills=$(cat "$T/kills" 2>/dev/null | wc -l)
	ok $([ "$kills" -ge 3 ]; echo $?) "[$mode] the write of y's outcome lost the connection $kills times"
	is "$(runs_of "$maxrun" "$x")" "done|exit 0" "[$mode] the other job of the batch is done, with its run"
	is "$(sql "SELECT CONCAT_WS('|', attempts, lease_token IS NULL, last_error) FROM jobs WHERE id = $y")" \
		"1|1|(not stored: writing this outcome with the handler's output kept losing the connection)" \
		"[$mode] y is retried; its last_error says why its text is missing"
	is "$(sql "SELECT CONCAT_WS('|', outcome, exit_status, output IS NULL) FROM job_runs WHERE id > $maxrun AND job_id = $y")" \
		"retry|exit 1|1" "[$mode] and it has a run record, without the output"
	like "$(cat "$log")" "job $y: written without the handler's output: writing it with the output lost the connection 3 times" \
		"[$mode] the worker says so"
	is "$(sort -n "$G/ran" | tr '\n' ' ')" "$x $y " "[$mode] each handler ran once"
done
is "$(grep -l -e 'Sanitizer' -e 'runtime error:' "$T"/worker.*.log | wc -l)" 0 \
	"no worker log holds a sanitizer report"
finish
