#!/bin/bash
# The kill matrix's other cells (tests/kill_matrix.sh has the rest): the
# ends a kill itself decides, and a follow-up that joins a group, with
# the worker SIGKILLed before start, while running and between the
# handler's exit and the outcome write, in exec and persistent mode.
#   last  --max-attempts 1, the one job of a group (--on-complete gcb),
#         "lastaft" enqueued --after it.  Killed running or after, its
#         one attempt went with the worker: the next claim buries it ->
#         dead-lettered once, on_dead once, one callback counting it
#         dead, "lastaft" cancelled once, never run.  Held ahead (before),
#         it was never started nor charged -> done once.
#   exp   expire_after = 2s, due 2 s and more before the kill, the one
#         job of a group, "expaft" enqueued --after it.  Held ahead
#         (before) -> expired once, one callback counting it expired,
#         "expaft" cancelled once.  Killed running or after -> its time
#         due counts from when the lease ran out: run again, done once,
#         one callback counting it done, "expaft" run once.
#         Its first run reports progress; the run after the kill, which
#         reports none, does not show it (the first heartbeat clears it).
#   fgrp  a follow-up written on descriptor 3 that joins a group made
#         with on_complete "gcb" -> one "gch" job, done once, and one
#         callback for that group, counting it done.
#   chain "chain1" (its handler's gate never shut: env.G = free), then
#         "chain2" --after it, then "chain3" --after chain2.  Killed
#         running or after, chain2 had started (handed to the worker by
#         chain1's outcome, a waiter of it alone, as it had a free place):
#         it runs again, done once, and chain3 is released once, run
#         once, after it.  Held ahead (before): each done once, in order.
# A second worker (reserve_ttl 1 s) finishes the work once the leases
# run out; no job runs twice at once (killm.py's flocks).
# The cells before and running again with reserve_mode = update (servers
# without SKIP LOCKED): its claim, too, charges only the jobs that start
# at once, the ones held ahead when they start.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
. "$top_srcdir/tests/kill_lib.sh"
setup kill_ends
TH=$top_srcdir/tests/handlers
TYPES="last exp fgrp"

# conf GEN CONCURRENCY AHEAD: the worker's configuration, $T/GEN.ini.
conf() {
	local h
	CONF=$T/$1.ini
	{
		cat <<EOC
[worker]
poll_interval = 20ms
reserve_ttl = 1s
backoff = 1s
concurrency = $2
reserve_ahead = $3
mode = $mode
reserve_mode = $rmode
env.D = $C
env.G = $1

[queue default]

[handler last]
exec = $TH/killm.py $mode
on_dead = $TH/killm.py alert

[handler exp]
exec = $TH/killm.py $mode
expire_after = 2s

[handler chain1]
exec = $TH/killm.py $mode
env.G = free
EOC
		for h in block fgrp gch gcb lastaft expaft chain2 chain3; do
			printf '[handler %s]\nexec = %s/killm.py %s\n' "$h" "$TH" "$mode"
		done
	} | write_conf
}

# The cell's jobs but exp; sets ID (type -> id).
enqueue_all() {
	declare -gA ID=()
	CONF=$T/f1.ini
	[ "$point" != before ] || ID[block]=$(jq_ enqueue --priority -1 block '{}')
	ID[last]=$(echo '{"type": "last", "ref": "l", "max_attempts": 1, "payload": {}}' |
		jq_ enqueue --batch --group "$KEY.l" --on-complete gcb | grep -E '^[0-9]+$')
	ID[fgrp]=$(jq_ enqueue fgrp "{\"act\": \"fgrp\", \"group\": \"$KEY.f\"}")
	ID[lastaft]=$(jq_ enqueue --after "${ID[last]}" lastaft '{}')
	ID[chain1]=$(jq_ enqueue chain1 '{}')
	ID[chain2]=$(jq_ enqueue --after "${ID[chain1]}" chain2 '{}')
	ID[chain3]=$(jq_ enqueue --after "${ID[chain2]}" chain3 '{}')
}

# exp and its waiter, enqueued once the first worker has been started:
# exp's expire_after (2 s) runs from its enqueue, and a sanitizer build
# on a busy machine (CI, two suites side by side) took over 2 s from
# there to the worker's first claim when exp went in before the worker
# started, so exp expired unclaimed.  A worker already polling claims it
# within a poll interval.
enqueue_exp() {
	CONF=$T/f1.ini
	ID[exp]=$(echo '{"type": "exp", "ref": "e", "payload": {"progress": 40}}' |
		jq_ enqueue --batch --group "$KEY.e" --on-complete gcb | grep -E '^[0-9]+$')
	ID[expaft]=$(jq_ enqueue --after "${ID[exp]}" expaft '{}')
	ENQ_AT=$SECONDS
}

