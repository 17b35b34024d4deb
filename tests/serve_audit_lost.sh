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
# Each for a job's cancel, delete, run-now and release, a dead job's
# retry, forget and edited retry, a retry of all matching, a bulk
# delete and cancel, a clear of the dead letter, a queue's pause
# and resume, an enqueue with and without a submit id, a schedule's
# add, edit and run now (its row in the fire's transaction), a user's add and removal, and the end of a
# user's sessions.  In 1 the answer is checked too: 200 where the
# dashboard looks after reconnecting whether the change took (a dead
# job's retry, edited or not, and forget, retry all, cancel, pause and resume, an
# enqueue with a submit id), else 504 with "unsure": true, never the
# 503 that says the database is down and nothing happened.
. "$top_srcdir/tests/lib.sh"
# Its time is the proxy's (a second for each answer it loses); the
# actions' C paths run under the sanitizers in serve_api, serve_bulk,
# serve_schedules and serve_users.
one_build normal "a fault test whose time is the proxy's waits"
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
# stale [QUEUE]: a new job whose worker's lease ran out.
stale() {
	local id
	id=$(job "$@")
	sql "UPDATE jobs SET reserved_at = UTC_TIMESTAMP(6), reserved_by = 'gone', lease_token = 'gone$id',
	     lease_expires_at = UTC_TIMESTAMP(6) - INTERVAL 1 HOUR WHERE id = $id"
	echo "$id"
}

# prepare ACTION N: sets up the N-th try of ACTION: PATH and BODY of its
# POST, AUDIT (the WHERE of its audit row), CHANGED (a query: 1 when
# the action was done, 0 when not) and WHOLE (1: the action sends its
# transaction whole, COMMIT included; 0: the dashboard commits it) and
# WANT (the answer when the answer to its COMMIT is lost).
prepare() {
	local id
	BODY_IN='{}' WHOLE=0 WANT=504
	case $1 in
	cancel | delete | run-now | release)
		id=$(job)
		[ "$1" = release ] && id=$(stale)
		[ "$1" = run-now ] && sql "UPDATE jobs SET available_at = UTC_TIMESTAMP() + INTERVAL 1 HOUR WHERE id = $id"
		PATH_IN=/api/jobs/$id/$1 AUDIT="job_id = $id AND action = '$1'"
		CHANGED="SELECT COUNT(*) = 0 FROM jobs WHERE id = $id"
		[ "$1" = run-now ] && CHANGED="SELECT COUNT(*) FROM jobs WHERE id = $id AND available_at <= UTC_TIMESTAMP(6)"
		[ "$1" = release ] && CHANGED="SELECT COUNT(*) FROM jobs WHERE id = $id AND lease_token IS NULL"
		[ "$1" = cancel ] && WHOLE=1 WANT=200
		;;
	retry | forget | retry-edited | retry-all)
		sql "DELETE FROM failed_jobs"
		id=$(dead "$2")
		PATH_IN=/api/failed/$1 BODY_IN="{\"ids\": [$id]}" AUDIT="job_id = $id AND action = '$1'" WANT=200
		[ "$1" = retry-edited ] && BODY_IN="{\"id\": $id, \"payload\": \"{\\\"edited\\\": 1}\"}"
		[ "$1" = retry-all ] && PATH_IN=/api/failed/retry BODY_IN='{"all": true, "queue": "default"}'
		CHANGED="SELECT COUNT(*) = 0 FROM failed_jobs WHERE id = $id"
		;;
	bulk-delete | bulk-cancel)
		sql "DELETE FROM jobs WHERE queue = 'bulk'"
		id=$(job bulk)
		CHANGED="SELECT COUNT(*) = 0 FROM jobs WHERE id = $id"
		PATH_IN=/api/bulk AUDIT="job_id = $id AND action = '${1#bulk-}' AND detail LIKE 'bulk:%'"
		BODY_IN="{\"action\": \"${1#bulk-}\", \"queue\": \"bulk\", \"count\": 1, \"upto\": $id}"
		[ "$1" = bulk-cancel ] && WHOLE=1
		;;
	queue-pause | queue-resume)
		sql "DELETE FROM jobq_paused; DELETE FROM jobq_audit WHERE action = '$1'"
		[ "$1" = queue-resume ] && sql "INSERT INTO jobq_paused (queue) VALUES ('default')"
		PATH_IN=/api/queues/${1#queue-} BODY_IN='{"queue": "default"}' AUDIT="action = '$1'" WANT=200
		CHANGED="SELECT COUNT(*) $([ "$1" = queue-resume ] && echo '= 0') FROM jobq_paused WHERE queue = 'default'"
		;;
	enqueue | enqueue-again)
		# with a submit id: the second try finds the first's jobs
		PATH_IN=/api/enqueue WHOLE=1 WANT=504
		BODY_IN="{\"type\": \"echo\", \"payload\": \"{\\\"enq\\\": $2}\"}"
		[ "$1" = enqueue-again ] && WANT=200 BODY_IN="${BODY_IN%\}}, \"submit_id\": \"s$2\"}"
		AUDIT="action = 'enqueue' AND job_id IN (SELECT id FROM jobs WHERE payload = '{\"enq\": $2}')"
		CHANGED="SELECT COUNT(*) FROM jobs WHERE payload = '{\"enq\": $2}'"
		;;
	schedule-add | schedule-edit | schedule-run-now)
		[ "$1" = schedule-add ] || jq_ schedule add "s$2" --cron '0 0 1 1 *' --type echo >/dev/null
		PATH_IN=/api/schedules/${1#schedule-} BODY_IN="{\"name\": \"s$2\", \"cron\": \"5 4 * * *\", \"type\": \"echo\"}"
		AUDIT="action = '$1' AND (detail = 's$2' OR detail LIKE 's$2:%')"
		CHANGED="SELECT COUNT(*) FROM jobq_schedules WHERE name = 's$2' AND cron = '5 4 * * *'"
		# run-now reads its fire back after a lost COMMIT (scheduler.c
		# run_read_back): it knows the job was made, and says which
		[ "$1" = schedule-run-now ] && BODY_IN="{\"name\": \"s$2\"}" WANT=200 \
			CHANGED="SELECT COUNT(*) FROM jobq_schedule_runs WHERE name = 's$2' AND manual = 1"
		;;
	user-remove | end-sessions)
		post /api/users/add "$T/jar" "{\"user\": \"u$2\", \"role\": \"viewer\", \"password\": \"$PW\"}"
		PATH_IN=/api/users/remove BODY_IN="{\"user\": \"u$2\"}" AUDIT="action = '$1' AND detail REGEXP '^user u$2[;:]'"
		CHANGED="SELECT COUNT(*) = 0 FROM jobq_users WHERE username = 'u$2'"
		if [ "$1" = end-sessions ]; then
			local csrf=$CSRF
			login "u$2" "$T/jar.u"
			CSRF=$csrf
			PATH_IN=/api/sessions/end CHANGED="SELECT COUNT(*) = 0 FROM jobq_sessions WHERE username = 'u$2'"
		fi
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

