#!/bin/bash
# A bulk action (POST /api/bulk, a chunk at a time) whose admin another
# admin demotes, logs out, removes or gives a new password half-way:
# each later chunk is refused (403 demoted, 401 otherwise) and changes
# nothing; what the chunks before did stays done.  A change that lands
# while a chunk runs stops that chunk before its next job (the session
# and role are looked up before each), and its answer says how far it
# got.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
. "$top_srcdir/tests/operator/common.sh"
. "$top_srcdir/tests/serve_lib.sh"
setup serve_bulk_role

serve_two_admins
login root "$T/root"
ROOTCSRF=$CSRF

# dead N: N dead jobs in mail, ids 1001 up, nothing else dead.
dead() {
	sql "DELETE FROM failed_jobs; INSERT INTO failed_jobs (id, queue, type, payload, attempts, exception)
	       SELECT 1000 + seq, 'mail', 'send_email', '{}', 3, 'smtp 550' FROM seq_1_to_$1"
}
# first ACTION: ada counts and sends the first chunk; sets COUNT, UPTO, NEXT.
first() {
	post /api/bulk/count "$T/ada" "{\"action\": \"$1\", \"queue\": \"mail\"}"
	COUNT=$(printf '%s' "$BODY" | jget 'd["count"]')
	UPTO=$(printf '%s' "$BODY" | jget 'd["upto"]')
	post /api/bulk "$T/ada" "{\"action\": \"$1\", \"queue\": \"mail\", \"count\": $COUNT, \"upto\": $UPTO, \"after\": 0}"
	NEXT=$(printf '%s' "$BODY" | jget 'd["next_after"]')
}
# next ACTION: ada's next chunk.
next() {
	post /api/bulk "$T/ada" "{\"action\": \"$1\", \"queue\": \"mail\", \"count\": $COUNT, \"upto\": $UPTO, \"after\": $NEXT}"
}

for change in demote sessions remove password; do
	dead 250
	login ada "$T/ada"
	first retry
	is "$CODE/$(printf '%s' "$BODY" | jget 'd["done"]')" "200/100" "$change: ada's first chunk retries 100"
	case $change in
	demote) post /api/users/role "$T/root" '{"user": "ada", "role": "viewer"}' "$ROOTCSRF"; want=403 ;;
	sessions) post /api/sessions/end "$T/root" '{"user": "ada"}' "$ROOTCSRF"; want=401 ;;
	remove) post /api/users/remove "$T/root" '{"user": "ada"}' "$ROOTCSRF"; want=401 ;;
	password) post /api/users/password "$T/root" "{\"user\": \"ada\", \"password\": \"another-pass-1\"}" "$ROOTCSRF"; want=401 ;;
	esac
	is "$CODE" 200 "$change: another admin makes the change"
	next retry
	is "$CODE" "$want" "$change: ada's next chunk is refused"
	is "$(sql "SELECT COUNT(*) FROM failed_jobs")/$(sql "SELECT COUNT(*) FROM jobs")" "150/100" \
		"$change: nothing past the change was retried"
	next retry
	is "$CODE" "$want" "$change: and so is any chunk after it"
	is "$(sql "SELECT COUNT(*) FROM jobq_audit WHERE action = 'retry' AND username = 'ada'")" 100 \
		"$change: 100 audit rows, one a job retried"
	sql "DELETE FROM jobs; DELETE FROM jobq_audit WHERE action = 'retry'"
	case $change in
	demote) printf '' | jq_ user role ada admin >/dev/null ;;
	remove) printf '%s\n' "$PW" | jq_ user add ada --role admin >/dev/null ;;
	password) printf '%s\n' "$PW" | jq_ user passwd ada >/dev/null 2>&1 || diag "passwd: $(printf '%s\n' "$PW" | jq_ user passwd ada 2>&1)" ;;
	esac
done

# ---- the change lands while a chunk runs ----
# A lock held on a dead row stops ada's chunk half-way through (each job
# is its own transaction); root demotes ada (or ends her sessions)
# meanwhile.  The chunk must stop at the change: the jobs before it
# retried (and the one under way, waiting for the lock), none after it,
# and the answer says so, and how many of the set are left: another
# admin forgets 30 of them meanwhile, which are not.
STALL_ALSO="sql 'DELETE FROM failed_jobs WHERE id > 1220'"
for change in demote sessions; do
	dead 250
	login ada "$T/ada"
	post /api/bulk/count "$T/ada" '{"action": "retry", "queue": "mail"}'
	COUNT=$(printf '%s' "$BODY" | jget 'd["count"]')
	UPTO=$(printf '%s' "$BODY" | jget 'd["upto"]')
	stalled "$change" 1050 /api/bulk \
		"{\"action\": \"retry\", \"queue\": \"mail\", \"count\": $COUNT, \"upto\": $UPTO, \"after\": 0}"
	is "$SCODE" "$WANT" "$change mid-chunk: the chunk ends refused"
	is "$(jget 'd["done"]' <<<"$SBODY")/$(jget 'd["next_after"]' <<<"$SBODY")" 50/null \
		"$change mid-chunk: its answer says how many it retried (job 1050, under way at the change, among them)"
	like "$(jget 'd["error"]' <<<"$SBODY")" "as the action ran.*the jobs after it were left as they were" \
		"$change mid-chunk: and why it stopped"
	is "$(sql "SELECT COUNT(*) FROM failed_jobs WHERE id <= 1050")/$(sql "SELECT COUNT(*) FROM failed_jobs WHERE id > 1050")" "0/170" \
		"$change mid-chunk: nothing after the change was retried"
	is "$(jget 'd["left"]' <<<"$SBODY")" 170 \
		"$change mid-chunk: its answer says 170 of the set are left (not the 30 forgotten meanwhile)"
	is "$(sql "SELECT COUNT(*) FROM jobq_audit WHERE action = 'retry' AND username = 'ada' AND job_id > 1050")" 0 \
		"$change mid-chunk: nor audited as ada's"
	# the stop has a row of its own, the server's (ada had lost the right
	# by then), as a stopped retry of every dead job does
	case $change in
	demote) why="this needs the admin role, which was taken from this user as the action ran" ;;
	sessions) why="the session ended as the action ran (logged out, removed, or a new password)" ;;
	esac
	is "$(sql "SELECT CONCAT(username, '|', job_count, '|', detail) FROM jobq_audit WHERE action = 'retry' AND job_id IS NULL")" \
		"jobq serve|50|50 jobs, 0 refused, then the server stopped the run of ada (170 left): $why: bulk: queue=mail type=*" \
		"$change mid-chunk: the server's row says whose run stopped, what it did and left, and why"
	sql "DELETE FROM jobs; DELETE FROM jobq_audit WHERE action = 'retry'"
done
STALL_ALSO=

finish
