# serve_lib.sh -- helpers for the dashboard tests (sourced after lib.sh
# and operator/common.sh).

# A password hash for the test users (one argon2id hash, reused).
PW=correct-horse
PWHASH=$(printf '%s\n' "$PW" | "$JOBQ" passwd --stdin | sed 's/^password_hash = //')

# serve_start [ARGS]: starts `jobq serve` on a free port (stderr to
# $T/serve.log); sets SERVE_PID and URL once it listens.
serve_start() {
	: >"$T/serve.log"
	"$JOBQ" -c "$CONF" serve --listen "${SERVE_LISTEN:-127.0.0.1:0}" "$@" 2>>"$T/serve.log" &
	SERVE_PID=$!
	BG_PIDS+=("$SERVE_PID")
	local i=0 line
	while :; do
		line=$(grep -o 'listening on [a-z]*://[^ ]*' "$T/serve.log" | tail -1)
		[ -n "$line" ] && break
		i=$((i + 1))
		if [ $i -gt 300 ] || ! kill -0 "$SERVE_PID" 2>/dev/null; then
			echo "Bail out! jobq serve did not start: $(cat "$T/serve.log")"
			exit 99
		fi
		sleep 0.1
	done
	URL=${line#listening on }
	URL=${URL/0.0.0.0/127.0.0.1}
}

serve_stop() {
	kill -TERM "$SERVE_PID" 2>/dev/null
	wait_exit 20 "$SERVE_PID"
}

# serve_two_admins: for the tests that take an admin's right away while
# a long action of hers runs: queue mail with its handler send_email,
# root an admin from the file, ada one from the database; and the
# dashboard on it (serve_start).
serve_two_admins() {
	write_conf <<EOC
[queue mail]

[handler send_email]
exec = /bin/true
queue = mail

[user root]
password_hash = $PWHASH
role = admin
EOC
	printf '%s\n' "$PW" | jq_ user add ada --role admin >/dev/null
	serve_start
}

# hold_dead ID: holds dead row ID locked from a session of its own,
# returning once the lock is taken, until release_dead ends that session
# (its transaction rolls back): a request that comes to the row waits
# there for as long as the test needs, however loaded the machine.
hold_dead() {
	sql "START TRANSACTION; SELECT id FROM failed_jobs WHERE id = $1 FOR UPDATE; DO SLEEP(600); COMMIT" \
		>/dev/null 2>&1 &
	HOLDER=$!
	wait_for_sql 20 "SELECT COUNT(*) FROM information_schema.processlist
		WHERE db = DATABASE() AND TRIM(info) = 'DO SLEEP(600)'" 1
}
# lock_waited: whether a statement of the test's database comes to wait
# on a lock within 20 s (0 yes).
lock_waited() {
	wait_for_sql 20 "SELECT COUNT(*) FROM information_schema.innodb_trx t
		JOIN information_schema.processlist p ON p.id = t.trx_mysql_thread_id
		WHERE p.db = DATABASE() AND t.trx_state = 'LOCK WAIT'" 1
}
release_dead() {
	local id
	id=$(sql "SELECT id FROM information_schema.processlist WHERE db = DATABASE() AND TRIM(info) = 'DO SLEEP(600)'")
	[ -z "$id" ] || sql "KILL $id" >/dev/null 2>&1
	wait "$HOLDER" 2>/dev/null
}

# stalled CHANGE LOCKID PATH BODY: ada posts BODY to PATH while dead
# row LOCKID is held locked; once her request waits for it, root makes
# CHANGE (demote: her role taken away; sessions: her sessions ended),
# then the lock goes, and ada's admin role comes back.  Sets WANT (the
# status the change should bring), SCODE and SBODY (ada's answer).  For
# the tests of long actions stopped part way (serve_bulk_role,
# serve_failed_role; after serve_two_admins and root's login, its CSRF
# token in ROOTCSRF).
stalled() {
	local change=$1 lock=$2 path=$3 body=$4 req
	login ada "$T/ada"
	hold_dead "$lock"
	curl -s -o "$T/stalled.body" -w '%{http_code}' -b "$T/ada" -H 'Content-Type: application/json' \
		-H "X-CSRF-Token: $CSRF" --data-binary "$body" "$URL$path" >"$T/stalled.code" &
	req=$!
	lock_waited
	ok $? "$change $path: ada's request waits at job $lock"
	# STALL_ALSO: what else happens meanwhile (another admin's change)
	[ -z "${STALL_ALSO:-}" ] || eval "$STALL_ALSO"
	case $change in
	demote) post /api/users/role "$T/root" '{"user": "ada", "role": "viewer"}' "$ROOTCSRF"; WANT=403 ;;
	sessions) post /api/sessions/end "$T/root" '{"user": "ada"}' "$ROOTCSRF"; WANT=401 ;;
	esac
	is "$CODE" 200 "$change $path: root makes the change"
	release_dead
	wait "$req"
	SCODE=$(cat "$T/stalled.code")
	SBODY=$(cat "$T/stalled.body")
	if [ "$change" = demote ]; then jq_ user role ada admin >/dev/null; fi
}

# hit METHOD PATH [JAR] [BODY] [curl args...]: one request; sets CODE,
# BODY (the response body) and HDRS (the headers, lower-cased names).
hit() {
	local method=$1 path=$2 jar=${3:-} body=${4:-}
	shift 4 2>/dev/null || shift $#
	local args=(-s -k -X "$method" -D "$T/hdrs" -o "$T/body" -w '%{http_code}')
	[ -n "$jar" ] && args+=(-b "$jar" -c "$jar")
	[ -n "$body" ] && args+=(-H 'Content-Type: application/json' --data-binary "$body")
	CODE=$(curl "${args[@]}" "$@" "$URL$path")
	BODY=$(cat "$T/body")
	HDRS=$(tr -d '\r' <"$T/hdrs" | sed 's/^\([^:]*\):/\L\1:/')
}

# header NAME: the value of a response header of the last hit.
header() {
	printf '%s\n' "$HDRS" | sed -n "s/^$1: //p" | head -1
}

# login USER JAR [remember]: logs in; sets CSRF.
login() {
	local remember=false
	[ -n "${3:-}" ] && remember=true
	hit POST /api/login "$2" "{\"user\": \"$1\", \"password\": \"$PW\", \"remember\": $remember}"
	CSRF=$(printf '%s' "$BODY" | jget 'd["csrf"]' 2>/dev/null)
}

# post PATH JAR BODY [TOKEN]: a POST with the CSRF token (default $CSRF).
post() {
	hit POST "$1" "$2" "$3" -H "X-CSRF-Token: ${4-$CSRF}"
}
