#!/bin/bash
# A job whose worker died (kill -9) as its handler ran, then ended by
# the next claim (attempts used up), a cancel or its expiry: the
# dead-letter row counts the attempts made ("1 of 1", not "2 of 1"), and
# the final run row of a job ended while stale says its worker was lost
# (naming it), not "not started".  An attempts count an application set
# in SQL past max_attempts is shown as it was, and the reason does not
# blame a worker.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
. "$top_srcdir/tests/operator/common.sh"
setup life2_stale

write_conf <<EOC
[worker]
poll_interval = 20ms
reserve_ttl = 1s

[queue default]

[handler slow]
exec = /bin/sh -c 'echo started >>$T/started; exec sleep 60'
max_attempts = 1
EOC

# kill_running ID: starts a worker, waits until job ID's handler runs,
# kills the worker and its handler with SIGKILL, and waits until the
# lease has lapsed (the job is stale).
kill_running() {
	: >"$T/started"
	start_worker
	for ((i = 0; i < 100; i++)); do
		[ -s "$T/started" ] && break
		sleep 0.1
	done
	is "$(cat "$T/started")" started "job $1: its handler started"
	# the worker first: killed before it, the handler would be an
	# outcome (killed by SIGKILL) the worker writes
	kids=$(pgrep -P "$WORKER_PID")
	kill -KILL "$WORKER_PID"
	wait "$WORKER_PID" 2>/dev/null
	[ -z "$kids" ] || kill -KILL $kids
	BG_PIDS=()
	wait_for_sql 10 "SELECT COUNT(*) FROM jobs WHERE id = $1 AND lease_expires_at < UTC_TIMESTAMP(6)" 1 ||
		diag "job $1 did not go stale"
}

# ---- the next claim buries it: attempts used up ----
a=$(jq_ enqueue slow '{}')
kill_running "$a"
timeout 60 "$JOBQ" -c "$CONF" work --stop-when-empty 2>"$T/w.log"
is "$(sql "SELECT CONCAT_WS('|', attempts, reason) FROM failed_jobs WHERE id = $a")" \
	"1|attempts used up (1 of 1; the last ended with its worker)" \
	"the dead-letter row counts the one attempt made, not the claim that buried it"
run failed show "$a"
like "$OUT" "attempts +1 of 1" "failed show: 'attempts 1 of 1', never more than max_attempts"
run failed show --json "$a"
is "$(printf '%s' "$OUT" | jget 'd["attempts"]')" 1 "failed show --json: attempts 1"

# ---- a cancel of the stale job: its run row says the worker was lost ----
b=$(jq_ enqueue slow '{}')
kill_running "$b"
wid=$(sql "SELECT reserved_by FROM jobs WHERE id = $b")
run cancel "$b"
is "$RC" 0 "cancel of a stale job: exit 0"
is "$(sql "SELECT CONCAT_WS('|', attempt, outcome, exit_status) FROM job_runs WHERE job_id = $b")" \
	"1|cancelled|worker lost" "its one run row: attempt 1 cancelled, 'worker lost', not 'not started'"
like "$(sql "SELECT error FROM job_runs WHERE job_id = $b")" \
	"^cancelled by .*; its worker $(re "$wid"), which reserved it at [0-9-]+ [0-9:]+ UTC, ended without an outcome \(its lease lapsed at " \
	"and its error names the worker that held it"

# ---- expiry of a stale job: the same ----
c=$(jq_ enqueue --expires-in 4s slow '{}')
kill_running "$c"
wait_for_sql 10 "SELECT COUNT(*) FROM jobs WHERE id = $c AND expires_at < UTC_TIMESTAMP(6)" 1
jq_ prune >/dev/null 2>&1
timeout 30 "$JOBQ" -c "$CONF" work --stop-when-empty 2>"$T/w3.log"
is "$(sql "SELECT CONCAT_WS('|', outcome, exit_status) FROM job_runs WHERE job_id = $c")" "expired|worker lost" \
	"an expired stale job: 'worker lost'"
like "$(sql "SELECT error FROM job_runs WHERE job_id = $c")" "^expired: not started again by .*; its worker " \
	"and it says it was not started again, naming the worker"

# ---- a job never reserved still says "not started" ----
d=$(jq_ enqueue --delay 1h slow '{}')
run cancel "$d"
like "$(sql "SELECT CONCAT_WS('|', exit_status, error) FROM job_runs WHERE job_id = $d")" \
	"^not started\|cancelled by cli:$(id -un) at [0-9: -]+ UTC$" "a job no worker held: 'not started', as before"

