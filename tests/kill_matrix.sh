#!/bin/bash
# The kill matrix: every feature that acts at a job's end, with the worker
# SIGKILLed at each step of a job's life, in exec and in persistent mode.
# A crash may cost time, never a job, a second concurrent run, a second
# follow-up or a broken limit.
#
# Features, each a job type of its own, all in every cell (one worker,
# "F", runs the first seven; another, "L", the two limited types, since
# reserving ahead is refused beside max_running and rate):
#   follow  a follow-up written on descriptor 3,     -> one "child" job, and
#           and one that waits for it (fd 3 "after")    one "child2" run once,
#                                                       after it
#   at      a follow-up with "at" (an hour ahead)    -> one "later" job, due then
#   retry   retry_after 1s on its first two ends     -> no run sooner after a retry
#   succ    on_success = next                        -> one "next" job
#   dead    exit 65, on_dead                         -> dead-lettered, one alert
#   uniq    enqueued with --unique-key               -> the key blocks duplicates
#                                                       until the job is done
#   ckpt    a checkpoint written as it starts        -> a run after the kill
#                                                       resumes from it (running,
#                                                       after: it reached the
#                                                       database before the kill)
#   canc    `jobq cancel` just before the kill       -> cancelled once, never
#           (after: while the rows are locked)          done: the handler's exit
#                                                       0 never committed
#   grp     the one job of a group with              -> one "gcb" callback,
#           --on-complete gcb, and a job "aft"          counting it done; "aft"
#           enqueued --after it (waiting: not           released once, run once,
#           reserved, not started before the kill)      after it
#   lim     max_running = 2 (3 jobs)                 -> never 3 at once
#   rt      rate = 2/2s (3 jobs)                     -> never 3 claims in 2 s
# Kill points (cells), each in exec and persistent mode:
#   before  F runs one job at concurrency 1 and holds the features' jobs
#           reserved ahead, never started; L's handlers are started but
#           wait before reading anything (their request unread);
#   running every handler has started its job and waits;
#   after   every handler has ended (its follow-up and retry_after written,
#           its exit or status line given) while another session holds the
#           jobs' rows, so the workers' outcome writes wait on the lock;
#           the workers are killed and their connections too (the write
#           never happens), then the lock is let go.
# After the kill a fresh pair of workers (reserve_ttl 1 s, the least
# allowed; 3 s for L's: see conf_l) finishes the work, started at once, while the killed
# workers' handlers are still being stopped by their guards.  The
# handlers catch SIGTERM and go on (as one that cleans up may), so each
# lives until its guard's SIGKILL.  Each cell checks: the killed
# workers' handlers are gone within 3 s, and each that held a job before
# that job's lease ended (else its next run overlaps it: the guard used
# to wait a fixed 1 s, past a 1 s lease, before its SIGKILL); the unique
# key still blocks a duplicate;
# nothing is lost (every job done once, the dead one dead-lettered once,
# only the "later" job left); no job ran twice at once and no type ran
# over max_running (flocks the handlers hold: tests/handlers/killm.py);
# follow-ups and on_success jobs exist exactly once; a retry waited its
# retry_after; on_dead ran once; the rate held over the killed claims
# too; and the jobs held ahead, never started, were charged no attempt.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
. "$top_srcdir/tests/kill_lib.sh"
setup kill_matrix
TH=$top_srcdir/tests/handlers
F_TYPES="follow at retry succ dead uniq ckpt canc grp"
NF=$(wc -w <<<"$F_TYPES")
F_RE=${F_TYPES// /|}

# Whether process $1 is alive (not dead, and not a zombie); builtins
# only, as it is polled.
alive() {
	local st
	{ read -r st <"/proc/$1/stat"; } 2>/dev/null || return 1
	st=${st##*) }
	st=${st%% *}
	[ "$st" != Z ] && [ "$st" != X ]
}

now_ms() {
	local t=${EPOCHREALTIME/./}
	echo $((t / 1000))
}

# conf_f GEN CONCURRENCY AHEAD: worker F's configuration, $T/fGEN.ini.
conf_f() {
	local h
	CONF=$T/f$1.ini
	{
		cat <<EOC
[worker]
poll_interval = 20ms
reserve_ttl = 1s
backoff = 1s
concurrency = $2
reserve_ahead = $3
mode = $mode
max_attempts = 10
env.D = $C
env.G = f$1

[queue default]

[handler succ]
exec = $TH/killm.py $mode
on_success = next

[handler dead]
exec = $TH/killm.py $mode
on_dead = $TH/killm.py alert
EOC
		for h in block follow at retry uniq ckpt canc grp aft gcb child child2 next later; do
			printf '[handler %s]\nexec = %s/killm.py %s\n' "$h" "$TH" "$mode"
		done
	} | write_conf
}

# conf_l GEN: worker L's configuration, $T/lGEN.ini.  The killed one's
# leases are 1 s, so that its jobs come back soon.  Its successor's are
# 3 s: max_running counts live leases, and on a machine loaded with both
# builds' suites a 1 s lease of a handler still running could lapse
# while one database call waited (the wait limit is at least 1 s), and
# let a third lim job start beside it; that is a lapse, not the kill
# this test is about.
conf_l() {
	CONF=$T/l$1.ini
	write_conf <<EOC
[worker]
poll_interval = 20ms
reserve_ttl = $([ "$1" = 1 ] && echo 1s || echo 3s)
backoff = 1s
concurrency = 6
mode = $mode
max_attempts = 10
env.D = $C
env.G = l$1

[queue lim]

[handler lim]
exec = $TH/killm.py $mode
queue = lim
max_running = 2

[handler rt]
exec = $TH/killm.py $mode
queue = lim
rate = 2/2s
EOC
}

# Enqueues the cell's jobs; sets the id variables and ALL (every id).
enqueue_all() {
	local t
	declare -gA ID=()
	CONF=$T/f1.ini
	[ "$point" != before ] || ID[block]=$(jq_ enqueue --priority -1 block '{}')
	for t in $F_TYPES; do
		case $t in
		at) ID[at]=$(jq_ enqueue at "{\"act\": \"at\", \"at\": \"$AT\"}") ;;
		retry) ID[retry]=$(jq_ enqueue retry '{"act": "retry", "after": "1s"}') ;;
		uniq) ID[uniq]=$(jq_ enqueue --unique-key "$KEY" uniq '{}') ;;
		# A "ref" makes the batch one transaction that prints its ids.
		grp) ID[grp]=$(echo '{"type": "grp", "ref": "g", "payload": {"act": "grp"}}' |
			jq_ enqueue --batch --group "$KEY" --on-complete gcb | grep -E '^[0-9]+$') ;;
		*) ID[$t]=$(jq_ enqueue "$t" "{\"act\": \"$t\"}") ;;
		esac
	done
	ID[aft]=$(jq_ enqueue --after "${ID[grp]}" aft '{}')
	CONF=$T/l1.ini
	for t in 1 2 3; do
		ID[lim$t]=$(jq_ enqueue lim '{"slots": 2}')
		ID[rt$t]=$(jq_ enqueue rt '{}')
	done
	ALL=$(printf '%s,' "${ID[@]}")
	ALL=${ALL%,}
}

