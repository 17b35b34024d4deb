#!/bin/bash
# Cancel and expire (issue 22, items 1 and 2), in exec and persistent
# mode: a running handler that spawned a child is stopped, its whole
# process group gone 2 s later, the job cancelled (not retried, not
# dead-lettered) and shown so; a queued job is cancelled at once; a job
# that ended first keeps its outcome and the command says so; unknown
# ids change nothing; a filter counts, confirms and cancels; a cancel
# that meets the outcome write resolves one way; a job cancelled before
# is a job that had ended (exit 1), not cancelled again; an expired job never
# runs and says why (claim, sweep, handler default, batch, plain SQL).
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
setup cancel
TH=$top_srcdir/tests/handlers

gone_pids() { # every pid in $@ gone (or a zombie)
	local p st
	for p in "$@"; do
		st=$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null) || continue
		[ "$st" = Z ] || return 1
	done
}
last_run() { sql "SELECT CONCAT_WS('|', outcome, exit_status) FROM job_runs WHERE job_id = $1 ORDER BY id DESC LIMIT 1"; }

for hmode in exec persistent; do
	empty_tables
	rm -f "$T"/tree.* "$T"/ran.*
	extra=""
	[ $hmode = persistent ] && extra="mode = persistent
env.PYTHONPATH = $HANDLERS"
	write_conf <<EOC
[worker]
poll_interval = 20ms
reserve_ttl = 5s
heartbeat = 1s
workdir = $T

[queue default]
[queue idle]

[handler tree]
exec = $TH/cancel_tree.py $T $hmode
kill_grace = 1s
backoff = 1s
$extra

[handler fexp]
exec = /bin/sh -c 'echo "{\\"enqueue\\": {\\"type\\": \\"tree\\", \\"payload\\": {\\"quick\\": true}, \\"delay\\": \\"1h\\", \\"expires_in\\": \\"2h\\"}}" >&3'