# Brings the first worker to the cell's kill point.
reach_point() {
	case $point in
	before)
		wait_log 30 "^start ${ID[block]} " 1
		wait_for_sql 30 "SELECT COUNT(*) FROM jobs WHERE reserved_by LIKE '%:$F1:%' AND type IN ('last', 'exp', 'fgrp')" 3
		ok $? "[$cell] the worker holds the 3 jobs reserved ahead, never started"
		;;
	running | after)
		wait_log 30 "^start [0-9]+ (last|exp|fgrp|chain2) " 4
		ok $? "[$cell] the 4 handlers (chain2's after chain1 ended) have started their jobs and wait"
		wait_for_sql 30 "SELECT progress FROM jobs WHERE id = ${ID[exp]}" 40
		ok $? "[$cell] exp's progress (40) reached the database (a heartbeat took it)"
		;;
	esac
	# exp has been due longer than its expire_after before the kill.
	while [ $((SECONDS - ENQ_AT)) -lt 3 ]; do sleep 0.2; done
	[ "$point" != after ] || hold_rows_and_end
}

# The "after" point: another session locks every job row; the handlers
# are let go and end; the worker's outcome write waits on the lock.
hold_rows_and_end() {
	local n
	lock_jobs
	rm -f "$C/hold.f1.run"
	n=$(grep -c '^start ' "$C/log")
	wait_log 30 '^end ' "$n" &&
		wait_for_sql 30 "SELECT COUNT(*) >= 1 FROM information_schema.INNODB_TRX WHERE trx_state = 'LOCK WAIT'" 1
	ok $? "[$cell] the $n handlers ended; the worker waits on the locked rows to write"
	sleep 0.5 # in exec mode, the worker reaps all three before it writes
}

# Kills the worker (at "after", its connections, then the lock).
kill_first() {
	kill -KILL "$F1"
	wait "$F1" 2>/dev/null
	[ "$point" != after ] || unlock_jobs_killing
}

# Runs of job $1 that ended as $2, then its failed_jobs rows.
ends() {
	sql "SELECT CONCAT_WS(' ', (SELECT COUNT(*) FROM job_runs WHERE job_id = $1 AND outcome = '$2'),
		(SELECT COUNT(*) FROM failed_jobs WHERE id = $1))"
}

# The group $1's callbacks: how many, and the counts of the first.
callback() {
	sql "SELECT CONCAT_WS(' ', COUNT(*), SUM(outcome = 'done'), MIN(JSON_VALUE(payload, '$.total')),
		MIN(JSON_VALUE(payload, '$.done')), MIN(JSON_VALUE(payload, '$.dead')), MIN(JSON_VALUE(payload, '$.expired')))
		FROM job_runs WHERE type = 'gcb' AND JSON_VALUE(payload, '$.name') = '$1'"
}

# While exp runs again after the kill (held at its gate), its row does
# not show the killed run's progress as this run's.
check_progress() {
	wait_log 30 "^start ${ID[exp]} " 2
	ok $? "[$cell] exp runs again after the kill"
	wait_for_sql 10 "SELECT COALESCE(progress, 'none') FROM jobs WHERE id = ${ID[exp]}" none
	ok $? "[$cell] ... and its row no longer shows the killed run's progress ($(sql "SELECT CONCAT_WS(' ', progress,
		progress_note) FROM jobs WHERE id = ${ID[exp]}"))"
}

