#!/bin/bash
# Dashboard users kept in the database (issue 21, item 9): `jobq user`
# and the Users page's API (/api/users/...) add a user, change its role
# and its password and remove it, each change audited; a database user
# logs in like a jobq.ini user, a new role holds at its next request, a
# new password or a removal ends its sessions (also across a restart);
# jobq.ini's users are listed but changed only in the file; bad input is
# refused with one line and changes nothing; viewers may not change
# users, and an admin may not demote or remove itself; `jobq serve`
# starts with database users only.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
. "$top_srcdir/tests/operator/common.sh"
. "$top_srcdir/tests/serve_lib.sh"
setup serve_users

conf() {
	write_conf <<EOC
[queue default]
[handler echo]
exec = $HANDLERS/echo.sh
EOC
	[ "${1:-}" = nousers ] && return
	cat >>"$CONF" <<EOC
[user ada]
password_hash = $PWHASH
role = admin

[user vic]
password_hash = $PWHASH
role = viewer
EOC
}
audit() { sql "SELECT GROUP_CONCAT(CONCAT_WS(' ', username, action, detail) ORDER BY id SEPARATOR ' | ') FROM jobq_audit WHERE $1"; }
rows() { sql "SELECT COALESCE(GROUP_CONCAT(CONCAT(username, ':', role) ORDER BY username), '') FROM jobq_users"; }
me() { hit GET /api/me "$1"; printf '%s' "$BODY" | jget 'd["role"] if d["user"] else None'; }
who=cli:$(id -un)
conf

# ---- the CLI ----
run user
is "$RC:$OUT" "0:ada                      admin   jobq.ini
vic                      viewer  jobq.ini" "jobq user lists jobq.ini's users"
printf 'carol-pass-1\n' | jq_ user add carol --role admin >"$T/out" 2>"$T/err"
is "$?:$(cat "$T/out")" "0:user carol, role admin" "jobq user add carol --role admin (password on stdin)"
is "$(rows)" "carol:admin" "one row, the role"
like "$(sql "SELECT password_hash FROM jobq_users")" '^\$argon2id\$' "an argon2id hash, not the password"
is "$(audit "action = 'user-add'")" "$who user-add user carol, role admin" "audited, by the account at the terminal"
printf 'viewer-pass\n' | jq_ user add eve >/dev/null
is "$(rows)" "carol:admin,eve:viewer" "add without --role makes a viewer"

before=$(sql "SELECT CONCAT((SELECT COUNT(*) FROM jobq_users), '/', (SELECT COUNT(*) FROM jobq_audit))")
refused() { # refused STATUS MESSAGE-RE WHAT ARGS... (password on stdin)
	local want=$1 re=$2 what=$3
	shift 3
	printf 'another-pass\n' | jq_ "$@" >"$T/out" 2>"$T/err"
	is "$?" "$want" "$what: exit $want"
	like "$(cat "$T/err")" "$re" "... $(printf '%s' "$re" | tr -d '\\')"
	# a usage error adds the line that points to --help
	is "$(wc -l <"$T/err")" $((want == 64 ? 2 : 1)) "... on one line"
}
refused 65 "user add: user carol exists already" "a name taken" user add carol
refused 65 "user add: user ada is in .*jobq.ini: change it there" "a jobq.ini name" user add ada
refused 65 "user add: 'no way!': a user name is 1-64 letters" "a bad name" user add 'no way!'
refused 65 "role: expected admin or viewer, not 'root'" "a bad role" user add frank --role root
printf 'short\n' | jq_ user add frank >/dev/null 2>"$T/err"
is "$?:$(cat "$T/err")" "65:jobq: user add: the password is too short (at least 8 characters)" "a short password: 65"
refused 65 "user role: no user frank" "role of nobody" user role frank admin
refused 65 "user role: user vic is in .*jobq.ini: change it there" "role of a jobq.ini user" user role vic admin
refused 65 "user remove: no user frank" "remove nobody" user remove frank
refused 65 "user passwd: user ada is in .*jobq.ini" "passwd of a jobq.ini user" user passwd ada
# Not at a prompt, the password on stdin is input, judged before the
# database is asked (b189788): none at all is said first; given one, the
# unknown user is.
jq_ user passwd frank </dev/null >/dev/null 2>"$T/err"
is "$?:$(cat "$T/err")" "65:jobq: user passwd: no password on standard input (one line, at most 1024 bytes)" \
	"passwd of nobody with nothing on stdin: the missing password, judged first"