[handler late]
exec = $TH/cancel_tree.py $T $hmode
queue = idle
expire_after = 1s
$extra
EOC
	start_worker -v --concurrency 2 --queue default
	w=$WORKER_PID
	a=$(jq_ enqueue tree '{}')
	wait_for_sql 30 "SELECT lease_token IS NOT NULL FROM jobs WHERE id = $a" 1
	i=0; while [ ! -s "$T/tree.$a" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
	read -r hp cp <"$T/tree.$a"
	t0=$(date +%s%N)
	out=$(jq_ cancel "$a" 2>&1); rc=$?
	t1=$(date +%s%N)
	is "$rc" 0 "[$hmode] cancel of a running job exits 0"
	like "$out" "job $a: running; its worker is stopping it" "[$hmode] it says the worker is stopping it"
	like "$out" "job $a: cancelled \\(its handler was stopped\\)" "[$hmode] and then that it is cancelled"
	ok $([ $(((t1 - t0) / 1000000)) -lt 5000 ]; echo $?) "[$hmode] within a second and the grace ($(((t1 - t0) / 1000000)) ms)"
	sleep 2
	gone_pids "$hp" "$cp"
	ok $? "[$hmode] 2 s later no process of the handler's group remains (handler $hp, its child $cp)"
	is "$(where "$a")" gone "[$hmode] the job left the queue (not retried, not dead-lettered)"
	is "$(sql "SELECT GROUP_CONCAT(outcome) FROM job_runs WHERE job_id = $a")" cancelled "[$hmode] its one run is cancelled"
	like "$(sql "SELECT error FROM job_runs WHERE job_id = $a")" "^jobq: cancelled by cli:" "[$hmode] the run says who cancelled it"
	like "$(jq_ show "$a")" "job $a: cancelled \\(no longer queued" "[$hmode] jobq show says cancelled"
	like "$(jq_ show --json "$a" | tr -d ' \t\n')" '"state":"cancelled"' "[$hmode] and show --json"

	# The handler slot is free again (persistent: the process was replaced).
	q=$(jq_ enqueue tree '{"quick": true}')
	wait_for_sql 30 "SELECT COUNT(*) FROM job_runs WHERE job_id = $q" 1
	is "$(where "$q"),$(last_run "$q")" "gone,done|exit 0" "[$hmode] the next job runs and is done"

	# A queued (delayed) job: cancelled at once, never runs.
	d=$(jq_ enqueue --delay 1h tree '{"quick": true}')
	out=$(jq_ cancel "$d" 2>&1); rc=$?
	is "$rc|$out" "0|job $d: cancelled" "[$hmode] a delayed job is cancelled at once"
	is "$(where "$d"),$(last_run "$d")" "gone,cancelled|not started" "[$hmode] its run says it never started"
	# Cancelled before: it had ended, like any end (exit 1), and says so.
	out=$(jq_ cancel "$d" 2>&1); rc=$?
	is "$rc|$out" "1|job $d: had already ended as cancelled" "[$hmode] cancelled again: had ended, exit 1"
	is "$(sql "SELECT COUNT(*) FROM job_runs WHERE job_id = $d")" 1 "[$hmode] and it is cancelled once"

	# Ended first: the command says how, exit 1.
	out=$(jq_ cancel "$q" 2>&1); rc=$?
	is "$rc|$out" "1|job $q: had already ended as done" "[$hmode] a done job stays done, exit 1"
	# An unknown id: nothing is cancelled, exit 65.
	d2=$(jq_ enqueue --delay 1h tree '{"quick": true}')
	out=$(jq_ cancel "$d2" 999999 2>&1); rc=$?
	is "$rc" 65 "[$hmode] an unknown id: exit 65"
	like "$out" "no job 999999" "[$hmode] it is named"
	is "$(where "$d2")" queue "[$hmode] and the other job is untouched"

	# Expiry: a worker that claims an expired job ends it unrun.
	e1=$(jq_ enqueue --queue idle --expires-in 1s tree '{"quick": true}')
	e2=$(jq_ enqueue late '{"quick": true}')
	# (an expires_at already past is refused: one a second ahead, by the database's clock)
	soon=$(sql "SELECT DATE_FORMAT(UTC_TIMESTAMP(6) + INTERVAL 1 SECOND, '%Y-%m-%dT%H:%i:%s.%fZ')")
	e3=$(printf '{"type":"tree","queue":"idle","payload":{"quick":true},"expires_at":"%s"}\n' "$soon" | jq_ enqueue --batch | tail -n 1)
	sql "INSERT INTO jobs (queue, type, payload, available_at, expires_at) VALUES ('idle', 'tree', '{\"quick\":true}', UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) - INTERVAL 1 SECOND)"
	e4=$(sql "SELECT MAX(id) FROM jobs")
	e5=$(jq_ enqueue --queue idle --expires-in 1h tree '{"quick": true}')
	like "$(jq_ show "$e5")" "expires +.* \\(never starts after\\)" "[$hmode] jobq show prints a queued job's expiry"
	like "$(jq_ show --json "$e5" | tr -d ' \t\n')" '"expires_at":"20' "[$hmode] and show --json"
	sleep 1.5
	timeout 60 "$JOBQ" -c "$CONF" work --queue idle --stop-when-empty 2>"$T/idle.$hmode.log"
	is "$?" 0 "[$hmode] a worker drains the queue of expired jobs"
	for e in $e1 $e2 $e4; do
		is "$(where "$e"),$(last_run "$e"),$([ -e "$T/ran.$e" ] && echo ran)" "gone,expired|not started," "[$hmode] job $e expired unrun"
	done
	like "$(sql "SELECT error FROM job_runs WHERE job_id = $e1")" "^expired: (its expires_at passed|not started by 20)" "[$hmode] --expires-in: the reason says so (claim or sweep)"
	like "$(sql "SELECT error FROM job_runs WHERE job_id = $e2")" "expire_after \\(1s\\)" "[$hmode] expire_after: the reason names it"
	is "$(where "$e5"),$(last_run "$e5"),$([ -e "$T/ran.$e5" ] && echo ran)" "gone,done|exit 0,ran" "[$hmode] a job within its expiry runs"
	like "$(jq_ show "$e1")" "job $e1: expired \\(no longer queued" "[$hmode] jobq show says expired"
	like "$e3" "^enqueued 1 job" "[$hmode] a batch line with an expires_at a second ahead is enqueued"
	is "$(last_run "$(sql "SELECT MAX(job_id) FROM job_runs WHERE outcome = 'expired' AND job_id NOT IN ($e1,$e2,$e4)")")" "expired|not started" \
		"[$hmode] a batch line's expires_at"

	# A follow-up (fd 3) with expires_in: it is kept, from the follow-up's
	# enqueue (not its due time).  Moved before its due time in SQL (no
	# way in takes a job that would never run), the sweep ends it.
	fx=$(jq_ enqueue fexp '{}')
	fq="SELECT r.id FROM jobs r JOIN job_runs p ON FIND_IN_SET(r.id, p.follow_ups) WHERE p.job_id = $fx"
	wait_for_sql 20 "SELECT COUNT(*) FROM ($fq) AS f" 1
	is "$(sql "SELECT TIMESTAMPDIFF(MINUTE, UTC_TIMESTAMP(6), expires_at) FROM jobs WHERE id = ($fq)")" 119 \
		"[$hmode] a follow-up's expires_in: its expiry is 2h from its enqueue"
	sql "UPDATE jobs SET expires_at = UTC_TIMESTAMP(6) WHERE id = ($fq)"
	wait_for_sql 20 "SELECT COUNT(*) FROM job_runs r JOIN job_runs p ON FIND_IN_SET(r.job_id, p.follow_ups)
		WHERE p.job_id = $fx AND r.outcome = 'expired'" 1
	ok $? "[$hmode] a follow-up's expires_in: it expires unstarted"

	# The sweep: a delayed job past its expiry, in a queue a worker serves
	# (set in SQL: no way in takes a job that would expire before it is due).
	s1=$(delayed_expiring 1 tree '{"quick": true}')
	wait_for_sql 20 "SELECT COUNT(*) FROM job_runs WHERE job_id = $s1 AND outcome = 'expired'" 1
	ok $? "[$hmode] the sweep expires a delayed job within seconds"
	like "$(sql "SELECT error FROM job_runs WHERE job_id = $s1")" "^expired: not started by 20" "[$hmode] the sweep's reason has the time"

	# A filter: --dry-run counts, --yes cancels.
	for i in 1 2 3; do jq_ enqueue --queue idle --delay 1h tree '{}' >/dev/null; done
	is "$(jq_ cancel --queue idle --dry-run)" "3 jobs to cancel (dry run: nothing changed)" "[$hmode] --dry-run counts"
	out=$(jq_ cancel --queue idle --type tree </dev/null 2>&1); rc=$?
	is "$rc" 64 "[$hmode] a filter with no terminal and no --yes: exit 64"
	like "$out" "cancel: this cancels jobs and there is no terminal" "[$hmode] saying what it would do (it deletes nothing)"
	like "$(jq_ cancel --queue idle --yes)" "^3 jobs cancelled" "[$hmode] --yes cancels them"
	is "$(sql "SELECT COUNT(*) FROM jobs WHERE queue = 'idle'")" 0 "[$hmode] none is left"

	# A cancel that meets the outcome write: the handler has ended (exit
	# 0) while another session holds the job's row; the cancel waits on
	# the same lock.  One of them wins, and both the database and the
	# command say which.
	rm -f "$T/go"
	b=$(jq_ enqueue tree "{\"gate\": \"$T/go\"}")
	wait_for_sql 30 "SELECT lease_token IS NOT NULL FROM jobs WHERE id = $b" 1
	sql "START TRANSACTION; SELECT id FROM jobs WHERE id = $b FOR UPDATE; DO SLEEP(3); COMMIT" >/dev/null &
	lockp=$!
	sleep 0.5
	touch "$T/go"
	sleep 0.5
	out=$(jq_ cancel --wait 10s "$b" 2>&1); rc=$?
	wait $lockp
	wait_for_sql 10 "SELECT COUNT(*) FROM jobs WHERE id = $b" 0
	runs=$(sql "SELECT GROUP_CONCAT(outcome ORDER BY id) FROM job_runs WHERE job_id = $b")
	case "$runs" in
	done) like "$out" "had already ended as done" "[$hmode] cancel during the outcome write: done won, and the command says so" ;;
	cancelled) like "$out" "job $b: cancelled" "[$hmode] cancel during the outcome write: the cancel won, and the command says so" ;;
	*) ok 1 "[$hmode] cancel during the outcome write: one final run, not '$runs'" ;;
	esac
	is "$(where "$b")" gone "[$hmode] the job ended once ($runs)"

	kill -TERM "$w"
	wait_exit 30 "$w"
	is "$?" 0 "[$hmode] the worker stops cleanly"
