#!/bin/bash
# Sessions end with their user's password: a new password_hash, or a user
# removed (and added back), ends the old sessions across a restart; a
# session whose password tag no longer matches ends at its next request;
# an admin ends a user's sessions with `jobq sessions end` or from the
# dashboard (/api/sessions); logins, logouts and session ends are audited.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
. "$top_srcdir/tests/operator/common.sh"
. "$top_srcdir/tests/serve_lib.sh"
setup serve_sessions

PW2=another-horse
PWHASH2=$(printf '%s\n' "$PW2" | "$JOBQ" passwd --stdin | sed 's/^password_hash = //')

# conf ADA_HASH [with_bob]: ada (admin), and bob (viewer) unless told not.
conf() {
	write_conf <<EOC
[queue default]
[handler echo]
exec = $HANDLERS/echo.sh

[user ada]
password_hash = $1
role = admin
EOC
	[ "${2:-bob}" = bob ] && printf '\n[user bob]\npassword_hash = %s\nrole = viewer\n' "$PWHASH" >>"$CONF"
	printf '\n[serve]\noverview_cache = 0\n' >>"$CONF"
}
restart() { serve_stop; serve_start; }
# uses JAR: the HTTP status of /api/overview with that cookie jar.
uses() { hit GET /api/overview "$1"; echo "$CODE"; }
audit() { sql "SELECT GROUP_CONCAT(TRIM(CONCAT_WS(' ', username, action, detail)) ORDER BY id SEPARATOR ' | ') FROM jobq_audit WHERE $1"; }

conf "$PWHASH"
serve_start

# ---- logins and logouts are audited ----
login ada "$T/ada" remember
is "$CODE" 200 "ada logs in (remember me)"
login bob "$T/bob"
is "$(audit "action IN ('login', 'logout')")" "ada login remember me | bob login" "both logins are in the audit table"
is "$(sql "SELECT COUNT(*) FROM jobq_sessions WHERE LENGTH(pw_tag) = 64")" 2 "each session carries its password tag"
login ada "$T/ada2"
post /api/logout "$T/ada2" '{}'
is "$CODE" 200 "a second session of ada logs out"
is "$(audit "action = 'logout'")" "ada logout" "the logout is audited"

# ---- a new password hash ends the old sessions ----
conf "$PWHASH2"
restart
is "$(uses "$T/ada")" 401 "after a new password_hash and a restart, ada's 30-day cookie opens nothing"
is "$(sql "SELECT COUNT(*) FROM jobq_sessions WHERE username = 'ada'")" 0 "its row is gone"
is "$(audit "action = 'session-end'")" "ada session-end 1 session: the password changed" "the end is audited with why"
is "$(uses "$T/bob")" 200 "bob, whose password did not change, is still logged in"
hit POST /api/login "$T/ada" "{\"user\": \"ada\", \"password\": \"$PW2\"}"
is "$CODE" 200 "ada logs in with the new password"
CSRF=$(printf '%s' "$BODY" | jget 'd["csrf"]')

# ---- a removed user's session does not come back when re-added ----
conf "$PWHASH2" nobob
restart
conf "$PWHASH2"
restart
is "$(uses "$T/bob")" 401 "bob removed, then added back with the same hash: the old cookie opens nothing"
like "$(audit "action = 'session-end' AND username = 'bob'")" "bob session-end 1 session: the user was removed" "audited"

# ---- a session whose tag no longer matches ends at its next request ----
# (another server with another configuration, or a hash edited under it)
login bob "$T/bob"
sql "UPDATE jobq_sessions SET pw_tag = REPEAT('0', 64) WHERE username = 'bob'"
is "$(uses "$T/bob")" 401 "a session opened with another password hash: 401"
is "$(sql "SELECT COUNT(*) FROM jobq_sessions WHERE username = 'bob'")" 0 "and it is ended, not just refused"

# ---- the dashboard: an admin ends a user's sessions ----
login bob "$T/bob"
login bob "$T/bob2"
BOBCSRF=$CSRF
hit GET /api/sessions "$T/bob2"
is "$CODE" 403 "a viewer may not list sessions"
post /api/sessions/end "$T/bob2" '{"user": "ada"}' "$BOBCSRF"
is "$CODE" 403 "nor end them"
hit POST /api/login "$T/ada" "{\"user\": \"ada\", \"password\": \"$PW2\"}"
CSRF=$(printf '%s' "$BODY" | jget 'd["csrf"]')
hit GET /api/sessions "$T/ada"
is "$(printf '%s' "$BODY" | jget '[(u["user"], u["role"], u["sessions"]) for u in d["users"]]')" \
	'[["ada", "admin", 2], ["bob", "viewer", 2]]' "the admin sees each user's role and live sessions"
post /api/sessions/end "$T/ada" '{}'
is "$CODE" 400 "ending without a user name: 400"
post /api/sessions/end "$T/ada" '{"user": "bob"}'
is "$CODE/$(printf '%s' "$BODY" | jget 'd["ended"]')" "200/2" "ending bob's sessions: 200, 2 ended"
is "$(uses "$T/bob")/$(uses "$T/bob2")" "401/401" "both of bob's browsers are logged out"
is "$(audit "action = 'end-sessions'")" "ada end-sessions user bob: 2 sessions" "audited under the admin's name"
hit GET /sessions
is "$CODE" 200 "the Sessions page is served"

# ---- the command line ----
login bob "$T/bob"
jq_ sessions >"$T/out" 2>&1
is "$?" 0 "jobq sessions: exit 0"
like "$(cat "$T/out")" "bob +1 session " "lists bob's session"
is "$(jq_ sessions --json | jget '[(u["user"], u["sessions"]) for u in d]')" '[["ada", 2], ["bob", 1]]' "--json"
jq_ sessions end bob >"$T/out" 2>&1
is "$?/$(cat "$T/out")" "0/1 session of bob ended" "jobq sessions end bob"
is "$(uses "$T/bob")" 401 "bob is logged out"
like "$(audit "action = 'end-sessions' AND username LIKE 'cli:%'")" "^cli:[^ ]+ end-sessions user bob: 1 session$" "audited as the command line's user"
jq_ sessions end bob >"$T/out" 2>&1
is "$?/$(cat "$T/out")" "0/0 sessions of bob ended" "nothing to end: still exit 0"
jq_ sessions end >"$T/out" 2>&1
is "$?" 64 "no user: exit 64"
like "$(head -1 "$T/out")" "^jobq: sessions: whose sessions\?" "saying what is missing"
jq_ sessions end 'bad name!' >"$T/out" 2>&1
is "$?/$(cat "$T/out")" "65/jobq: sessions end: 'bad name!' is not a valid user name" "a bad user name: exit 65, one line"
jq_ sessions frob >"$T/out" 2>&1
is "$?" 64 "an unknown action: exit 64"
jq_ sessions --help >"$T/out" 2>&1
is "$?" 0 "--help: exit 0"
like "$(cat "$T/out")" "jobq sessions end USER" "and it names the end action"

serve_stop
finish