# reconnected: once the proxy listens again (after a cut it makes its
# socket anew, up to 0.1 s later), until the dashboard answers from the
# database (it may have found the socket gone and waits before it tries
# again): the next action must not meet that 503.
reconnected() {
	waitfor "$T/p.sock"
	for ((i = 0; i < 50; i++)); do
		hit GET /api/overview "$T/jar"
		[ "$CODE" = 200 ] && return 0
		sleep 0.1
	done
	return 1
}

# post_bg: the prepared POST in the background; its status in $T/code.
post_bg() {
	rm -f "$T/code"
	(
		post "$PATH_IN" "$T/jar" "$BODY_IN"
		echo "$BODY" >"$T/answer"
		echo "$CODE" >"$T/code"
	) &
	CPID=$!
}

actions="cancel delete run-now release retry forget retry-edited retry-all bulk-delete bulk-cancel
	clear queue-pause queue-resume enqueue enqueue-again schedule-add schedule-edit schedule-run-now user-add user-remove
	end-sessions"
n=0
for action in $actions; do
	# ---- 1. the answer to the action's COMMIT is lost ----
	prepare "$action" $((n += 1))
	rm -f "$PX/dropped" "$PX/held"
	if [ $WHOLE = 1 ]; then
		echo "INSERT INTO jobq_audit .*COMMIT$" >"$PX/drop"
		post_bg
	else
		# the audit row held back, then the COMMIT that follows it on
		# that connection (another's, the stats roll-up's, is not it)
		echo "INSERT INTO jobq_audit " >"$PX/hold"
		echo "^COMMIT$" >"$PX/after"
		post_bg
		waitfor "$PX/held"
		rm -f "$PX/hold"
	fi
	wait "$CPID"
	FIRST=$(cat "$T/code")
	like "$(cat "$PX/dropped" 2>/dev/null)" "COMMIT$" "[$action] the answer to its COMMIT was lost"
	is "$(sql "$CHANGED")" 1 "[$action] the server applied it"
	check "[$action] COMMIT answer lost"
	is "$FIRST" "$WANT" "[$action] COMMIT answer lost: answered $WANT"
	if [ "$WANT" = 504 ]; then
		like "$(cat "$T/answer")" '"unsure":true' "[$action] ... saying it is unsure"
		like "$(cat "$T/answer")" "may have been applied; reload and look" "[$action] ... and to look"
	fi
	rm -f "$PX/drop" "$PX/after"
	reconnected

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
	reconnected
done

# ---- 3. a many-job action whose connection is lost between two jobs ----
# The session is looked up again before each job; the answer to that
# look-up lost (the connection closed), it is made again on a new
# connection and the action goes on: all three retried, 200.
a=$(dead 9001) b=$(dead 9002) c=$(dead 9003)
rm -f "$PX/dropped" "$PX/held"
echo "INSERT INTO jobq_audit " >"$PX/hold"
echo "FROM jobq_sessions" >"$PX/after"
PATH_IN=/api/failed/retry BODY_IN="{\"ids\": [$a, $b, $c]}"
post_bg
waitfor "$PX/held"
rm -f "$PX/hold"
wait "$CPID"
like "$(cat "$PX/dropped" 2>/dev/null)" "FROM jobq_sessions" \
	"many jobs: the answer to the session's look-up after the first job was lost"
is "$(cat "$T/code")" 200 "many jobs: the action went on after reconnecting"
is "$(sql "SELECT COUNT(*) FROM failed_jobs WHERE id IN ($a, $b, $c)")" 0 "many jobs: all three retried"
is "$(sql "SELECT COUNT(*) FROM jobq_audit WHERE action = 'retry' AND job_id IN ($a, $b, $c)")" 3 \
	"many jobs: each audited once"
rm -f "$PX/after"

finish