# Brings the first pair of workers to the cell's kill point; says so.
reach_point() {
	local got
	case $point in
	before)
		wait_log 30 "^start ${ID[block]} " 1
		wait_for_sql 30 "SELECT COUNT(*) FROM jobs WHERE reserved_by LIKE '%:$F1:%' AND type <> 'block'" "$NF"
		wait_for_sql 30 "SELECT COUNT(*) >= 4 FROM jobs WHERE reserved_by LIKE '%:$L1:%'" 1
		wait_log 30 "^boot [0-9]+ l1 " 4
		sleep 0.3 # a start that would wrongly follow shows in the log
		got=$(sql "SELECT CONCAT_WS(' ', SUM(reserved_by LIKE '%:$F1:%' AND type <> 'block'),
			SUM(reserved_by LIKE '%:$L1:%' AND type = 'lim'), SUM(reserved_by LIKE '%:$L1:%' AND type = 'rt') >= 2) FROM jobs")
		got="$got $(($(grep -c '^boot [0-9]* l1 ' "$C/log") >= 4)) $(grep -c -E "^start [0-9]+ ($F_RE|lim|rt) " "$C/log")"
		is "$got" "$NF 2 1 1 0" \
			"[$cell] F holds the $NF features' jobs reserved ahead; L holds 2 lim and 2 or 3 rt jobs, their handlers started but waiting; no job started"
		;;
	running | after)
		wait_log 30 "^start [0-9]+ ($F_RE) " "$NF" &&
			wait_log 30 "^start [0-9]+ lim " 2 &&
			wait_log 30 "^start [0-9]+ rt " 2
		ok $? "[$cell] every feature's handler has started its job (2 lim, 2 or 3 rt) and waits" \
			"($(grep -c -E "^start [0-9]+ ($F_RE) " "$C/log") of the $NF features')"
		wait_for_sql 30 "SELECT checkpoint IS NOT NULL FROM jobs WHERE id = ${ID[ckpt]}" 1
		ok $? "[$cell] the ckpt job's checkpoint reached the database (a heartbeat took it)"
		[ "$point" = running ] || hold_rows_and_end
		;;
	esac
}

