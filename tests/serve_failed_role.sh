#!/bin/bash
# The dead letter's actions that run many transactions in one request --
# retry or forget of a list of ids, retry of every job matching, clear
# (a chunk of 1000 at a time) -- whose admin another admin demotes or
# logs out while they run: the session and role are looked up again
# before each job (each chunk of a clear), so the request stops there,
# 403 or 401, its answer saying why and how many it did; the jobs after
# it stay as they were, with no audit row in that admin's name (a
# stopped retry-all's summary is the server's).  A lock
# held on one dead row stalls the request there while the change is made.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
. "$top_srcdir/tests/operator/common.sh"
. "$top_srcdir/tests/serve_lib.sh"
setup serve_failed_role

serve_two_admins
login root "$T/root"
ROOTCSRF=$CSRF

# dead N: N dead jobs in mail, ids 1001 up, nothing else queued or dead,
# no audit row of ada's.
dead() {
	sql "DELETE FROM jobs; DELETE FROM failed_jobs; DELETE FROM jobq_audit WHERE username = 'ada';
	     INSERT INTO failed_jobs (id, queue, type, payload, attempts, exception)
	       SELECT 1000 + seq, 'mail', 'send_email', '{}', 3, 'smtp 550' FROM seq_1_to_$1"
}

# checks CHANGE WHAT KEY DONE LAST [AUDITACTION]: the answer was refused
# with WANT, said DONE for KEY and why, and nothing past job LAST (the
# last one the job or chunk under way at the change took) moved, nor
# was audited as ada's (for an action audited job by job).
checks() {
	local change=$1 what=$2 key=$3 done=$4 lock=$5 action=${6:-}
	is "$SCODE" "$WANT" "$change $what: the request ends refused"
	is "$(printf '%s' "$SBODY" | jget "d[\"$key\"]")" "$done" \
		"$change $what: its answer says how many it did (those under way at the change among them)"
	like "$(printf '%s' "$SBODY" | jget 'd["error"]')" "as the action ran.*the jobs after it were left as they were" \
		"$change $what: and why it stopped"
	is "$(sql "SELECT COUNT(*) FROM failed_jobs WHERE id > $lock")" "$(sql "SELECT $NJOBS + 1000 - $lock")" \
		"$change $what: the dead jobs after it are all still there"
	is "$(printf '%s' "$SBODY" | jget 'd["left"]')" "$((NJOBS + 1000 - lock))" \
		"$change $what: its answer says how many it left"
	[ -z "$action" ] ||
		is "$(sql "SELECT COUNT(*) FROM jobq_audit WHERE username = 'ada' AND action = '$action' AND job_id > $lock")" 0 \
			"$change $what: none of them audited as ada's"
}

# Each action once, the role taken away from two, the sessions ended for
# the other two (the check is one function: serve_bulk_role.sh tries
# every kind of change on it).
ids=$(seq -s, 1001 1250)
NJOBS=250

# ---- retry of a list of ids ----
dead $NJOBS
stalled demote 1050 /api/failed/retry "{\"ids\": [$ids]}"
checks demote "retry ids" retried 50 1050 retry
is "$(sql "SELECT COUNT(*) FROM jobs")/$(sql "SELECT COUNT(*) FROM jobq_audit WHERE username = 'ada' AND action = 'retry'")" \
	50/50 "retry ids: the 50 before it retried, each audited"

# ---- forget of a list of ids ----
dead $NJOBS
stalled sessions 1050 /api/failed/forget "{\"ids\": [$ids]}"
checks sessions "forget ids" forgotten 50 1050 forget
is "$(sql "SELECT COUNT(*) FROM failed_jobs")/$(sql "SELECT COUNT(*) FROM jobq_audit WHERE username = 'ada' AND action = 'forget'")" \
	200/50 "forget ids: the 50 before it forgotten, each audited"

# ---- retry of every job matching ----
# Its summary row is written once the run is over: stopped, that is
# after ada lost the role, so it is the server's, naming her run, what
# it did and why it stopped; none is ada's after the change.
dead $NJOBS
stalled demote 1050 /api/failed/retry '{"all": true, "queue": "mail"}'
checks demote "retry all" retried 50 1050 retry-all
is "$(sql "SELECT COUNT(*) FROM jobs")/$(sql "SELECT COUNT(*) FROM jobq_audit WHERE username = 'ada' AND action = 'retry-all' AND job_id IS NOT NULL")" \
	50/50 "retry all: the 50 before it retried, each audited"
is "$(sql "SELECT COUNT(*) FROM jobq_audit WHERE username = 'ada' AND job_id IS NULL AND id > (SELECT MAX(id) FROM jobq_audit WHERE username = 'root' AND action = 'user-role')")" 0 \
	"retry all: no summary row in ada's name after her role was taken away"
like "$(sql "SELECT CONCAT(username, '|', job_count, '|', detail) FROM jobq_audit WHERE action = 'retry-all' AND job_id IS NULL")" \
	"^jobq serve\|50\|50 jobs, 0 refused, then the server stopped the run of ada \(200 left\): this needs the admin role, which was taken from this user as the action ran: all matching queue=mail type=\*\$" \
	"retry all: the server's summary row says whose run it was, the 50 it did, the 200 it left, that it stopped and why"

# ---- clear, 1000 a chunk: the second chunk waits at job 2500 ----
NJOBS=2500
dead $NJOBS
stalled demote 2500 /api/failed/clear '{"count": 2500}'
checks demote clear removed 2000 3000
is "$(sql "SELECT COUNT(*) FROM failed_jobs")/$(sql "SELECT GROUP_CONCAT(job_count ORDER BY id) FROM jobq_audit WHERE username = 'ada' AND action = 'clear'")" \
	500/1000,1000 "clear: two chunks removed (the one under way at the change among them), each audited"

# ---- clear of exactly one chunk: the change comes as it runs, after
# which nothing is left for the next pass, so the clear ran to its end ----
NJOBS=1000
dead $NJOBS
stalled demote 1500 /api/failed/clear '{"count": 1000}'
is "$SCODE $(printf '%s' "$SBODY" | jget 'd["removed"]')" "200 1000" \
	"clear of one full chunk, role taken as it ran: 200, all 1000 removed (no false stop)"
is "$(sql "SELECT COUNT(*) FROM failed_jobs")/$(sql "SELECT GROUP_CONCAT(job_count) FROM jobq_audit WHERE username = 'ada' AND action = 'clear'")" \
	0/1000 "clear of one full chunk: none left, one audit row of 1000"

finish
