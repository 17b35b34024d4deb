#!/bin/bash
# Where workflows meet plain SQL and each other's edges: a job the
# documented SQL recipe wrote without wait_until (due as soon as it is
# released) leaves no rows in jobq_deps however it ends -- run after a
# release or a hand-off, expired while it waits, cancelled by a dead
# dependency.  A job whose dependency a person cancelled, or the sweep
# expired, ends cancelled in that transaction, down the graph: never
# counted ready by `jobq status` while it waits for a claim or a sweep;
# a filter's cancel counts those in its total.
# A group left empty by a batch killed before its first chunk says so.
# A plain-SQL waiter written due is put back to wait by the claim that
# takes it, in both claim modes, and runs once its job is done.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
setup workflow_edges

write_conf <<EOC
[worker]
poll_interval = 20ms
max_attempts = 1

[queue default]
[queue other]

[handler step]
exec = /bin/true

[handler bad]
exec = /bin/false

[handler cb]
exec = /bin/true
EOC
work() { timeout 60 "$JOBQ" -c "$CONF" work --stop-when-empty "$@" 2>>"$T/w.log"; }

# plain_waiter AFTER [COLUMNS VALUES]: a job that waits for job AFTER,
# written as jobq(1)'s plain-SQL recipe says, but without wait_until;
# prints its id.
plain_waiter() {
	sql "INSERT INTO jobs (queue, type, payload, available_at, waiting_on${2:-})
	    VALUES ('default', 'step', '{}', '9999-12-31 23:59:59', 1${3:-});
	  SET @j = LAST_INSERT_ID(); INSERT INTO jobq_deps (after_id, job_id) VALUES ($1, @j);
	  UPDATE jobs SET has_waiters = 1 WHERE id = $1; SELECT @j"
}
deps_of() { sql "SELECT COUNT(*) FROM jobq_deps WHERE job_id IN ($1) OR after_id IN ($1)"; }

# Released, then run: by the hand-off (the first waiter) and by the
# release (the second).
a=$(jq_ enqueue step '{}')
b=$(plain_waiter "$a")
c=$(plain_waiter "$a")
work
is "$(sql "SELECT GROUP_CONCAT(outcome ORDER BY job_id) FROM job_runs WHERE job_id IN ($a, $b, $c)")" \
	"done,done,done" "plain-SQL waiters without wait_until run once their job is done"
is "$(deps_of "$a,$b,$c")" 0 "and leave no rows in jobq_deps"

# Expired while it waits: the sweep drops its rows, and the job it
# waited for no longer lists it.
a=$(jq_ enqueue --delay 1h step '{}')
b=$(plain_waiter "$a" ", expires_at" ", UTC_TIMESTAMP(6) + INTERVAL 1 SECOND")
sleep 1.2
work
is "$(sql "SELECT outcome FROM job_runs WHERE job_id = $b")/$(deps_of "$b")" "expired/0" \
	"a plain-SQL waiter without wait_until expired by the sweep leaves no rows in jobq_deps"
[[ "$(jq_ show "$a")" != *"waited for by"* ]]
ok $? "and the job it waited for lists it no more"
sql "DELETE FROM jobs WHERE id = $a"

# Its dependency died: it ends cancelled, and its rows go.
a=$(jq_ enqueue bad '{}')
b=$(plain_waiter "$a")
work
like "$(sql "SELECT CONCAT(outcome, ' ', error) FROM job_runs WHERE job_id = $b")" "^cancelled cancelled by dependency $a \\(dead\\)" \
	"a plain-SQL waiter without wait_until is cancelled by its dead dependency"
is "$(deps_of "$b")" 0 "and leaves no rows in jobq_deps"

# ready_waiting: status's READY/WAITING of queue default.
ready_waiting() { jq_ status | awk '$1 == "default" { print $2 "/" $4 }'; }
ran() { sql "SELECT GROUP_CONCAT(CONCAT(job_id, ':', outcome) ORDER BY job_id) FROM job_runs WHERE job_id IN ($1)"; }
empty_tables

# A person cancels the head of a chain no worker serves: the chain ends
# with it, no job of it left ready.
a=$(jq_ enqueue --delay 1h step '{}')
b=$(jq_ enqueue --after "$a" step '{}')
c=$(jq_ enqueue --after "$b" step '{}')
is "$(ready_waiting)" "0/2" "a chain behind a delayed job: two waiting"
jq_ cancel "$a" >/dev/null 2>&1
is "$(ready_waiting)" "0/0" "the cancel of its head leaves none ready or waiting"
is "$(ran "$a,$b,$c")" "$a:cancelled,$b:cancelled,$c:cancelled" "the whole chain ended cancelled in the cancel"
like "$(sql "SELECT error FROM job_runs WHERE job_id = $c")" "^cancelled by dependency $b \\(cancelled\\)" \
	"the last one naming the one before"
is "$(sql "SELECT COUNT(*) FROM jobs")" 0 "nothing left in jobs"

