#!/bin/bash
# Lost answers (issue 26): the database applies a statement but its
# answer never reaches the worker.  The worker talks to the server through
# tests/replylost.py, which forwards the statement named in $PX/drop,
# throws the server's answer away and closes the connection.
#   2. an outcome (done with a follow-up and on_success, retry, dead with
#      on_dead) whose COMMIT answer is lost is not rewritten as "lease
#      lost": its side effects happen once and the history holds one run
#      row, in exec and in persistent mode (and in both reservation
#      modes);
#      An outcome that handed the job waiting for it to its own worker
#      (a chain) and whose answer is lost: the worker reads the job back
#      and runs it, charged one attempt, not held until its lease ends;
#   3. a claim whose answer is lost uses up no attempt: once back, the
#      worker gives its rows back, attempt refunded, and with
#      max_attempts = 1 the job still runs, in both reservation modes;
#   1. a reconnect through a host list of silent hosts (they accept TCP
#      and never greet) does not outlast a lease: the worker stops its
#      handler before the lease it last wrote ends.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
setup replylost
TH=$top_srcdir/tests/handlers
PX=$T/px
replylost_start "$PX"

cat >"$T/alert.sh" <<'EOS'
#!/bin/sh
# alert.sh DIR: one file per dead job that reached on_dead.
cat >"$1/$JOBQ_JOB_ID.$$"
EOS
# once.sh FILE: fails (75) the first time for a job, succeeds after.
cat >"$T/once.sh" <<'EOS'
#!/bin/sh
cat >/dev/null
[ -e "$1.$JOBQ_JOB_ID" ] && exit 0
: >"$1.$JOBQ_JOB_ID"
echo "not yet" >&2
exit 75
EOS
chmod +x "$T"/*.sh

# Runs a worker through the proxy until the queue is empty.
drain() {
	timeout 90 "$JOBQ" -c "$CONF" work --stop-when-empty 2>>"$T/work.$1.log"
}
dropped() { wc -l <"$PX/dropped" 2>/dev/null || echo 0; }

# Exec mode with SKIP LOCKED claims, persistent mode with the conditional
# UPDATE: the outcome's statements are the same in both reservation modes.
for mode in exec persistent; do
	reserve=skip-locked
	[ $mode = exec ] || reserve=update
	empty_tables
	rm -rf "$T/alerts" "$PX/dropped" "$T/marks"; mkdir "$T/marks"
	mkdir "$T/alerts"
	SOCKET=$T/p.sock write_conf <<EOC
[worker]
poll_interval = 20ms
reserve_mode = $reserve
reserve_ttl = 30s
backoff = 1s
backoff_jitter = 0

[queue default]

[handler parent]
exec = $TH/control.sh follow_ok
on_success = tail
[handler child]
exec = /bin/true
[handler tail]
exec = /bin/true

[handler dead]
exec = $TH/helper_exit.py
mode = $mode
env.PYTHONPATH = $HANDLERS
env.PYTHONDONTWRITEBYTECODE = 1
on_dead = $T/alert.sh $T/alerts

[handler again]
exec = $T/once.sh $T/marks/once

[handler link]
exec = $TH/helper_exit.py
mode = $mode
env.PYTHONPATH = $HANDLERS
env.PYTHONDONTWRITEBYTECODE = 1
max_attempts = 1

[handler fan]
exec = $TH/deps_log.py $T/flog $mode
mode = $mode
env.PYTHONPATH = $HANDLERS
env.PYTHONDONTWRITEBYTECODE = 1

[handler gated]
exec = $TH/deps_log.py $T/dlog $mode
mode = $mode
env.PYTHONPATH = $HANDLERS
env.PYTHONDONTWRITEBYTECODE = 1
on_success = tail
EOC
	p=$(jq_ enqueue parent '{}')
	echo "DELETE FROM jobs WHERE id = $p " >"$PX/drop"
	drain "$mode"
	is "$(dropped)" 1 "[$mode] the done outcome's answer was lost once"
	is "$(sql "SELECT COUNT(*) FROM job_runs WHERE job_id = $p")" 1 "[$mode] done: one run row"
	is "$(sql "SELECT outcome FROM job_runs WHERE job_id = $p")" done "[$mode] done: recorded as done"
	is "$(sql "SELECT COUNT(*) FROM jobs WHERE type = 'child'") $(sql "SELECT COUNT(*) FROM job_runs WHERE type = 'tail'")" \
		"1 1" "[$mode] done: its follow-up queued once, its on_success ran once"

	d=$(jq_ enqueue dead '{"exit": 65}')
	rm -f "$PX/dropped"
	echo "INSERT INTO failed_jobs .* WHERE id = $d " >"$PX/drop"
	drain "$mode"
	is "$(dropped)" 1 "[$mode] the dead outcome's answer was lost once"
	is "$(sql "SELECT COUNT(*) FROM job_runs WHERE job_id = $d")" 1 "[$mode] dead: one run row"
	is "$(sql "SELECT CONCAT_WS('|', outcome, (SELECT COUNT(*) FROM failed_jobs WHERE id = $d)) FROM job_runs WHERE job_id = $d")" \
		"dead|1" "[$mode] dead: recorded as dead, in failed_jobs"
	is "$(ls "$T/alerts" | grep -c "^$d\.")" 1 "[$mode] dead: on_dead ran once"
	# The dead-letter row committed, then its read-back for on_dead lost:
	# on_dead still runs, once, with what the worker wrote.
	d2=$(jq_ enqueue dead '{"exit": 65}')
	rm -f "$PX/dropped"
	echo "FROM failed_jobs WHERE id = $d2\$" >"$PX/drop"
	drain "$mode"
	is "$(dropped)/$(sql "SELECT COUNT(*) FROM failed_jobs WHERE id = $d2")" 1/1 "[$mode] dead, its read-back's answer lost"
	is "$(ls "$T/alerts" | grep -c "^$d2\.")" 1 "[$mode] on_dead ran once all the same"
	like "$(cat "$T/alerts/$d2".* 2>/dev/null)" "\"id\":$d2,.*\"reason\":\"exit 65 is a permanent failure\"" \
		"[$mode] with the job and the reason the worker wrote"

	a=$(jq_ enqueue again '{}')
	rm -f "$PX/dropped"
	echo "UPDATE jobs SET attempts = .* WHERE id = $a " >"$PX/drop"
	drain "$mode"
	is "$(dropped)" 1 "[$mode] the retry outcome's answer was lost once"
	is "$(sql "SELECT GROUP_CONCAT(CONCAT(attempt, ':', outcome) ORDER BY id) FROM job_runs WHERE job_id = $a")" \
		"1:retry,2:done" "[$mode] retry: one row per run, then done on attempt 2"
	l1=$(jq_ enqueue link '{"exit": 0}')
	l2=$(jq_ enqueue --after "$l1" link '{"exit": 0}')
	l3=$(jq_ enqueue --after "$l2" link '{"exit": 0}')
	rm -f "$PX/dropped"
	echo "DELETE FROM jobs WHERE id = $l1 AND lease_token" >"$PX/drop"
	t0=$(date +%s)
	drain "$mode"
	is "$(dropped)" 1 "[$mode] the outcome that hands the next link off: its answer was lost once"
	is "$(sql "SELECT GROUP_CONCAT(CONCAT(job_id - $l1, ':', attempt, ':', outcome) ORDER BY job_id)
		FROM job_runs WHERE job_id IN ($l1, $l2, $l3)")" "0:1:done,1:1:done,2:1:done" \
		"[$mode] every link ran once, as attempt 1 of 1: the job handed off was read back and run"
	ok "$(($(date +%s) - t0 < 20 ? 0 : 1))" "[$mode] without waiting for the handed-off job's lease to end"
	# A job that gains a waiter while it runs: its lean outcome's fence
	# fails on that alone, and that answer is lost.  Found so, it is
	# written again in full: done once, its waiter released, not taken
	# for a lost lease and run again.
	rm -f "$T/gate" "$PX/dropped"
	tails=$(sql "SELECT COUNT(*) FROM job_runs WHERE type = 'tail'")
	gj=$(jq_ enqueue gated "{\"name\": \"G\", \"gate\": \"$T/gate\"}")
	echo "DELETE FROM jobs WHERE id = $gj AND lease_token = '[0-9a-f]+' AND has_waiters = 0" >"$PX/drop"
	drain "$mode" &
	dpid=$!
	for ((i = 0; i < 300; i++)); do grep -q "^start G $gj " "$T/dlog" 2>/dev/null && break; sleep 0.1; done
	gw=$(jq_ enqueue --after "$gj" child '{}')
	: >"$T/gate"
	wait $dpid
	is "$(dropped)" 1 "[$mode] the lean outcome of a job that gained a waiter: its answer was lost once"
	is "$(sql "SELECT GROUP_CONCAT(CONCAT(attempt, ':', outcome) ORDER BY id) FROM job_runs WHERE job_id = $gj")" "1:done" \
		"[$mode] written again in full: one run, done"
	is "$(grep -c "^start G $gj " "$T/dlog")/$(where "$gw")/$(($(sql "SELECT COUNT(*) FROM job_runs WHERE type = 'tail'") - tails))" \
		"1/gone/1" "[$mode] it ran once, its waiter was released and ran, its on_success ran once"
	# Follow-ups that wait for other jobs are written in their parent's
	# outcome transaction before its statements: a job that gained a
	# waiter while it ran (its outcome built again in full) and whose
	# COMMIT answer is lost; then one whose outcome statements' answer is
	# lost (the transaction rolled back).  Each time: one run, done, the
	# two follow-ups once, the second still waiting for the delayed job.
	y=$(jq_ enqueue --delay 1h child '{"k": 0}')
	for drop in '^COMMIT$' '^DO 0;DELETE FROM jobs WHERE id = '; do
		rm -f "$T/fgate" "$PX/dropped"
		fp=$(jq_ enqueue fan "{\"name\": \"FP\", \"gate\": \"$T/fgate\", \"follow\": [
			{\"type\": \"child\", \"ref\": \"a\", \"payload\": {\"k\": 1}},
			{\"type\": \"child\", \"after\": [\"a\", $y], \"payload\": {\"k\": 2}}]}")
		drain "$mode" &
		dpid=$!
		for ((i = 0; i < 300; i++)); do grep -q "^start FP $fp " "$T/flog" 2>/dev/null && break; sleep 0.1; done
		[ "$drop" = '^COMMIT$' ] && fw=$(jq_ enqueue --after "$fp" child '{"k": 3}')
		echo "$drop" >"$PX/drop"
		: >"$T/fgate"
		wait $dpid
		like "$(cat "$PX/dropped" 2>/dev/null)" "${drop//\$/}" "[$mode] a parent of waiting follow-ups: the answer to '$drop' was lost"
		kids=$(sql "SELECT follow_ups FROM job_runs WHERE job_id = $fp")
		is "$(sql "SELECT GROUP_CONCAT(CONCAT(attempt, ':', outcome) ORDER BY id) FROM job_runs WHERE job_id = $fp")/$(wc -w <<<"${kids//,/ }")" \
			"1:done/2" "[$mode] '$drop': one run, done, naming two follow-ups"
		is "$(sql "SELECT CONCAT_WS(' ', (SELECT COUNT(*) FROM job_runs WHERE job_id IN ($kids) AND outcome = 'done'),
			(SELECT GROUP_CONCAT(CONCAT(JSON_VALUE(payload, '\$.k'), ':', waiting_on)) FROM jobs WHERE id IN ($kids)))")" "1 2:1" \
			"[$mode] '$drop': the first ran once; the second waits for the delayed job alone"
		sql "DELETE FROM jobs WHERE id IN ($kids); DELETE FROM jobq_deps"
	done
	is "$(where "$fw")" gone "[$mode] the waiter the parent gained as it ran was released and ran"
	sql "DELETE FROM jobs WHERE id = $y; UPDATE jobs SET has_waiters = 0"

	# A job that never starts (its type is unknown) ends dead without a
	# run row.  A job that waits for it is added by plain SQL after the
	# claim, in a transaction still open when that outcome (held at the
	# proxy until then) is let go: the outcome waits for it, and the
	# waiter is cancelled with the job, naming it, not left waiting for
	# good; the job is dead-lettered once.
	nx=$(sql "INSERT INTO jobs (queue, type, payload, available_at) VALUES ('default', 'nosuch', '{}', UTC_TIMESTAMP(6));
		SELECT LAST_INSERT_ID()")
	rm -f "$PX/held"
	echo "INSERT INTO failed_jobs .* WHERE id = $nx " >"$PX/hold"
	drain "$mode.unknown" &
	dpid=$!
	for ((i = 0; i < 300; i++)); do [ -e "$PX/held" ] && break; sleep 0.1; done
	sql "START TRANSACTION;
		SELECT id FROM jobs WHERE id = $nx AND lease_token IS NOT NULL FOR UPDATE;
		INSERT INTO jobs (queue, type, payload, available_at, waiting_on)
			VALUES ('default', 'child', '{}', '9999-12-31 23:59:59', 1);
		SET @w = LAST_INSERT_ID();
		INSERT INTO jobq_deps (after_id, job_id) VALUES ($nx, @w);
		UPDATE jobs SET has_waiters = 1 WHERE id = $nx;
		SELECT @w;
		DO SLEEP(2);
		COMMIT" >"$T/nw" &
	epid=$!
	sleep 0.5
	rm -f "$PX/hold"
	wait $epid
	nw=$(tail -1 "$T/nw")
	wait $dpid
	like "$(cat "$PX/held" 2>/dev/null)" "^START TRANSACTION;INSERT INTO failed_jobs" "[$mode] the outcome of the job of an unknown type was held until its waiter was added"
	is "$(sql "SELECT GROUP_CONCAT(CONCAT(id, ':', reason)) FROM failed_jobs WHERE id = $nx OR reason LIKE '%dead job $nx %'")" \
		"$nx:unknown job type" "[$mode] the job is dead-lettered once, as unknown"
	like "$(sql "SELECT CONCAT_WS('|', outcome, error) FROM job_runs WHERE job_id = $nw")" \
		"^cancelled\\|cancelled by dependency $nx \\(dead\\)" "[$mode] its waiter, added as it was held, is cancelled naming it"
	problems=$(grep -E "lease lost|dropped" "$T/work.$mode.log" | head -3)
	is "$problems" "" "[$mode] no outcome was taken for lost"
	like "$(cat "$T/work.$mode.log")" "earlier write's answer was lost, and the database shows it applied" \
		"[$mode] the worker says what happened"
done

# 3: the claim's answer is lost.
for mode in skip-locked update; do
	empty_tables
	rm -f "$PX/dropped"
	SOCKET=$T/p.sock write_conf <<EOC
[worker]
poll_interval = 20ms
reserve_mode = $mode
reserve_ttl = 60s

[queue default]

[handler one]
exec = /bin/true
max_attempts = 1
EOC
	j=$(jq_ enqueue one '{}')
	echo "^UPDATE jobs (FORCE INDEX \\(PRIMARY\\) )?SET available_at = COALESCE\\(IF\\(attempts > 0.*attempts = attempts \\+" >"$PX/drop"
	drain "claim.$mode"
	is "$(dropped)" 1 "[$mode] the claim's answer was lost once"
	is "$(where "$j")" gone "[$mode] the job ran to done, not dead-lettered"
	is "$(sql "SELECT CONCAT_WS('|', attempt, outcome) FROM job_runs WHERE job_id = $j")" "1|done" \
		"[$mode] as attempt 1 of 1: the lost claim used no attempt"
	like "$(cat "$T/work.claim.$mode.log")" "1 jobs of a claim whose answer was lost are back in their queue" \
		"[$mode] the worker gave the claimed job back once it was connected again"
done

# 1: the connection is cut right after a heartbeat and the host list is
# the cut proxy and six silent hosts.  Each silent host costs a connect
# timeout (the wait limit's bound, about 2 s here); together they last
# far longer than the 6 s lease.
PX2=$T/px2
replylost_start "$PX2" tcp:127.0.0.1:0
for i in 1 2 3 4 5 6; do replylost_start "$T/silent$i" tcp:127.0.0.1:0 silent; done
hosts=127.0.0.1:$(cat "$PX2/port")
for i in 1 2 3 4 5 6; do hosts="$hosts, 127.0.0.1:$(cat "$T/silent$i/port")"; done
empty_tables
cat >"$CONF" <<EOC
[database]
host = $hosts
user = root
database = $DB

[worker]
poll_interval = 50ms
reserve_ttl = 6s

[queue default]

[handler long]
exec = /bin/sh -c 'echo \$\$ >$T/long.pid; exec sleep 60'
EOC
id=$(jq_ enqueue long '{}')
start_worker
for ((i = 0; i < 100; i++)); do [ -s "$T/long.pid" ] && break; sleep 0.1; done
hpid=$(cat "$T/long.pid")
# Right after a heartbeat: the lease was just extended.
l0=$(sql "SELECT lease_expires_at FROM jobs WHERE id = $id")
for ((i = 0; i < 100; i++)); do
	[ "$(sql "SELECT lease_expires_at FROM jobs WHERE id = $id")" != "$l0" ] && break
	sleep 0.05
done
: >"$PX2/cut"
ends=$(sql "SELECT UNIX_TIMESTAMP(lease_expires_at) * 1000 FROM jobs WHERE id = $id")
ends=${ends%.*}
for ((i = 0; i < 200; i++)); do kill -0 "$hpid" 2>/dev/null || break; sleep 0.05; done
gone=$((${EPOCHREALTIME/./} / 1000))
ok "$([ "$gone" -lt "$ends" ]; echo $?)" \
	"host list of silent hosts: the handler is stopped before its lease ends ($((ends - gone)) ms before)"
like "$(cat "$T/worker.$((${#BG_PIDS[@]} - 1)).log")" "stopping its handler: its lease could not be extended" \
	"host list of silent hosts: the worker says why it stopped the handler"
kill -TERM "$WORKER_PID"
wait_exit 60 "$WORKER_PID" >/dev/null
finish
