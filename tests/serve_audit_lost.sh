#!/bin/bash
# A dashboard action and its audit row are one transaction (jobq(1):
# "only admins act, and every action is written to the audit table"):
# whatever the connection to the database does meanwhile, the change
# and its row of jobq_audit exist together or not at all, and the
# answer never says the action was done when it was not.  The dashboard
# talks to the server through tests/replylost.py:
#   1. the answer to the COMMIT of the action is lost (the server
#      applied it): the change and its audit row are both there;
#   2. the connection is cut while the audit row is on its way (held
#      back, then cut): either both are there, or neither is and the
#      answer is not 200.
# Each for a job's cancel, delete and run-now, a dead job's retry and
# forget, a bulk delete and cancel, a clear of the dead letter, a
# queue's pause and a user's add.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/operator/common.sh"
. "$top_srcdir/tests/serve_lib.sh"
setup serve_audit_lost
PX=$T/px
replylost_start "$PX"

SOCKET=$T/p.sock write_conf <<EOC
[queue default]
[queue bulk]

[handler echo]
exec = $HANDLERS/echo.sh

[user admin]
password_hash = $PWHASH
role = admin
EOC
serve_start
login admin "$T/jar"

# job [QUEUE]: a new ready job's id (written past the proxy).
job() {
	sql "INSERT INTO jobs (queue, type, payload, available_at) VALUES ('${1:-default}', 'echo', '{}', UTC_TIMESTAMP());
	     SELECT LAST_INSERT_ID()"
}
# dead N: dead-letters a new job, id 900000 + N (no id is used twice:
# a retried or forgotten job's id must not come back).
dead() {
	sql "INSERT INTO failed_jobs (id, queue, type, payload, attempts, exception)
	     VALUES ($((900000 + $1)), 'default', 'echo', '{}', 3, 'x')"
	echo $((900000 + $1))
}

# prepare ACTION N: sets up the N-th try of ACTION: PATH and BODY of its
# POST, AUDIT (the WHERE of its audit row), CHANGED (a query: 1 when
# the action was done, 0 when not) and WHOLE (1: the action sends its
# transaction whole, COMMIT included; 0: the dashboard commits it).
prepare() {
	local id
	BODY_IN='{}' WHOLE=0
	case $1 in
	cancel | delete | run-now)
		id=$(job)
		[ "$1" = run-now ] && sql "UPDATE jobs SET available_at = UTC_TIMESTAMP() + INTERVAL 1 HOUR WHERE id = $id"
		PATH_IN=/api/jobs/$id/$1 AUDIT="job_id = $id AND action = '$1'"
		CHANGED="SELECT COUNT(*) = 0 FROM jobs WHERE id = $id"
		[ "$1" = run-now ] && CHANGED="SELECT COUNT(*) FROM jobs WHERE id = $id AND available_at <= UTC_TIMESTAMP(6)"
		[ "$1" = cancel ] && WHOLE=1
		;;
	retry | forget)
		id=$(dead "$2")
		PATH_IN=/api/failed/$1 BODY_IN="{\"ids\": [$id]}" AUDIT="job_id = $id AND action = '$1'"
		CHANGED="SELECT COUNT(*) = 0 FROM failed_jobs WHERE id = $id"
		;;
	bulk-delete | bulk-cancel)
		sql "DELETE FROM jobs WHERE queue = 'bulk'"
		id=$(job bulk)
		PATH_IN=/api/bulk AUDIT="job_id = $id AND action = '${1#bulk-}' AND detail LIKE 'bulk:%'"
		BODY_IN="{\"action\": \"${1#bulk-}\", \"queue\": \"bulk\", \"count\": 1, \"upto\": $id}"
		CHANGED="SELECT COUNT(*) = 0 FROM jobs WHERE id = $id"
		[ "$1" = bulk-cancel ] && WHOLE=1
		;;
	queue-pause)
		sql "DELETE FROM jobq_paused; DELETE FROM jobq_audit WHERE action = 'queue-pause'"
		PATH_IN=/api/queues/pause BODY_IN='{"queue": "default"}' AUDIT="action = 'queue-pause'"
		CHANGED="SELECT COUNT(*) FROM jobq_paused WHERE queue = 'default'"
		;;
	clear)
		sql "DELETE FROM failed_jobs; DELETE FROM jobq_audit WHERE action = 'clear'"
		dead "$2" >/dev/null
		dead "$(($2 + 500))" >/dev/null
		PATH_IN=/api/failed/clear BODY_IN='{"count": 2}' WHOLE=1
		AUDIT="action = 'clear' AND job_count = 2 AND detail = '2 jobs'"
		CHANGED="SELECT COUNT(*) = 0 FROM failed_jobs"
		;;
	user-add)
		PATH_IN=/api/users/add BODY_IN="{\"user\": \"u$2\", \"role\": \"viewer\", \"password\": \"$PW\"}"
		AUDIT="action = 'user-add' AND detail LIKE 'user u$2,%'"
		CHANGED="SELECT COUNT(*) FROM jobq_users WHERE username = 'u$2'"
		;;
	esac
}