# The "after" point: another session locks every job row; the handlers
# are let go and end; both workers' writes then wait on the lock.
hold_rows_and_end() {
	local n pid i ended
	lock_jobs
	rm -f "$C/hold.f1.run" "$C/hold.l1.run"
	n=$(grep -c '^start ' "$C/log")
	wait_log 30 '^end ' "$n"
	ended=$?
	# In exec mode the worker can write only once it has reaped the handler.
	for pid in $(sed -n 's/^start [0-9]* [a-z]* \([0-9]*\)$/\1/p' "$C/log"); do
		for ((i = 0; i < 100; i++)); do alive "$pid" && [ "$mode" = exec ] || break; sleep 0.05; done
	done
	wait_for_sql 30 "SELECT COUNT(*) FROM information_schema.INNODB_TRX WHERE trx_state = 'LOCK WAIT'" 2 &&
		[ "$ended" = 0 ]
	ok $? "[$cell] all $n handlers ended; both workers wait on the locked rows to write"
	diag "[$cell] the workers wait in: $(sql "SELECT GROUP_CONCAT(LEFT(REPLACE(trx_query, '\n', ' '), 50) SEPARATOR ' | ')
		FROM information_schema.INNODB_TRX WHERE trx_state = 'LOCK WAIT'")"
}

