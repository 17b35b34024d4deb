#!/bin/bash
# An outcome whose job's row another session holds locked must not hold
# back the outcomes of other jobs.  Worker A runs J1 and J2 (each waits
# for a gate file).  Another session holds FOR UPDATE on J1's row for
# HOLD seconds; J1 is let go, so A's write of its outcome waits on that
# lock and fails.  Then J2 is let go: its outcome must be written while
# J1's row is still locked (before, J2's outcome shared J1's transaction
# and waited with it; a worker stopping meanwhile gave J2 up, and J2 ran
# again once its lease expired).  Once the lock is gone J1 is written
# too, each job ran once.  Both reservation modes, exec and persistent
# handlers.
. "$top_srcdir/tests/lib.sh"
one_build normal "a timing test"
setup lockwait_outcome

TH=$top_srcdir/tests/handlers
HOLD=10 # seconds the other session holds J1's row (J1's lease, 20 s, outlives it)

now_ms() {
	local t=${EPOCHREALTIME/./}
	echo $((t / 1000))
}

for mode in skip-locked update; do
	for hmode in exec persistent; do
		m="$mode, $hmode"
		empty_tables
		g1=$T/g1.$mode.$hmode
		g2=$T/g2.$mode.$hmode
		if [ $hmode = exec ]; then
			h1="exec = $TH/gate.sh $g1"
			h2="exec = $TH/gate.sh $g2"
		else
			# Persistent: one process per handler, the gate in the payload.
			h1="exec = $TH/persist_gate.py
mode = persistent
env.PYTHONPATH = $HANDLERS
env.PYTHONDONTWRITEBYTECODE = 1"
			h2=$h1
		fi
		write_conf <<EOC
[worker]
poll_interval = 100ms
reserve_mode = $mode
reserve_ttl = 20s

[queue default]

[handler one]
$h1

[handler two]
$h2
EOC
		j1=$(jq_ enqueue one "{\"gate\": \"$g1\"}")
		j2=$(jq_ enqueue two "{\"gate\": \"$g2\"}")
		alog=$T/worker.${#BG_PIDS[@]}.log
		start_worker --concurrency 2
		a=$WORKER_PID
		wait_for_sql 30 "SELECT COUNT(*) FROM jobs WHERE reserved_by LIKE '%:$a:%' AND attempts = 1" 2
		ok $? "[$m] worker A took $j1 and $j2"

		sql "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED; BEGIN;
			SELECT id FROM jobs WHERE id = $j1 FOR UPDATE; DO SLEEP($HOLD); COMMIT" >/dev/null 2>&1 &
		locker=$!
		BG_PIDS+=("$locker")
		wait_for_sql 30 "SELECT COUNT(*) FROM information_schema.PROCESSLIST
			WHERE DB = '$DB' AND INFO LIKE 'DO SLEEP($HOLD)%'" 1
		ok $? "[$m] another session holds the row of $j1 for $HOLD s"
		lock_end=$(($(now_ms) + HOLD * 1000))

		: >"$g1" # J1 ends; its outcome waits on the lock
		i=0
		until grep -q "writing outcomes: " "$alog" || [ $i -ge 300 ]; do
			i=$((i + 1))
			sleep 0.1
		done
		like "$(cat "$alog")" "writing outcomes: .*(Lock wait|wait limit|timeout)" \
			"[$m] A's write of J1's outcome waited on the lock and failed"
		: >"$g2" # J2 ends; its row is nobody's but A's
		wait_for_sql 20 "SELECT COUNT(*) FROM job_runs WHERE job_id = $j2 AND outcome = 'done'" 1
		ok $? "[$m] J2's outcome is written"
		left=$((lock_end - $(now_ms)))
		ok $((left > 3000 ? 0 : 1)) "[$m] well before J1's row is let go (${left} ms of the lock left)"
		is "$(sql "SELECT COUNT(*) FROM job_runs WHERE job_id = $j1")" 0 "[$m] J1's outcome is not written yet"

		wait "$locker"
		wait_for_sql 30 "SELECT COUNT(*) FROM job_runs WHERE job_id = $j1 AND outcome = 'done'" 1
		ok $? "[$m] once the lock is gone J1's outcome is written too"
		is "$(sql "SELECT COUNT(*) FROM jobs")" 0 "[$m] both jobs left the queue"
		is "$(sql "SELECT GROUP_CONCAT(job_id, ':', attempt ORDER BY job_id) FROM job_runs")" "$j1:1,$j2:1" \
			"[$m] each ran once, on its first attempt"
		kill -TERM "$a"
		wait_exit 20 "$a"
		is "$?" 0 "[$m] A exits 0"
		is "$(grep -c -e 'Sanitizer' -e 'runtime error:' "$alog")" 0 "[$m] no sanitizer report"
	done
done

finish