# check WHAT: the change and its audit row are there together (or
# absent together, and the first answer, $FIRST, did not say done).
check() {
	local changed rows
	changed=$(sql "$CHANGED") rows=$(count jobq_audit "$AUDIT")
	if [ "$changed" = 1 ]; then
		is "$rows" 1 "$1: done, and its audit row is there (answer $FIRST)"
	else
		is "$rows" 0 "$1: not done, and no audit row"
		ok "$([ "$FIRST" != 200 ]; echo $?)" "$1: the answer ($FIRST) does not claim it was done"
	fi
}

# waitfor FILE: waits up to 10 s for the proxy to write FILE.
waitfor() {
	for ((i = 0; i < 100; i++)); do [ -e "$1" ] && return 0; sleep 0.1; done
	return 1
}

# post_bg: the prepared POST in the background; its status in $T/code.
post_bg() {
	rm -f "$T/code"
	(
		post "$PATH_IN" "$T/jar" "$BODY_IN"
		echo "$CODE" >"$T/code"
	) &
	CPID=$!
}

actions="cancel delete run-now retry forget bulk-delete bulk-cancel clear queue-pause user-add"
n=0
for action in $actions; do
	# ---- 1. the answer to the action's COMMIT is lost ----
	prepare "$action" $((n += 1))
	rm -f "$PX/dropped" "$PX/held"
	if [ $WHOLE = 1 ]; then
		echo "INSERT INTO jobq_audit .*COMMIT$" >"$PX/drop"
		post_bg
	else
		# the audit row held back, then the COMMIT that follows it
		echo "INSERT INTO jobq_audit " >"$PX/hold"
		post_bg
		waitfor "$PX/held"
		echo "^COMMIT$" >"$PX/drop"
		rm -f "$PX/hold"
	fi
	wait "$CPID"
	FIRST=$(cat "$T/code")
	like "$(cat "$PX/dropped" 2>/dev/null)" "COMMIT$" "[$action] the answer to its COMMIT was lost"
	is "$(sql "$CHANGED")" 1 "[$action] the server applied it"
	check "[$action] COMMIT answer lost"
	rm -f "$PX/drop"
	hit GET /api/overview "$T/jar" # the server reconnects

	# ---- 2. the connection is cut as the audit row goes ----
	prepare "$action" $((n += 1))
	rm -f "$PX/held"
	echo "INSERT INTO jobq_audit " >"$PX/hold"
	post_bg
	ok "$(waitfor "$PX/held"; echo $?)" "[$action] the audit row was held back"
	: >"$PX/cut"
	sleep 0.3
	rm -f "$PX/hold"
	wait "$CPID"
	rm -f "$PX/cut"
	FIRST=$(cat "$T/code")
	check "[$action] connection cut"
	hit GET /api/overview "$T/jar"
done

finish