# ---- attempts set by an application past max_attempts ----
e=$(sql "INSERT INTO jobs (queue, type, payload, available_at, attempts)
	VALUES ('default', 'slow', '{}', UTC_TIMESTAMP(), 4); SELECT LAST_INSERT_ID()")
timeout 30 "$JOBQ" -c "$CONF" work --stop-when-empty 2>"$T/w4.log"
is "$(sql "SELECT CONCAT_WS('|', attempts, reason) FROM failed_jobs WHERE id = $e")" \
	"4|attempts used up (4 of 1 when claimed: the count was set outside jobq, or max_attempts lowered since; not run)" \
	"an application's count of 4: kept as it was, and the reason does not blame a dead worker"
run failed show "$e"
like "$OUT" "attempts +4 of 1" "failed show: 'attempts 4 of 1', the count the row came with"

# ---- expire_after and a job whose worker died running it ----
# expire_after counts time due without starting.  The job had started:
# it is due again when its lease runs out, and measured from then, so
# the crash costs it that attempt, not the job.  Its handler sleeps on
# its first run only; the claim after the kill comes 4.5 s after the
# job was enqueued, past expire_after (4s) from then, well within it
# from when the lease ran out (about 1 s after the kill).
cat >"$T/crashy.sh" <<EOS
#!/bin/sh
# crashy.sh exec|persistent: notes each start in started; sleeps on the first
step() { echo started >>"$T/started"; [ "\$(wc -l <"$T/started")" -gt 1 ] || sleep 60; }
if [ "\$1" = persistent ]; then
	while read -r l; do step; echo '{"status": 0}' >&3; done
else
	cat >/dev/null; step
fi
EOS
chmod +x "$T/crashy.sh"
for hmode in exec persistent; do
	write_conf <<EOC
[worker]
poll_interval = 20ms
reserve_ttl = 1s

[queue default]

[handler slow]
exec = $T/crashy.sh $hmode
mode = $hmode
expire_after = 4s
EOC
	f=$(jq_ enqueue slow '{}')
	kill_running "$f"
	wait_for_sql 10 "SELECT TIMESTAMPDIFF(MICROSECOND, available_at, UTC_TIMESTAMP(6)) > 4500000 FROM jobs WHERE id = $f" 1
	timeout 60 "$JOBQ" -c "$CONF" work --stop-when-empty 2>"$T/w5.$hmode.log"
	is "$(sql "SELECT GROUP_CONCAT(CONCAT_WS('|', attempt, outcome) ORDER BY id) FROM job_runs WHERE job_id = $f")" "2|done" \
		"[$hmode] expire_after: a job whose worker died running it runs again, as attempt 2, and is done"
	is "$(grep -c . "$T/started")" 2 "[$hmode] ... its handler started twice"
done

# The same rule in each reservation mode, on rows as a dead worker
# leaves them, lease lapsed a second ago, due 10 s: one that had started
# (an attempt counts) runs; one held ahead, never started, is due since
# its available_at and expires, not started.
# stale ATTEMPTS: a row as a dead worker leaves it, with ATTEMPTS counted; its id.
stale() {
	sql "INSERT INTO jobs (queue, type, payload, available_at, attempts, reserved_at, reserved_by, lease_token, lease_expires_at)
		VALUES ('default', 'quick', '{}', UTC_TIMESTAMP(6) - INTERVAL 10 SECOND, $1, UTC_TIMESTAMP(6) - INTERVAL 2 SECOND,
		'gone:1:x', REPEAT('b', 32), UTC_TIMESTAMP(6) - INTERVAL 1 SECOND); SELECT LAST_INSERT_ID()"
}
for rmode in skip-locked update; do
	write_conf <<EOC
[worker]
poll_interval = 20ms
reserve_mode = $rmode

[queue default]

[handler quick]
exec = /bin/true
expire_after = 5s
EOC
	g=$(stale 1)
	h=$(stale 0)
	timeout 60 "$JOBQ" -c "$CONF" work --stop-when-empty 2>"$T/w6.$rmode.log"
	is "$(sql "SELECT CONCAT_WS('|', attempt, outcome) FROM job_runs WHERE job_id = $g")" "2|done" \
		"[$rmode] expire_after: a stale job that had started runs again (measured from its lease's end)"
	like "$(sql "SELECT CONCAT_WS('|', outcome, error) FROM job_runs WHERE job_id = $h")" \
		"^expired\|expired: due for longer than its handler's expire_after \(5s\)" \
		"[$rmode] a stale job never started expires (measured from its available_at)"
done
finish