done

# A second cancel of a job its worker is stopping: the request stays the
# first one (who and when), which the run will name.  The lease is a
# live one no worker acts on.
r=$(jq_ enqueue --delay 1h tree '{}')
sql "UPDATE jobs SET lease_token = REPEAT('a', 32), lease_expires_at = UTC_TIMESTAMP(6) + INTERVAL 1 HOUR WHERE id = $r"
out=$(jq_ cancel --no-wait "$r" 2>&1); rc=$?
is "$rc|$out" "0|job $r: running; its worker is stopping it" "a reserved job: the cancel is requested"
sql "UPDATE jobs SET cancel_by = 'www:alice (first)' WHERE id = $r"
first=$(sql "SELECT cancel_at FROM jobs WHERE id = $r")
sleep 0.1
out=$(jq_ cancel --no-wait "$r" 2>&1); rc=$?
is "$rc|$out" "0|job $r: running; its worker is stopping it" "asked again: still requested, exit 0"
is "$(sql "SELECT CONCAT(cancel_by, '|', cancel_at) FROM jobs WHERE id = $r")" "www:alice (first)|$first" \
	"the first request's who and when are kept"

# A filter's chunk is cancelled in one transaction: each kind of job in
# it ends as a one-job cancel ends it.  In one queue: a running job (its
# worker is asked), two delayed jobs, a delayed job another waits for
# (that one, in another queue, is cancelled naming it), a job that waits
# (its own dependency rows go), and two jobs of a group (its callback
# comes once, counting both).
empty_tables
write_conf <<EOC
[worker]
poll_interval = 20ms
reserve_ttl = 5s
heartbeat = 1s
workdir = $T