printf 'a good long password\n' | jq_ user passwd frank >/dev/null 2>"$T/err"
is "$?:$(cat "$T/err")" "65:jobq: user passwd: no user frank" "passwd of nobody with a password on stdin: no such user"
refused 64 "user: add needs a user NAME" "add without a name" user add
refused 64 "unknown action 'frob'" "an unknown action" user frob
refused 64 "--role goes with add" "--role with role" user role carol admin --role admin
is "$(sql "SELECT CONCAT((SELECT COUNT(*) FROM jobq_users), '/', (SELECT COUNT(*) FROM jobq_audit))")" "$before" \
	"nothing refused changed a user or wrote an audit row"
run user list --json
is "$(printf '%s' "$OUT" | jget '[(u["user"], u["role"], u["source"]) for u in d]')" \
	'[["ada", "admin", "jobq.ini"], ["vic", "viewer", "jobq.ini"], ["carol", "admin", "database"], ["eve", "viewer", "database"]]' \
	"list --json: jobq.ini's users, then the database's"

# ---- a database user in the dashboard ----
serve_start
hit POST /api/login "$T/carol" '{"user": "carol", "password": "carol-pass-1"}'
is "$CODE:$(me "$T/carol")" "200:admin" "carol (a database user) logs in, an admin"
hit POST /api/login "$T/x" '{"user": "carol", "password": "wrong-pass-1"}'
is "$CODE" 401 "a wrong password: 401"
run user role carol viewer
is "$RC:$(me "$T/carol")" "0:viewer" "jobq user role carol viewer: her next request is a viewer's"
hit GET /api/sessions "$T/carol"
is "$CODE" 403 "and admin pages are closed to her"
printf 'carol-pass-2\n' | jq_ user passwd carol --stdin >/dev/null
is "$?:$(me "$T/carol")" "0:null" "jobq user passwd carol: her session ends"
like "$(audit "action = 'session-end' AND username = 'carol'")" "the password changed" "the end is audited with why"
hit POST /api/login "$T/carol" '{"user": "carol", "password": "carol-pass-1"}'
is "$CODE" 401 "the old password no longer logs in"
hit POST /api/login "$T/carol" '{"user": "carol", "password": "carol-pass-2"}'
is "$CODE" 200 "the new one does"
run user remove carol
is "$RC:$(me "$T/carol")" "0:null" "jobq user remove carol: her session ends"
like "$(audit "action = 'session-end' AND username = 'carol'")" "the user was removed" "audited with why"
hit POST /api/login "$T/carol" '{"user": "carol", "password": "carol-pass-2"}'
is "$CODE" 401 "and she no longer logs in"
is "$(audit "action IN ('user-role', 'user-password', 'user-remove')")" \
	"$who user-role user carol, role viewer | $who user-password user carol: a new password; its sessions end | $who user-remove user carol; its sessions end" \
	"each change audited"

# ---- the Users page's API ----
login ada "$T/ada"
ADA=$CSRF
post /api/users/add "$T/ada" '{"user": "dave", "role": "viewer", "password": "dave-pass-1"}' "$ADA"
is "$CODE:$(printf '%s' "$BODY" | jget 'd["user"]')" "200:dave" "an admin adds dave"
hit GET /api/sessions "$T/ada"
is "$(printf '%s' "$BODY" | jget '[(u["user"], u["role"], u["source"], u.get("created_by")) for u in d["users"]]')" \
	'[["ada", "admin", "jobq.ini", null], ["vic", "viewer", "jobq.ini", null], ["dave", "viewer", "database", "ada"], ["eve", "viewer", "database", "'"$who"'"]]' \
	"the Users list: every user, its role, where it is kept, who added it"
