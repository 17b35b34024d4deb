#!/bin/bash
# Workers killed with SIGKILL in the middle of their work, in both
# reservation modes.  Jobs of 200 ms arrive at a steady rate (so there is
# no backlog to hide behind); every second or so a random worker is
# killed and a replacement started.  At the end every job is done, none
# lost and none done twice; the jobs a killed worker held came back on
# their own once their lease ran out (taken again no earlier than the
# lease expiry and no later than MARGIN after it); the registry shows the
# killed workers as gone and the living ones as alive.
. "$top_srcdir/tests/lib.sh"
one_build normal "a timing test"
setup crash

TTL=2     # reserve_ttl, seconds
MARGIN=3  # seconds after its lease expiry by which a held job is taken again
WORKERS=4 # alive at any time
CONC=8
KILLS=4
TICKS=40 # the feed: BATCH jobs every half second
BATCH=50
TOTAL=$((TICKS * BATCH))

declare -A WID_OF

# Starts a worker; records its log and (once it logged it) its id.
launch() {
	local log=$T/worker.${#BG_PIDS[@]}.log i=0
	start_worker --concurrency $CONC
	while ! grep -q 'worker started' "$log" 2>/dev/null; do
		i=$((i + 1))
		[ $i -le 300 ] || break
		sleep 0.1
	done
	WID_OF[$WORKER_PID]=$(sed -n 's/.*worker started worker=\([^ ]*\).*/\1/p' "$log")
	live+=("$WORKER_PID")
}

# Kills a random live worker with SIGKILL, notes the jobs it held (and
# when their leases run out), starts a replacement.
kill_one() {
	local idx=$((RANDOM % ${#live[@]})) pid wid i
	# Rather one whose handlers are running (a child process: it holds
	# jobs), found without a round trip to the database: on a loaded
	# machine a worker started a moment ago may not have claimed yet.
	for i in "${!live[@]}"; do
		if pgrep -P "${live[$i]}" >/dev/null; then
			idx=$i
			break
		fi
	done
	pid=${live[$idx]}
	wid=${WID_OF[$pid]}
	kill -KILL "$pid"
	wait "$pid" 2>/dev/null
	live=("${live[@]:0:idx}" "${live[@]:idx+1}")
	# Whatever the dead client had already sent completes on the server.
	sleep 0.2
	sql "INSERT INTO held SELECT id, reserved_by, reserved_at, lease_expires_at FROM jobs WHERE reserved_by = '$wid'"
	killed+=("$wid")
	launch
}

# "id state pid" of every registered worker, from `jobq workers --json`.
registry() {
	jq_ workers --json | python3 -c '
import json, sys
for w in json.load(sys.stdin)["workers"]:
    print(w["id"], w["state"], w["pid"])'
}

for mode in skip-locked update; do
	empty_tables
	write_conf <<EOC
[worker]
poll_interval = 50ms
reserve_mode = $mode
reserve_ttl = ${TTL}s

[queue default]

[handler nap]
exec = /bin/sleep 0.2
max_attempts = 50
EOC
	live=()
	killed=()
	# What each killed worker held: job, worker, since when, lease expiry.
	sql "DROP TABLE IF EXISTS held; CREATE TABLE held (id BIGINT UNSIGNED, wid VARCHAR(128),
		reserved_at DATETIME(6), expiry DATETIME(6))"
	for i in $(seq $WORKERS); do launch; done
	started=$SECONDS
	n=0
	enqueued=0
	for tick in $(seq $TICKS); do
		out=$(seq $((n + 1)) $((n + BATCH)) |
			awk '{ printf "{\"type\": \"nap\", \"payload\": {\"n\": %d}}\n", $1 }' |
			jq_ enqueue --batch) || diag "enqueue failed at tick $tick: $out"
		[[ $out == "enqueued $BATCH jobs "* ]] && enqueued=$((enqueued + BATCH))
		n=$((n + BATCH))
		if [ $tick -ge 8 ] && [ $((tick % 2)) = 0 ] && [ ${#killed[@]} -lt $KILLS ]; then
			sleep 0.15 # the workers are busy with this batch
			kill_one
		else
			sleep 0.5
		fi
	done
	is "$enqueued" "$TOTAL" "[$mode] $TOTAL jobs enqueued, $BATCH every half second"
	wait_for_sql 300 "SELECT COUNT(*) FROM jobs" 0
	ok $? "[$mode] all $TOTAL jobs were taken off the queue ($KILLS workers killed on the way)"
	diag "[$mode] fed and drained in $((SECONDS - started)) s"

	# The registry: killed workers are gone (they stopped heart-beating),
	# the living ones alive.
	i=0
	while :; do
		reg=$(registry)
		gone=0
		for wid in "${killed[@]}"; do
			grep -qx "$wid gone [0-9]*" <<<"$reg" && gone=$((gone + 1))
		done
		[ $gone = ${#killed[@]} ] && break
		i=$((i + 1))
		[ $i -le 60 ] || break
		sleep 0.5
	done
	is "$gone" "${#killed[@]}" "[$mode] \`jobq workers --json\` shows the ${#killed[@]} killed workers as gone"
	alive=0
	for pid in "${live[@]}"; do
		grep -qx "${WID_OF[$pid]} alive $pid" <<<"$reg" && alive=$((alive + 1))
	done
	is "$alive" "${#live[@]}" "[$mode] and the ${#live[@]} running ones as alive, with their pids"

	bad=0
	for pid in "${live[@]}"; do
		kill -TERM "$pid"
		wait_exit 60 "$pid" || bad=$((bad + 1))
	done
	is "$bad" 0 "[$mode] the surviving workers stop on SIGTERM with status 0"

	is "$(sql "SELECT COUNT(*) FROM failed_jobs")" 0 "[$mode] nothing was dead-lettered"
	is "$(sql "SELECT COUNT(DISTINCT job_id) FROM job_runs WHERE outcome = 'done'")" "$TOTAL" \
		"[$mode] each of the $TOTAL jobs has a 'done' run: none lost"
	diag "[$mode] distinct jobs in the run history: $(sql "SELECT COUNT(DISTINCT job_id) FROM job_runs");" \
		"runs by outcome: $(sql "SELECT GROUP_CONCAT(CONCAT(outcome, '=', n)) FROM (SELECT outcome, COUNT(*) n FROM job_runs GROUP BY outcome) x")"
	# Ids are consecutive within a mode: name the jobs without a done run.
	sql "SELECT DISTINCT job_id FROM job_runs WHERE outcome = 'done'" | sort >"$T/done.$mode"
	lo=$(sql "SELECT MIN(job_id) FROM job_runs")
	for id in $(seq "$lo" $((lo + TOTAL - 1)) | sort | comm -23 - "$T/done.$mode" | head -5); do
		diag "[$mode] job $id has no done run; its runs:" \
			"$(sql "SELECT GROUP_CONCAT(CONCAT_WS(' ', attempt, worker, started_at, outcome, exit_status) SEPARATOR '; ') FROM job_runs WHERE job_id = $id")"
		grep -h -e "job=$id " -e "job ${id}[: ]" "$T"/worker.*.log | sed 's/^/#   /'
	done
	is "$(sql "SELECT COUNT(*) FROM (SELECT job_id FROM job_runs WHERE outcome = 'done' GROUP BY job_id HAVING COUNT(*) > 1) d")" \
		0 "[$mode] no job was done twice"

	# The jobs the killed workers held each ran again (done by another
	# worker), and were taken again no earlier than their lease expiry and
	# no later than MARGIN after it.  "Taken again" is the next
	# reservation by another worker: a run row, or a later entry in held
	# when the next holder was killed too.
	norph=$(sql "SELECT COUNT(*) FROM held")
	# On a badly loaded machine the look at a killed worker's jobs can
	# come after their leases ran out and others took them: the runs the
	# takers wrote off as lost or interrupted show the holding then.
	nlost=$(sql "SELECT COUNT(*) FROM job_runs WHERE outcome IN ('lost', 'interrupted')
		AND worker IN ('$(IFS=,; echo "${killed[*]}" | sed "s/,/','/g")')")
	[ "$norph" -gt 0 ] || diag "[$mode] held nothing when looked at; runs written off: $nlost"
	ok $([ "$norph" -gt 0 ] || [ "$nlost" -gt 0 ]; echo $?) \
		"[$mode] the killed workers held jobs when they died ($norph, $nlost runs written off)"
	is "$(sql "SELECT COUNT(*) FROM held h WHERE NOT EXISTS (SELECT 1 FROM job_runs r
		WHERE r.job_id = h.id AND r.outcome = 'done' AND r.worker <> h.wid AND r.started_at > h.reserved_at)")" \
		0 "[$mode] every job a killed worker held was then done by another"
	sql "SELECT h.id, h.wid, h.expiry, TIMESTAMPDIFF(MICROSECOND, h.expiry, MIN(x.at)) DIV 1000
		FROM held h JOIN (SELECT job_id AS id, worker AS w, started_at AS at FROM job_runs
			UNION ALL SELECT id, wid, reserved_at FROM held) x
		ON x.id = h.id AND x.w <> h.wid AND x.at > h.reserved_at
		GROUP BY h.id, h.wid, h.expiry" >"$T/retaken.$mode"
	early=0 late=0 worst=0
	while IFS=$'\t' read -r id wid expiry d; do
		[ "$d" -gt "$worst" ] && worst=$d
		if [ "$d" -lt 0 ]; then
			early=$((early + 1))
			diag "[$mode] job $id (held by $wid) was taken again $((-d)) ms before its lease expired at $expiry"
		elif [ "$d" -gt $((MARGIN * 1000)) ]; then
			late=$((late + 1))
			diag "[$mode] job $id (held by $wid) was taken again $d ms after its lease expired at $expiry"
		fi
	done <"$T/retaken.$mode"
	is "$early" 0 "[$mode] none was taken again before its lease expired"
	is "$late" 0 "[$mode] each was taken again within ${MARGIN}s of its lease expiry (worst: $worst ms)"
done
# Under --enable-sanitizers a report goes to the worker's stderr, whatever
# its exit status says.
is "$(grep -l -e 'Sanitizer' -e 'runtime error:' "$T"/worker.*.log | wc -l)" 0 \
	"no worker log holds a sanitizer report"
finish