[queue mix]
[queue idle]

[handler tree]
exec = $TH/cancel_tree.py $T exec
queue = mix
kill_grace = 1s

[handler note]
exec = /bin/true
queue = idle
EOC
start_worker --concurrency 1 --queue mix
w=$WORKER_PID
run1=$(jq_ enqueue tree '{}')
wait_for_sql 30 "SELECT lease_token IS NOT NULL FROM jobs WHERE id = $run1" 1
d1=$(jq_ enqueue --delay 1h tree '{}')
d2=$(jq_ enqueue --delay 1h tree '{}')
par=$(jq_ enqueue --delay 1h tree '{}')
kid=$(jq_ enqueue --queue idle --after "$par" tree '{}')
wai=$(jq_ enqueue --after "$run1" tree '{}')
printf '%s\n' '{"type": "tree", "payload": {}, "delay": "1h"}' '{"type": "tree", "payload": {}, "delay": "1h"}' |
	jq_ enqueue --batch --group mixg --on-complete note >/dev/null
is "$(sql "SELECT COUNT(*) FROM jobs WHERE queue = 'mix'")" 7 "a chunk of seven jobs of five kinds"
out=$(jq_ cancel --queue mix --yes 2>&1); rc=$?
is "$rc|$out" "0|8 jobs cancelled (running ones: their workers stop them within a second); 1 of them because a job they waited for was" \
	"one filter cancels all seven, and the job of another queue that waited for one of them, counted apart"
