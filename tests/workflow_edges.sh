#!/bin/bash
# Where workflows meet plain SQL and each other's edges: a job the
# documented SQL recipe wrote without wait_until (due as soon as it is
# released) leaves no rows in jobq_deps however it ends -- run after a
# release or a hand-off, expired while it waits, cancelled by a dead
# dependency.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
setup workflow_edges

write_conf <<EOC
[worker]
poll_interval = 20ms
max_attempts = 1

[queue default]

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
finish
