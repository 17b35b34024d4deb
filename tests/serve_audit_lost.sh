#!/bin/bash
# A dashboard action and its audit row are one transaction (jobq(1):
# "only admins act, and every action is written to the audit table"):
# whatever the connection to the database does meanwhile, the change
# and its row of jobq_audit exist together or not at all, and the
# answer never says the action was done when it was not.  The dashboard
# talks to the server through tests/replylost.py:
#   1. the answer to the statement that commits the action is lost
#      (the server applied it): the change and its audit row are both
#      there;
#   2. the connection is cut while the audit row is on its way (held
#      back, then cut): either both are there, or neither is and the
#      answer is not 200.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/operator/common.sh"
. "$top_srcdir/tests/serve_lib.sh"
setup serve_audit_lost
PX=$T/px
mkdir -p "$PX"
python3 "$top_srcdir/tests/replylost.py" "unix:$T/p.sock" "unix:$SOCKET" "$PX" &
BG_PIDS+=($!)
for ((i = 0; i < 300; i++)); do [ -S "$T/p.sock" ] && break; sleep 0.1; done

SOCKET=$T/p.sock write_conf <<EOC
[queue default]

[handler echo]
exec = $HANDLERS/echo.sh

[user admin]
password_hash = $PWHASH
role = admin
EOC
serve_start
login admin "$T/jar"

# job: a new ready job's id (written past the proxy).
job() {
	sql "INSERT INTO jobs (queue, type, payload, available_at) VALUES ('default', 'echo', '{}', UTC_TIMESTAMP()); SELECT LAST_INSERT_ID()"
}
# audited ID ACTION: how many audit rows of ACTION job ID has.
audited() { count jobq_audit "job_id = $1 AND action = '$2'"; }
# check ACTION ID CHANGED: the change and the audit row are together.
check() {
	local action=$1 id=$2 changed=$3 what=$4 rows
	rows=$(audited "$id" "$action")
	if [ "$changed" = 1 ]; then
		is "$rows" 1 "$what: $action of job $id done, and its audit row is there (first answer $FIRST)"
	else
		is "$rows" 0 "$what: $action of job $id not done, and no audit row"
		ok "$([ "$FIRST" != 200 ]; echo $?)" "$what: the answer ($FIRST) does not claim the $action was done"
	fi
}

# ---- 1. the answer to the action's transaction is lost ----
for action in cancel delete run-now; do
	id=$(job)
	[ $action = run-now ] && sql "UPDATE jobs SET available_at = UTC_TIMESTAMP() + INTERVAL 1 HOUR WHERE id = $id"
	rm -f "$PX/dropped"
	# cancel sends its transaction whole, with its COMMIT; the others
	# are one statement each, in a transaction the dashboard commits.
	case $action in
	cancel) echo "UPDATE jobs SET cancel_by = .* WHERE id = $id.*COMMIT$" >"$PX/drop" ;;
	*) echo "^COMMIT$" >"$PX/drop" ;;
	esac
	post "/api/jobs/$id/$action" "$T/jar" '{}'
	FIRST=$CODE
	like "$(cat "$PX/dropped" 2>/dev/null)" "COMMIT" "[$action] the answer to the COMMIT of the action was lost"
	case $action in
	cancel | delete) changed=$((1 - $(count jobs "id = $id"))) ;;
	run-now) changed=$(count jobs "id = $id AND available_at <= UTC_TIMESTAMP(6)") ;;
	esac
	is "$changed" 1 "[$action] the server applied the action"
	check "$action" "$id" "$changed" "[$action] answer lost"
	rm -f "$PX/drop"
	hit GET /api/overview "$T/jar" # reconnects
done

# ---- 2. the connection is cut as the audit row goes ----
for action in cancel delete run-now; do
	id=$(job)
	[ $action = run-now ] && sql "UPDATE jobs SET available_at = UTC_TIMESTAMP() + INTERVAL 1 HOUR WHERE id = $id"
	rm -f "$PX/held"
	echo "INSERT INTO jobq_audit .*'$action', $id," >"$PX/hold"
	(
		post "/api/jobs/$id/$action" "$T/jar" '{}'
		echo "$CODE" >"$T/firstcode"
	) &
	cpid=$!
	for ((i = 0; i < 100; i++)); do [ -e "$PX/held" ] && break; sleep 0.1; done
	ok "$([ -e "$PX/held" ]; echo $?)" "[$action] the audit row was held back"
	: >"$PX/cut"
	sleep 0.5
	rm -f "$PX/hold"
	wait "$cpid"
	rm -f "$PX/cut"
	FIRST=$(cat "$T/firstcode") # the post ran in a subshell
	case $action in
	cancel | delete) changed=$((1 - $(count jobs "id = $id"))) ;;
	run-now) changed=$(count jobs "id = $id AND available_at <= UTC_TIMESTAMP(6)") ;;
	esac
	check "$action" "$id" "$changed" "[$action] connection cut"
	hit GET /api/overview "$T/jar"
done

finish