is "$(sql "SELECT COUNT(*) FROM job_runs WHERE outcome = 'cancelled' AND job_id IN ($d1, $d2, $par, $wai)")" 4 \
	"the delayed, the one waited for and the waiting one: cancelled at once, one run each"
is "$(sql "SELECT COUNT(*) FROM job_runs WHERE outcome = 'cancelled' AND type = 'tree' AND job_id > $wai")" 2 \
	"the group's two: cancelled"
is "$(sql "SELECT COUNT(*) FROM jobq_deps WHERE job_id = $wai")" 0 "the waiting job's own dependency rows are gone"
like "$(sql "SELECT CONCAT(outcome, ' ', error) FROM job_runs WHERE job_id = $kid")" \
	"^cancelled cancelled by dependency $par \\(cancelled\\)" \
	"the job that waited for a cancelled one is cancelled in the same transaction, naming it"
is "$(sql "SELECT COUNT(*) FROM jobs WHERE type = 'note'")" 1 "the group's callback: enqueued once"
like "$(sql "SELECT payload FROM jobs WHERE type = 'note'")" '"cancelled": ?2' "... counting both as cancelled"
# (its worker looks twice a second: it may have ended the job already)
is "$(sql "SELECT COALESCE((SELECT cancel_by IS NOT NULL FROM jobs WHERE id = $run1),
	(SELECT COUNT(*) > 0 FROM job_runs WHERE job_id = $run1 AND outcome = 'cancelled'))")" 1 \
	"the running job: its worker is asked"
wait_for_sql 20 "SELECT outcome FROM job_runs WHERE job_id = $run1" cancelled
ok $? "... and its worker cancels it"
is "$(sql "SELECT COUNT(*) FROM jobs WHERE queue = 'mix'")" 0 "nothing of the queue is left"
kill -TERM "$w"
wait_exit 30 "$w"

# A chunk the database refuses is tried a job at a time: a job it still
# refuses (here a trigger's error; in life a row locked past the reruns)
# is named, the others are cancelled, and the command exits 69.
r1=$(jq_ enqueue --delay 1h tree '{}')
r2=$(jq_ enqueue --delay 1h tree '{}')
r3=$(jq_ enqueue --delay 1h tree '{}')
# (one statement, no ';' inside: the error is a subquery of two rows)
sql "CREATE TRIGGER test_refuse BEFORE DELETE ON jobs FOR EACH ROW
	SET @refused = IF(OLD.id = $r2, (SELECT 1 UNION SELECT 2), 0)"
out=$(jq_ cancel --queue mix --yes 2>&1); rc=$?
sql "DROP TRIGGER test_refuse"
is "$rc" 69 "a job the database will not let go: exit 69"
like "$out" "cancel: job $r2: not cancelled: .*Subquery returns more than 1 row" "... naming it and why"
like "$out" "2 jobs cancelled .*; 1 not cancelled \\(named above\\): run the command again" "... the others cancelled"
is "$(sql "SELECT GROUP_CONCAT(id ORDER BY id) FROM jobs WHERE queue = 'mix'")" "$r2" "only that job is left"
is "$(sql "SELECT COUNT(*) FROM job_runs WHERE outcome = 'cancelled' AND job_id IN ($r1, $r2, $r3)")" 2 \
	"the other two: cancelled once each"

finish