# A filter's cancel over a chain longer than its chunk of 100: the
# jobs after the first chunk end with it, and the count says so.
empty_tables
prev=$(jq_ enqueue --delay 1h step '{}')
for i in $(seq 2 250); do prev=$(jq_ enqueue --after "$prev" step '{}'); done
run jq_ cancel -q default --yes
is "$RC" 0 "cancel -q of a 250-job chain: exit 0"
like "$OUT" "^250 jobs cancelled .*; 150 of them because a job they waited for was" \
	"and it counts the 150 ended with the first chunk's last job"
is "$(sql "SELECT COUNT(*) FROM jobs")/$(sql "SELECT COUNT(*) FROM job_runs WHERE outcome = 'cancelled'")" "0/250" \
	"all 250 ended cancelled"

# The sweep expires the head of a chain whose queue no worker serves:
# one sweep ends the whole chain.
a=$(delayed_expiring 1 step '{}')
b=$(jq_ enqueue --after "$a" step '{}')
c=$(jq_ enqueue --after "$b" step '{}')
d=$(jq_ enqueue --after "$c" step '{}')
sleep 1.2
timeout 60 "$JOBQ" -c "$CONF" work --queue other --stop-when-empty 2>>"$T/w.log"
is "$(ran "$a,$b,$c,$d")" "$a:expired,$b:cancelled,$c:cancelled,$d:cancelled" "one sweep ends an expired job and the chain behind it"
is "$(ready_waiting)" "0/0" "none of it left ready or waiting"

# A batch killed between making its group and its first chunk leaves the
# group empty (as groups_open commits it): show says so; a batch run
# again fills it, and its callback comes once its jobs ended.
sql "INSERT INTO jobq_groups (name, on_complete, complete_queue) VALUES ('killed', 'cb', 'default')"
out=$(jq_ group show killed)
like "$out" "state: +open \\(empty: no job has joined it\\)" "group show: an empty group says it is empty"
like "$out" "on-complete: cb: not enqueued" "and its callback waits"
echo '{"type": "step"}' | jq_ enqueue --batch --group killed --on-complete cb >/dev/null
work
is "$(sql "SELECT CONCAT(total, '/', done, '/', complete_job IS NOT NULL) FROM jobq_groups WHERE name = 'killed'")" "1/1/1" \
	"a batch run again fills it, and its callback is enqueued once its job ended"
like "$(jq_ group show killed)" "state: +ended" "then show says ended"

# A plain-SQL waiter written due (available_at left at its default, or
# now: the waiting marker forgotten) is not run before the job it waits
# for ends: the first claim that takes it puts it back to wait, and the
# worker names it; once its job is done it runs, after it.  In both
# claim modes, with a rate on its type: the claim charges it no start.
sed -i "s|^exec = /bin/true$|exec = /bin/true\nrate = 100/s|" "$CONF"
for rmode in skip-locked update; do
	empty_tables
	sql "DELETE FROM jobq_starts"
	sed -i "/^reserve_mode = /d; s/^\[worker\]$/[worker]\nreserve_mode = $rmode/" "$CONF"
	a=$(jq_ enqueue --delay 1h step '{}')
	b=$(sql "INSERT INTO jobs (queue, type, payload, waiting_on) VALUES ('default', 'step', '{}', 1);
	  SET @j = LAST_INSERT_ID(); INSERT INTO jobq_deps (after_id, job_id) VALUES ($a, @j);
	  UPDATE jobs SET has_waiters = 1 WHERE id = $a; SELECT @j")
	: >"$T/w.log"
	work
	is "$(ran "$b")" NULL "[$rmode] a plain-SQL waiter written due does not run before its job ends"
	is "$(sql "SELECT CONCAT(available_at, ' ', waiting_on, ' ', attempts, ' ', lease_token IS NULL, ' ', wait_until IS NOT NULL) FROM jobs WHERE id = $b")" \
		"9999-12-31 23:59:59.000000 1 0 1 1" "[$rmode] the claim put it back to wait: not due, unleased, no attempt counted"
	is "$(ready_waiting)" "0/1" "[$rmode] status counts it waiting"
	is "$(sql "SELECT COUNT(*) FROM jobq_starts")" 0 "[$rmode] and no start was charged to its type's rate"
	like "$(cat "$T/w.log")" "job $b: written waiting for other jobs \\(waiting_on > 0\\) but due" "[$rmode] the worker names it"
	sql "UPDATE jobs SET available_at = UTC_TIMESTAMP(6) WHERE id = $a"
	work
	is "$(ran "$a,$b")" "$a:done,$b:done" "[$rmode] once its job is done it runs"
	is "$(sql "SELECT COUNT(*) FROM job_runs a JOIN job_runs b ON b.job_id = $b WHERE a.job_id = $a AND b.started_at >= a.started_at")" 1 \
		"[$rmode] after it"
done
finish
