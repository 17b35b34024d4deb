#!/bin/bash
# A bulk cancel (one transaction a chunk, cancel.c) racing the workers
# of the jobs it cancels, in exec and persistent mode:
#   (a) the rest of a group cancelled by `jobq cancel --queue --yes`
#       while several workers finish other jobs of it: one callback,
#       whose counts match the jobs' final runs; each job ends once
#       (one final run row: done or cancelled); the jobs that wait for
#       them (policy all) end cancelled naming the one cancelled, or run
#       once it is done; those of policy any become ready either way;
#   (b) the same while one of the workers is SIGKILLed as the cancel
#       runs: its jobs end once too, when their leases lapse;
#   (c) the same through the dashboard (POST /api/bulk, action cancel,
#       chunk after chunk): one audit row per job it cancelled or asked
#       its worker to stop, none for a job that had ended;
#   (d) the dashboard's and the command's bulk cancels at once.
. "$top_srcdir/tests/lib.sh"
one_build normal "races between real processes"
. "$top_srcdir/tests/operator/common.sh"
. "$top_srcdir/tests/serve_lib.sh"
setup cancel_race
TH=$top_srcdir/tests/handlers
N=$(volume 120)

# final_runs IDS...: how many final run rows each of the jobs has,
# the counts that are not 1, as "id:n" (empty: each ended once).
final_runs() {
	sql "SELECT COALESCE(GROUP_CONCAT(CONCAT(j.id, ':', (SELECT COUNT(*) FROM job_runs r WHERE r.job_id = j.id
		AND r.outcome IN ('done', 'dead', 'cancelled', 'expired')))), '') FROM (SELECT id FROM jobs WHERE FALSE
		UNION ALL SELECT job_id FROM job_runs WHERE type = 'nap') j
		WHERE (SELECT COUNT(*) FROM job_runs r WHERE r.job_id = j.id AND r.outcome IN ('done', 'dead', 'cancelled', 'expired')) <> 1"
}

# num NAME: the number (or null) NAME in the last answer's flat JSON;
# read without starting an interpreter, which can take a second on a
# busy machine while the workers end the jobs to be cancelled.
num() { printf '%s' "$BODY" | grep -o "\"$1\": *[0-9a-z]*" | head -1 | sed 's/.*: *//'; }

# www_cancel QUEUE: the dashboard's "Cancel all matching", chunk after
# chunk as the page sends them; prints the jobs it says it did.
www_cancel() {
	local n upto after=0 done=0 next
	post /api/bulk/count "$T/jar" "{\"action\": \"cancel\", \"queue\": \"$1\"}"
	n=$(num count) upto=$(num upto)
	while :; do
		post /api/bulk "$T/jar" "{\"action\": \"cancel\", \"queue\": \"$1\", \"count\": $n, \"upto\": $upto, \"after\": $after}"
		if [ "$CODE" = 409 ] && [ "$after" = 0 ]; then # the workers ran some: confirm the new count
			n=$(num count) upto=$(num upto)
			continue
		fi
		[ "$CODE" = 200 ] || { diag "POST /api/bulk: $CODE $BODY" >&2; break; }
		done=$((done + $(num done)))
		next=$(num next_after)
		[ "$next" = null ] && break
		after=$next
	done
	echo "$done"
}