check_cell() {
	if [ "$point" = before ]; then
		is "$(ends "${ID[last]}" done) $(grep -c '^alert ' "$C/log")" "1 0 0" \
			"[$cell] last, held ahead and never started, was not charged: done once"
		is "$(callback "$KEY.l")" "1 1 1 1 0 0" "[$cell] last's group: one callback, counting it done"
		is "$(ends "${ID[lastaft]}" done)" "1 0" "[$cell] lastaft released once, done once"
		is "$(ends "${ID[exp]}" expired) $(ends "${ID[exp]}" done)" "1 0 0 0" \
			"[$cell] exp, held ahead past its expire_after: expired once, never run"
		is "$(callback "$KEY.e")" "1 1 1 0 0 1" "[$cell] exp's group: one callback, counting it expired"
		is "$(ends "${ID[expaft]}" cancelled) $(grep -c "^start ${ID[expaft]} " "$C/log")" "1 0 0" \
			"[$cell] expaft cancelled once, never run"
	else
		is "$(ends "${ID[last]}" done) $(grep -c "^alert ${ID[last]}$" "$C/log") $(grep -c '^alert ' "$C/log")" "0 1 1 1" \
			"[$cell] last, its one attempt gone with the worker: dead-lettered once, on_dead once"
		is "$(callback "$KEY.l")" "1 1 1 0 1 0" "[$cell] last's group: one callback, counting it dead"
		is "$(ends "${ID[lastaft]}" cancelled) $(grep -c "^start ${ID[lastaft]} " "$C/log")" "1 0 0" \
			"[$cell] lastaft cancelled once, never run"
		is "$(ends "${ID[exp]}" done) $(ends "${ID[exp]}" expired)" "1 0 0 0" \
			"[$cell] exp, its run lost with the worker, is not expired: due again from its lease's end, done once"
		is "$(callback "$KEY.e")" "1 1 1 1 0 0" "[$cell] exp's group: one callback, counting it done"
		is "$(ends "${ID[expaft]}" done)" "1 0" "[$cell] expaft released once, done once"
	fi
	is "$(ends "${ID[fgrp]}" done) $(sql "SELECT COUNT(DISTINCT job_id), SUM(outcome = 'done') FROM job_runs WHERE type = 'gch'")" \
		"1 0 1	1" "[$cell] fgrp done once; its follow-up exists once, done once"
	is "$(callback "$KEY.f")" "1 1 1 1 0 0" "[$cell] the follow-up's group: one callback, counting it done"
	is "$(sql "SELECT CONCAT_WS(' ', COUNT(*), COUNT(DISTINCT job_id), SUM(outcome = 'done')) FROM job_runs
		WHERE type LIKE 'chain_' AND outcome IN ('done', 'dead', 'cancelled', 'expired')")" "3 3 3" \
		"[$cell] chain1, chain2 and chain3 each done once"
	is "$(sql "SELECT COUNT(*) FROM job_runs a JOIN job_runs b ON b.job_id = a.job_id + 1 AND b.job_id IN (${ID[chain2]}, ${ID[chain3]})
		AND a.outcome = 'done' WHERE TIMESTAMPDIFF(MICROSECOND, a.started_at, b.started_at) DIV 1000 >= a.duration_ms")" \
		"$(sql "SELECT COUNT(*) FROM job_runs WHERE job_id IN (${ID[chain2]}, ${ID[chain3]})")" \
		"[$cell] every run of chain2 and chain3 started after the job it waits for was done"
	is "$(grep -c '^overlap ' "$C/log")" 0 "[$cell] no job ran twice at once"
}

# The cells: reserve mode, handler mode, kill point.
CELLS="skip-locked/exec/before skip-locked/exec/running skip-locked/exec/after
	skip-locked/persistent/before skip-locked/persistent/running skip-locked/persistent/after
	update/exec/before update/exec/running update/persistent/before update/persistent/running"
for cell in $CELLS; do
	IFS=/ read -r rmode mode point <<<"$cell"
	[ "$rmode" = update ] || cell=$mode/$point
	C=$T/${cell//\//.}
	KEY=ke.${cell//\//.}
	mkdir -p "$C/locks"
	: >"$C/log"
	empty_tables
	touch "$C/hold.f1.run"
	if [ "$point" = before ]; then
		conf f1 1 16
	else
		conf f1 4 0
	fi
	conf f2 4 auto
	enqueue_all
	CONF=$T/f1.ini
	start_worker
	F1=$WORKER_PID
	enqueue_exp
	reach_point
	kill_first
	[ "$point" = before ] || touch "$C/hold.f2.run"
	CONF=$T/f2.ini
	start_worker
	F2=$WORKER_PID
	[ "$point" = before ] || check_progress
	rm -f "$C/hold.f2.run"
	wait_for_sql 60 "SELECT COUNT(*) FROM jobs" 0
	ok $? "[$cell] a new worker finishes every job"
	kill -TERM "$F2"
	wait_exit 30 "$F2"
	is "$?" 0 "[$cell] ... and stops on SIGTERM with status 0"
	check_cell
	rm -f "$C"/hold.*
done
is "$(grep -l -e 'Sanitizer' -e 'runtime error:' "$T"/worker.*.log | wc -l)" 0 \
	"no worker log holds a sanitizer report"
finish