before=$(sql "SELECT CONCAT((SELECT GROUP_CONCAT(username, role, password_hash) FROM jobq_users), '/', (SELECT COUNT(*) FROM jobq_audit))")
for t in '409|{"user": "dave", "role": "viewer", "password": "dave-pass-1"}|add|user dave exists already' \
	'409|{"user": "vic", "role": "admin", "password": "vic-pass-123"}|add|user vic is in' \
	'400|{"user": "a b", "role": "admin", "password": "ab-pass-123"}|add|a user name is 1-64' \
	'400|{"user": "fred", "role": "root", "password": "fred-pass-1"}|add|role: expected admin or viewer' \
	'400|{"user": "fred", "role": "viewer", "password": "short"}|add|the password is too short' \
	'400|{"user": "fred", "role": "viewer"}|add|expected a password' \
	'404|{"user": "fred", "role": "admin"}|role|no user fred' \
	'409|{"user": "vic", "role": "admin"}|role|user vic is in' \
	'409|{"user": "vic", "password": "vic-pass-123"}|password|user vic is in' \
	'404|{"user": "fred"}|remove|no user fred' \
	'409|{"user": "vic"}|remove|user vic is in'; do
	IFS='|' read -r want body what re <<<"$t"
	post "/api/users/$what" "$T/ada" "$body" "$ADA"
	is "$CODE" "$want" "$what $body: $want"
	like "$(printf '%s' "$BODY" | jget 'd["error"]')" "$re" "... $re"
done
is "$(sql "SELECT CONCAT((SELECT GROUP_CONCAT(username, role, password_hash) FROM jobq_users), '/', (SELECT COUNT(*) FROM jobq_audit))")" "$before" \
	"nothing refused changed a user or wrote an audit row"
login vic "$T/vic"
post /api/users/add "$T/vic" '{"user": "mallory", "role": "admin", "password": "mallory-pass"}'
is "$CODE:$(rows)" "403:dave:viewer,eve:viewer" "a viewer may not add users"

post /api/users/role "$T/ada" '{"user": "dave", "role": "admin"}' "$ADA"
is "$CODE:$(rows)" "200:dave:admin,eve:viewer" "ada makes dave an admin"
hit POST /api/login "$T/dave" '{"user": "dave", "password": "dave-pass-1"}'
DAVE=$(printf '%s' "$BODY" | jget 'd["csrf"]')
post /api/users/remove "$T/dave" '{"user": "dave"}' "$DAVE"
is "$CODE:$(printf '%s' "$BODY" | jget 'd["error"]')" "409:you cannot remove yourself" "dave may not remove himself"
post /api/users/role "$T/dave" '{"user": "dave", "role": "viewer"}' "$DAVE"
is "$CODE:$(printf '%s' "$BODY" | jget 'd["error"]')" "409:you cannot take the admin role from yourself" "nor demote himself"
post /api/users/password "$T/ada" '{"user": "dave", "password": "dave-pass-2"}' "$ADA"
is "$CODE:$(me "$T/dave")" "200:null" "ada gives dave a new password: his session ends"
hit POST /api/login "$T/dave" '{"user": "dave", "password": "dave-pass-2"}'
is "$CODE" 200 "he logs in with it"
is "$(audit "action LIKE 'user-%' AND username = 'ada'")" \
	"ada user-add user dave, role viewer | ada user-role user dave, role admin | ada user-password user dave: a new password; its sessions end" \
	"each change audited, by ada"

# ---- a removal while serve is down ends the sessions when it starts ----
serve_stop
run user remove dave
serve_start
is "$(sql "SELECT COUNT(*) FROM jobq_sessions WHERE username = 'dave'")" 0 \
	"removed while jobq serve was stopped: his sessions end when it starts"
post /api/users/remove "$T/ada" '{"user": "eve"}' "$ADA"
is "$CODE:$(rows)" "200:" "ada removes eve: no database user left"

# ---- jobq serve with database users only ----
serve_stop
conf nousers
printf 'gina-pass-1\n' | jq_ user add gina --role admin >/dev/null
serve_start
hit POST /api/login "$T/gina" '{"user": "gina", "password": "gina-pass-1"}'
is "$CODE:$(me "$T/gina")" "200:admin" "no [user] in jobq.ini: jobq serve starts, and a database user logs in"
serve_stop
is "$(grep -c -e 'Sanitizer' -e 'runtime error:' "$T/serve.log")" 0 "the server log holds no sanitizer report"
finish