# race MODE HOW: a group of N jobs on two workers of 3 (MODE: exec or
# persistent), cancelled by HOW (cli, kill: cli while a worker is
# SIGKILLed, www: the dashboard) once a quarter of them ran.
race() {
	local hmode=$1 how=$2 extra="" first i out rc done_n canc_n bad w1 said swept
	empty_tables
	sql "DELETE FROM jobq_groups; DELETE FROM jobq_deps; DELETE FROM jobq_audit"
	[ $hmode = persistent ] && extra="mode = persistent
env.PYTHONPATH = $HANDLERS"
	write_conf <<EOC
[worker]
poll_interval = 20ms
reserve_ttl = 2s
heartbeat = 500ms

[queue g]
[queue d]
[queue cb]

[handler nap]
exec = $TH/nap.py $hmode
queue = g
$extra

[handler after]
exec = /bin/true
queue = d

[handler cb]
exec = /bin/true
queue = cb

[user ada]
password_hash = $PWHASH
role = admin

[serve]
overview_cache = 0
EOC
	for i in $(seq 1 "$N"); do echo "{\"type\": \"nap\", \"payload\": {\"ms\": $((20 + i % 5 * 10 + ${SLOW:-0}))}}"; done |
		jq_ enqueue --batch --group race --on-complete cb >/dev/null
	first=$(sql "SELECT MIN(id) FROM jobs WHERE type = 'nap'")
	# every fourth job is waited for by one job of policy all and one of any
	for i in $(seq 0 4 $((N - 1))); do
		jq_ enqueue --after $((first + i)) after '{}' >/dev/null
		jq_ enqueue --after-any $((first + i)) after '{}' >/dev/null
	done
	case $how in www | both) serve_start; login ada "$T/jar" ;; esac
	start_worker --concurrency 3 --queue g
	w1=$WORKER_PID
	start_worker --concurrency 3 --queue g
	wait_for_sql 60 "SELECT COUNT(*) >= $((N / 4)) FROM job_runs WHERE type = 'nap'" 1
	case $how in
	cli)
		out=$(jq_ cancel --queue g --yes 2>&1); rc=$?
		is "$rc" 0 "[$hmode $how] the bulk cancel exits 0 ($out)" ;;
	kill)
		jq_ cancel --queue g --yes >"$T/cancel.out" 2>&1 &
		i=$!
		kill -KILL "$w1"
		wait "$i"
		is "$?" 0 "[$hmode $how] the bulk cancel exits 0 while a worker is killed ($(cat "$T/cancel.out"))" ;;
	both)
		jq_ cancel --queue g --yes >"$T/cancel.out" 2>&1 &
		i=$!
		said=$(www_cancel g)
		wait "$i"
		is "$?" 0 "[$hmode $how] the command's cancel exits 0 beside the dashboard's ($(cat "$T/cancel.out"); the dashboard's: $said)"
		is "$(sql "SELECT COUNT(*) FROM (SELECT job_id FROM jobq_audit WHERE action = 'cancel' GROUP BY job_id HAVING COUNT(*) > 1) x")" 0 \
			"[$hmode $how] no job has two audit rows" ;;
	www)
		said=$(www_cancel g)
		ok "$([ "$said" -gt 0 ]; echo $?)" "[$hmode $how] the dashboard cancelled some of them before the workers ended them ($said)"
		is "$(count jobq_audit "action = 'cancel'")" "$said" "[$hmode $how] one audit row per job the dashboard says it cancelled ($said)"
		is "$(sql "SELECT COUNT(*) FROM (SELECT job_id FROM jobq_audit WHERE action = 'cancel' GROUP BY job_id HAVING COUNT(*) > 1) x")" 0 \
			"[$hmode $how] no job has two"
		is "$(sql "SELECT COUNT(*) FROM job_runs r WHERE r.type = 'nap' AND r.outcome = 'cancelled'
			AND NOT EXISTS (SELECT 1 FROM jobq_audit a WHERE a.job_id = r.job_id AND a.action = 'cancel')")" 0 \
			"[$hmode $how] every job cancelled has its audit row"
		is "$(sql "SELECT COUNT(*) FROM jobq_audit a JOIN job_runs r ON r.job_id = a.job_id AND r.outcome = 'done'
			WHERE a.action = 'cancel' AND r.started_at + INTERVAL r.duration_ms * 1000 MICROSECOND < a.at - INTERVAL 1 SECOND")" 0 \
			"[$hmode $how] no audit row for a job that had ended" ;;
	esac
	wait_for_sql 60 "SELECT COUNT(*) FROM jobs WHERE queue = 'g'" 0
	ok $? "[$hmode $how] every job of the queue ended"
	stop_workers
	done_n=$(count job_runs "type = 'nap' AND outcome = 'done'")
	canc_n=$(count job_runs "type = 'nap' AND outcome = 'cancelled'")
	is "$((done_n + canc_n))" "$N" "[$hmode $how] $done_n done and $canc_n cancelled: $N final runs"
	is "$(final_runs)" "" "[$hmode $how] each job has exactly one final run row"
	is "$(count jobs "type = 'cb'")" 1 "[$hmode $how] exactly one callback"
	like "$(sql "SELECT payload FROM jobs WHERE type = 'cb'")" \
		"\"total\": $N, \"done\": $done_n, \"dead\": 0, \"cancelled\": $canc_n, \"expired\": 0" \
		"[$hmode $how] the callback's counts match the runs"
	# the dependents: policy all follows its dependency, policy any is ready
	bad=$(sql "SELECT COUNT(*) FROM jobs j JOIN jobq_deps d ON d.job_id = j.id
		JOIN job_runs r ON r.job_id = d.after_id AND r.outcome IN ('done', 'cancelled')
		WHERE j.type = 'after' AND NOT (
		  (j.after_any = 1 AND j.waiting_on = 0 AND j.available_at <= UTC_TIMESTAMP(6) AND j.cancel_by IS NULL)
		  OR (j.after_any = 0 AND r.outcome = 'done' AND j.waiting_on = 0 AND j.cancel_by IS NULL
		      AND j.available_at <= UTC_TIMESTAMP(6))
		  OR (j.after_any = 0 AND r.outcome = 'cancelled' AND j.cancel_by = CONCAT('dependency ', d.after_id, ' (cancelled)')))")
	is "$bad" 0 "[$hmode $how] every dependent is released, or cancelled naming its dependency"
	# A dependent cancelled with its dependency leaves jobs when a worker's
	# sweep (final.c) ends it, which may come before this check or not.
	swept=$(count job_runs "type = 'after' AND outcome = 'cancelled' AND error LIKE 'cancelled by dependency % (cancelled)%'")
	is "$(($(count jobs "type = 'after'") + swept))/$(count job_runs "type = 'after'")" "$((N / 2))/$swept" \
		"[$hmode $how] none of them was lost ($swept ended by a sweep, naming their dependency)"
}

race exec cli
race persistent cli
SLOW=200 race exec kill
SLOW=200 race persistent kill
SLOW=100 race exec www
SLOW=100 race persistent www
SLOW=50 race exec both

finish