# Kills the first pair of workers (and, at "after", their connections,
# then the lock); notes when the rt claims they held were made, and
# when the leases of the jobs they held end (LEASE: id -> epoch ms).
kill_first() {
	local id t
	# The cancel comes just before the kill; at "after" it waits on the
	# locked rows like the workers' writes.
	CONF=$T/f1.ini
	jq_ cancel --no-wait "${ID[canc]}" >"$C/cancel.out" 2>&1 &
	CANCELLER=$!
	# At "after", it must be waiting on the lock before the connections
	# are killed (its own is spared: the text of its statements names
	# cancel_by, the SELECT ... FOR UPDATE that locks the rows first as
	# the UPDATE after it); the pattern is split so that this query does
	# not find itself.
	if [ "$point" = after ]; then
		wait_for_sql 10 "SELECT COUNT(*) FROM information_schema.PROCESSLIST
			WHERE INFO LIKE CONCAT('%cancel', '_by%')" 1
		ok $? "[$cell] the cancel waits on the locked rows too"
	else
		wait_for_sql 10 "SELECT COUNT(*) FROM jobs WHERE id = ${ID[canc]} AND cancel_by IS NULL" 0
	fi
	kill -KILL "$F1" "$L1"
	KILLED_AT=$(now_ms)
	cp "$C/log" "$C/log.killed"
	PIDS=$(sed -n 's/^boot \([0-9]*\) [fl]1 .*/\1/p' "$C/log.killed")
	watch_gone "$PIDS" >"$C/gone" &
	WATCHER=$!
	BG_PIDS+=("$WATCHER")
	wait "$F1" "$L1" 2>/dev/null
	[ "$point" != after ] || unlock_jobs_killing "COALESCE(INFO, '') NOT LIKE '%cancel_by%'"
	wait "$CANCELLER"
	is "$?" 0 "[$cell] jobq cancel of the canc job exits 0 ($(tr '\n' ' ' <"$C/cancel.out"))"
	sql "INSERT INTO claims (at) SELECT reserved_at FROM jobs WHERE type = 'rt' AND reserved_at IS NOT NULL"
	declare -gA LEASE=()
	while read -r id t; do LEASE[$id]=$t; done < <(sql "SELECT id, ROUND(UNIX_TIMESTAMP(lease_expires_at) * 1000)
		FROM jobs WHERE lease_expires_at IS NOT NULL")
}

# Watches processes $1 (the killed workers' handlers) from the kill on,
# for at most 3 s: prints "PID MS" when each is seen gone.  Run in the
# background, so that the next workers start meanwhile.
watch_gone() {
	local pid left now
	local -A gone=()
	while :; do
		left=0
		now=${EPOCHREALTIME/./}
		now=$((now / 1000))
		for pid in $1; do
			[ -z "${gone[$pid]:-}" ] || continue
			if alive "$pid"; then
				left=$((left + 1))
			else
				gone[$pid]=$now
				echo "$pid $now"
			fi
		done
		[ $left -gt 0 ] && [ $((now - KILLED_AT)) -lt $((3000 * TIME_SCALE)) ] || break
		sleep 0.01
	done
}

# The killed workers' handlers: every process they started is gone
# within 3 s (their guards stop them), and each one that was running a
# job (or, in exec mode, had been handed one) is gone before that job's
# lease ends, when another worker may run the job again.
check_guard() {
	local pid id t late=0 runs
	local -A gone=()
	wait "$WATCHER"
	while read -r pid t; do gone[$pid]=$t; done <"$C/gone"
	diag "[$cell] the killed workers' handlers were seen gone after (ms): $(while read -r pid t; do echo -n "$((t - KILLED_AT)) "; done <"$C/gone")"
	is "$(($(wc -w <<<"$PIDS") - ${#gone[@]}))" 0 \
		"[$cell] the killed workers' $(wc -w <<<"$PIDS") handler processes are gone within $((3 * TIME_SCALE)) s"
	runs=$(awk '$1 == "boot" && $4 != "-" { r[$2] = $4 } $1 == "start" { r[$4] = $2 }
		$1 == "end" { delete r[$4] } END { for (p in r) print p, r[p] }' "$C/log.killed")
	while read -r pid id; do
		[ -n "$pid" ] || continue
		if [ -z "${LEASE[$id]:-}" ]; then
			diag "[$cell] job $id: its killed worker no longer held it (it had stopped its handler for its lease)"
		elif [ -z "${gone[$pid]:-}" ] || [ "${gone[$pid]}" -ge "${LEASE[$id]}" ]; then
			late=$((late + 1))
			diag "[$cell] job $id: its handler (pid $pid) was gone $((${gone[$pid]:-0} - KILLED_AT)) ms after the kill," \
				"its lease ended $((LEASE[$id] - KILLED_AT)) ms after it"
		fi
	done <<<"$runs"
	is "$late" 0 "[$cell] each of the $(grep -c . <<<"$runs") handlers that held a job was gone before the job's lease ended"
}

# The second pair of workers finishes the work, started at once (the
# killed workers' jobs come back when their leases end) while the guards
# are still stopping the old handlers.  Before that, the unique key of
# the killed worker's job still blocks a duplicate.
recover() {
	local bad=0
	CONF=$T/f1.ini
	is "$(jq_ enqueue --unique-key "$KEY" uniq '{}' 2>/dev/null)" "${ID[uniq]}" \
		"[$cell] the killed worker's job keeps its unique key: a duplicate is refused"
	CONF=$T/f2.ini
	start_worker
	F2=$WORKER_PID
	CONF=$T/l2.ini
	start_worker
	L2=$WORKER_PID
	check_guard
	wait_for_sql $((90 * TIME_SCALE)) "SELECT COUNT(*) FROM jobs WHERE type <> 'later'" 0
	ok $? "[$cell] a new pair of workers finishes every job ($(($(now_ms) - KILLED_AT)) ms after the kill)"
	kill -TERM "$F2" "$L2"
	wait_exit 30 "$F2" || bad=1
	wait_exit 30 "$L2" || bad=1
	is "$bad" 0 "[$cell] ... and stops on SIGTERM with status 0"
}

# What must hold once the work is done.
check_cell() {
	local n=$(($(tr , ' ' <<<"$ALL" | wc -w) - 2)) fresh
	is "$(sql "SELECT CONCAT_WS(' ', (SELECT COUNT(*) FROM jobs), (SELECT COUNT(*) FROM jobs WHERE type = 'later'),
		(SELECT GROUP_CONCAT(id) FROM failed_jobs), (SELECT COUNT(*) FROM job_runs WHERE outcome = 'dead'))")" \
		"1 1 ${ID[dead]} 1" "[$cell] nothing lost: only the \"later\" follow-up waits; the dead job is dead-lettered, once"
	is "$(sql "SELECT CONCAT_WS(' ', COUNT(DISTINCT job_id), COUNT(*)) FROM job_runs WHERE outcome = 'done' AND job_id IN ($ALL)")" \
		"$n $n" "[$cell] each of the other $n jobs is done, once"
	is "$(sql "SELECT CONCAT_WS(' ', (SELECT GROUP_CONCAT(outcome) FROM job_runs WHERE job_id = ${ID[canc]}
		AND outcome IN ('done', 'cancelled')), (SELECT COUNT(*) FROM failed_jobs WHERE id = ${ID[canc]}))")" \
		"cancelled 0" "[$cell] the cancelled job ended cancelled, once, and was never done"
	[ "$point" = before ] || is "$(grep -c "^resumed ${ID[ckpt]} " "$C/log")" 1 \
		"[$cell] the ckpt job's run after the kill resumed from its checkpoint ($(grep "^resumed ${ID[ckpt]} " "$C/log"))"
	is "$(grep -c '^overlap ' "$C/log") $(grep -c '^over ' "$C/log")" "0 0" \
		"[$cell] no job ran twice at once; never 3 lim jobs at once (max_running = 2)"
	is "$(sql "SELECT CONCAT_WS(' ', (SELECT COUNT(DISTINCT job_id) FROM job_runs WHERE type = 'child'),
		(SELECT COUNT(*) FROM job_runs WHERE type = 'child' AND outcome = 'done'),
		(SELECT COUNT(DISTINCT job_id) FROM job_runs WHERE type = 'next'),
		(SELECT COUNT(*) FROM job_runs WHERE type = 'next' AND outcome = 'done'),
		(SELECT COUNT(*) FROM jobs WHERE type = 'later' AND JSON_VALUE(payload, '$.from') = ${ID[at]}
			AND available_at = STR_TO_DATE('$AT', '%Y-%m-%dT%H:%i:%sZ')))")" "1 1 1 1 1" \
		"[$cell] one follow-up (done once), one on_success job (done once), one \"at\" follow-up due at its time"
	is "$(sql "SELECT COUNT(*), COUNT(DISTINCT a.job_id), SUM(TIMESTAMPDIFF(MICROSECOND, c.started_at, a.started_at) DIV 1000 >= c.duration_ms)
		FROM job_runs a JOIN job_runs c ON c.type = 'child' AND c.outcome = 'done' WHERE a.type = 'child2'")" "1	1	1" \
		"[$cell] the follow-up that waits for the other ran once, after it"
	is "$(sql "SELECT CONCAT_WS(' ', COUNT(*) > 0, COUNT(*) = SUM(TIMESTAMPDIFF(MICROSECOND, r.started_at,
			(SELECT MIN(x.started_at) FROM job_runs x WHERE x.job_id = r.job_id AND x.started_at > r.started_at))
			DIV 1000 - r.duration_ms >= 950)) FROM job_runs r WHERE r.job_id = ${ID[retry]} AND r.outcome = 'retry'")" \
		"1 1" "[$cell] the retry job was retried, each time no sooner than its retry_after (1s)"
	is "$(grep -c '^alert ' "$C/log") $(grep -c "^alert ${ID[dead]}$" "$C/log")" "1 1" "[$cell] on_dead ran once, for the dead job"
	is "$(sql "SELECT CONCAT_WS(' ', COUNT(DISTINCT job_id), SUM(outcome = 'done'), MIN(JSON_VALUE(payload, '$.total')),
		MIN(JSON_VALUE(payload, '$.done'))) FROM job_runs WHERE type = 'gcb'")" "1 1 1 1" \
		"[$cell] the group's callback was enqueued once (done once), counting its one job done"
	is "$(sql "SELECT COUNT(*), SUM(TIMESTAMPDIFF(MICROSECOND, g.started_at, a.started_at) DIV 1000 >= g.duration_ms)
		FROM job_runs a JOIN job_runs g ON g.job_id = ${ID[grp]} AND g.outcome = 'done' WHERE a.job_id = ${ID[aft]}")" "1	1" \
		"[$cell] the job waiting for the grp job was released once and ran once, after it"
	sql "INSERT INTO claims (at) SELECT started_at FROM job_runs WHERE type = 'rt'"
	is "$(sql "SELECT MAX(c) FROM (SELECT a.n, COUNT(*) AS c FROM claims a JOIN claims b
		ON b.at >= a.at AND b.at < a.at + INTERVAL 2 SECOND GROUP BY a.n) w")" 2 \
		"[$cell] at most 2 rt claims in any 2 s, the killed worker's counted ($(sql "SELECT COUNT(*) FROM claims") claims)"
	CONF=$T/f1.ini
	fresh=$(jq_ enqueue --unique-key "$KEY" uniq '{}' 2>/dev/null)
	ok "$([ -n "$fresh" ] && [ "$fresh" != "${ID[uniq]}" ]; echo $?)" "[$cell] once its job is done, the unique key is free"
	sql "DELETE FROM jobs WHERE id = '$fresh'"
	# Promises item 6: an attempt is charged when the handler starts, so
	# the jobs the killed worker held ahead first ran as attempt 1.
	[ "$point" != before ] || is "$(sql "SELECT COUNT(*) FROM (SELECT job_id, MIN(attempt) AS m FROM job_runs
			WHERE type IN ('${F_TYPES// /\',\'}') AND type <> 'canc' GROUP BY job_id) x WHERE m <> 1")" 0 \
		"[$cell] the jobs held ahead, never started, were not charged: each first ran as attempt 1"
}

sql "CREATE TABLE claims (n INT AUTO_INCREMENT PRIMARY KEY, at DATETIME(6) NOT NULL)"
AT=$(date -u -d '+1 hour' +%Y-%m-%dT%H:%M:%SZ)
for mode in exec persistent; do
	for point in before running after; do
		cell=$mode/$point
		C=$T/$mode.$point
		KEY=km.$mode.$point
		mkdir -p "$C/locks"
		: >"$C/log"
		empty_tables
		sql "DELETE FROM jobq_starts; DELETE FROM jobq_unique; DELETE FROM claims"
		if [ "$point" = before ]; then
			conf_f 1 1 16
			touch "$C/hold.f1.run" "$C/hold.l1.boot"
		else
			conf_f 1 "$NF" 0
			touch "$C/hold.f1.run" "$C/hold.l1.run"
		fi
		conf_f 2 "$NF" auto
		conf_l 1
		conf_l 2
		enqueue_all
		CONF=$T/f1.ini
		start_worker
		F1=$WORKER_PID
		CONF=$T/l1.ini
		start_worker
		L1=$WORKER_PID
		reach_point
		kill_first
		recover
		check_cell
		rm -f "$C"/hold.*
	done
done
# Under --enable-sanitizers a report goes to the worker's stderr.
is "$(grep -l -e 'Sanitizer' -e 'runtime error:' "$T"/worker.*.log | wc -l)" 0 \
	"no worker log holds a sanitizer report"
finish
