#!/bin/bash
# The Audit page's endpoint, GET /api/audit (admins): every audit row,
# newest first, filtered by user, action and time range, paged by
# keyset (a row added between two pages neither repeats nor hides one);
# filters that cannot be (an unknown action, a time that does not parse,
# bytes that are no UTF-8) are a 400 with a sentence, never a 500; a
# viewer gets 403 and nobody 401 (and a job's audit rows reach a viewer
# without the address).  Rows are made through the API itself:
# logins, a pause, an enqueue of one job and one of three.
. "$top_srcdir/tests/lib.sh"
one_build normal "behaviour alone (in the normal build: it keeps the two builds' runs about as long)"
. "$top_srcdir/tests/operator/common.sh"
. "$top_srcdir/tests/serve_lib.sh"
setup serve_auditpage

write_conf <<EOC
[queue default]
[queue mail]

[handler echo]
exec = $HANDLERS/echo.sh

[user ada]
password_hash = $PWHASH
role = admin

[user bob]
password_hash = $PWHASH
role = viewer
EOC
serve_start

# list QUERY: GET /api/audit?QUERY as ada; sets CODE and BODY.
list() { hit GET "/api/audit?$1" "$T/ada"; }
# rows: the last answer's rows as "user action job count", newest first.
rows() { printf '%s' "$BODY" | jget '"|".join("%s %s %s %s" % (a["user"], a["action"], a["job_id"], a["count"]) for a in d["audit"])'; }
ids() { printf '%s' "$BODY" | jget '" ".join(str(a["id"]) for a in d["audit"])'; }
next() { printf '%s' "$BODY" | jget 'd["next"]'; }

# ---- rows of several kinds, made through the API ----
login bob "$T/bob"
is "$CODE" 200 "bob (viewer) logs in"
login ada "$T/ada"
is "$CODE" 200 "ada (admin) logs in"
post /api/queues/pause "$T/ada" '{"queue": "mail"}'
is "$CODE" 200 "ada pauses queue mail"
post /api/enqueue "$T/ada" '{"type": "echo", "payload": "{}"}'
is "$CODE" 200 "ada enqueues one job"
one=$(printf '%s' "$BODY" | jget 'd["first_id"]')
post /api/enqueue "$T/ada" '{"type": "echo", "payload": "{}", "count": 3}'
is "$CODE" 200 "ada enqueues three jobs"
first=$(printf '%s' "$BODY" | jget 'd["first_id"]')

# ---- who may read it ----
hit GET /api/audit
is "$CODE" 401 "no session: 401"
hit GET /api/audit "$T/bob"
is "$CODE" 403 "a viewer: 403"
like "$BODY" 'admin role' "the 403 says the admin role is needed"
# A job's page shows its audit rows to a viewer, but not the address an
# admin acted from: that is for admins, as here.
hit GET "/api/jobs/$one" "$T/bob"
is "$CODE $(printf '%s' "$BODY" | jget '[(a["user"], "address" in a) for a in d["audit"]]')" '200 [["ada", false]]' \
	"a viewer reads a job's audit rows without the address"
hit GET "/api/jobs/$one" "$T/ada"
is "$(printf '%s' "$BODY" | jget '[(a["user"], "address" in a) for a in d["audit"]]')" '[["ada", true]]' "an admin with it"
hit GET /audit
is "$CODE" 200 "the page itself (/audit) is served to anyone, like every page"
like "$(header content-type)" '^text/html' "as HTML"

# ---- everything, newest first ----
list ""
is "$CODE" 200 "ada reads the audit trail"
like "$(header content-type)" '^application/json' "as JSON"
is "$(rows)" "ada enqueue $((first + 2)) 3|ada enqueue $((first + 1)) 3|ada enqueue $first 3|ada enqueue $one None|ada queue-pause None None|ada login None None|bob login None None" \
	"every row, newest first, with its job id and count (null when none)"
is "$(printf '%s' "$BODY" | jget '[a["id"] for a in d["audit"]] == sorted([a["id"] for a in d["audit"]], reverse=True)')" true "ids descend"
is "$(next)" null "one page holds them all: next is null"
is "$(printf '%s' "$BODY" | jget '"enqueue" in d["actions"] and "login" in d["actions"] and "session-end" in d["actions"]')" true \
	"the answer lists the known actions (for the page's filter)"
# Every action name the sources write (the calls that write audit rows,
# and the handlers that pass theirs on) must be one the filter takes,
# or its rows could be seen but never filtered.
written=$(cat "$top_srcdir"/src/*.c |
	grep -E 'serve_audit(_count|_entry|ed)?\(|audit_add(_entry)?\(|struct audit_entry [a-z]+ = |job_action\(r, |each_failed\(r, ' |
	grep -oE '"[a-z]+(-[a-z]+)*"' | tr -d '"' | sort -u | tr '\n' ' ')
ok "$([ "$(echo $written | wc -w)" -ge 15 ]; echo $?)" "the action names were read from the sources ($(echo $written | wc -w))"
is "$(printf '%s' "$BODY" | python3 -c 'import json, sys; d = json.load(sys.stdin); print(" ".join(sorted(set(sys.argv[1].split()) - set(d["actions"]))))' "$written")" \
	"" "every action the sources write is one the filter knows"
is "$(printf '%s' "$BODY" | jget 'sorted(d["audit"][0].keys())')" \
	'["action", "address", "at", "count", "detail", "id", "job_id", "user"]' "each row's fields"

# ---- filters ----
list "action=enqueue"
is "$(rows)" "ada enqueue $((first + 2)) 3|ada enqueue $((first + 1)) 3|ada enqueue $first 3|ada enqueue $one None" "action=enqueue"
list "action=login"
is "$(rows)" "ada login None None|bob login None None" "action=login"
list "user=bob"
is "$(rows)" "bob login None None" "user=bob"
list "user=ada&action=queue-pause"
is "$(rows)" "ada queue-pause None None" "user and action together"
list "user=nobody"
is "$CODE:$(rows)" "200:" "a user with no rows: an empty list"

# Time range: bob's login moved to 2019, ada's to the first second of
# 2020.  since is included, until is not; offsets are honoured.
sql "UPDATE jobq_audit SET at = '2019-12-31 12:00:00' WHERE username = 'bob';
     UPDATE jobq_audit SET at = '2020-01-01 00:00:00' WHERE username = 'ada' AND action = 'login'"
list "until=2020-01-01T01:00:00%2B01:00"
is "$(rows)" "bob login None None" "until (an offset of +01:00) leaves out a row at that very time"
list "since=2020-01-01&until=2021-01-01T00:00:00Z"
is "$(rows)" "ada login None None" "since (a date alone: midnight UTC) takes a row at that very time"
list "since=2021-01-01T00:00:00Z&action=login"
is "$CODE:$(rows)" "200:" "since after both logins: none"
list "since=2021-01-01%2000:00:00"
is "$(printf '%s' "$BODY" | jget 'len(d["audit"])')" 5 "since with a blank between date and time, as the CLI takes it"

# ---- keyset paging ----
list ""
all=$(ids)
list "limit=3"
p1=$(ids) n1=$(next)
is "$(echo "$p1" | wc -w)" 3 "limit=3: three rows"
is "$n1" "$(echo "$p1" | awk '{print $3}')" "next is the last row's id"
# A row that arrives between two pages must not shift the next one
# (with OFFSET it would repeat a row).
post /api/queues/resume "$T/ada" '{"queue": "mail"}'
is "$CODE" 200 "a new row (resume) arrives between two pages"
list "limit=3&before=$n1"
p2=$(ids) n2=$(next)
list "limit=3&before=$n2"
p3=$(ids) n3=$(next)
is "$p1 $p2 $p3" "$all" "three pages hold every row once, in order"
is "$n3" null "the last page: next is null"
list "limit=2&action=enqueue"
list "limit=2&action=enqueue&before=$(next)"
is "$(rows)" "ada enqueue $first 3|ada enqueue $one None" "paging keeps the filter"
list "before=1"
is "$CODE:$(rows)" "200:" "before the first row: none"

# ---- filters that cannot be: 400 with a sentence ----
bad() {
	list "$1"
	is "$CODE" 400 "$2: 400"
	like "$(printf '%s' "$BODY" | jget 'd["error"]')" "$3" "$2: the message says so"
}
bad "action=nosuch" "an unknown action" "unknown action"
bad "action=%C3%A9t%C3%A9" "a non-ASCII action" "unknown action"
bad "action=LOGIN" "an action in capitals" "unknown action"
bad "since=yesterday" "since that is no time" "since must be an ISO 8601 time"
bad "until=2026-13-01" "until in month 13" "until must be an ISO 8601 time"
bad "since=9999-12-31T23:30-01:00" "since past year 9999 in UTC" "since must be"
bad "user=%FF%FE" "a user that is no UTF-8" "user must be"
bad "user=$(printf 'x%.0s' $(seq 300))" "a user longer than a name" "user must be"
bad "limit=0" "limit 0" "limit must be"
bad "limit=501" "limit 501" "limit must be"
bad "before=abc" "before that is no id" "before must be"
bad "before=-5" "a negative before" "before must be"

# Text that is UTF-8 but not ASCII is a filter like any other.
list "user=%C3%A9mile"
is "$CODE:$(rows)" "200:" "a non-ASCII user: 200, no rows"
list "user=%F0%9F%98%80"
is "$CODE:$(rows)" "200:" "a user of a four-byte character: 200, no rows"
sql "INSERT INTO jobq_audit (username, action, detail) VALUES ('émile', 'login', 'café ☕')"
list "user=%C3%A9mile"
is "$(printf '%s' "$BODY" | jget '"%s|%s" % (d["audit"][0]["user"], d["audit"][0]["detail"])')" "émile|café ☕" \
	"a non-ASCII user's rows come back as they were written"

# ---- jobq audit: the same rows from the command line ----
list "action=login&limit=500"
api_ids=$(ids)
run audit --action login --limit 500 --json
is "$RC" 0 "jobq audit --action login --json"
is "$(printf '%s' "$OUT" | jget '" ".join(str(a["id"]) for a in d)')" "$api_ids" "the same rows as /api/audit, newest first"
is "$(printf '%s' "$OUT" | jget 'd[0]["at"].endswith("Z") or d[0]["at"].endswith("+00:00")')" true "times in JSON are ISO 8601 UTC"
run audit --user ada --action queue-pause
is "$RC:$(printf '%s\n' "$OUT" | wc -l)" "0:1" "jobq audit --user ada --action queue-pause: one line"
like "$OUT" "ada +queue-pause" "the line names user and action"
run audit --action enqueue --limit 2
is "$(printf '%s\n' "$OUT" | wc -l)" 2 "--limit 2: two lines"
like "$OUT" "job $((first + 2))" "the newest enqueue first, with its job"
run audit --since 2020-01-01T01:00:00+01:00 --until 2021-01-01 --json
is "$(printf '%s' "$OUT" | jget '" ".join(a["user"] + ":" + a["action"] for a in d)')" "ada:login" "--since and --until as the API takes them"
run audit --user émile --json
is "$(printf '%s' "$OUT" | jget 'd[0]["detail"]')" "café ☕" "a non-ASCII user"
run audit --user nobody
is "$RC:$OUT" "0:no action matches" "no match: says so, exit 0"
run audit --user ''
is "$RC:$OUT" "64:" "an empty --user: 64, no rows"
like "$ERR" "--user: an empty name" "and says so"
run audit --action nope
is "$RC" 64 "an unknown action: 64"
like "$ERR" "unknown action 'nope'" "and says so"
run audit --since yesterday
is "$RC" 64 "a time that does not parse: 64"
run audit --since 9999-12-31T23:30-01:00
is "$RC" 65 "a time past year 9999 in UTC: 65"
run audit --limit 501
is "$RC" 64 "--limit 501: 64"
run audit --help
like "$OUT" "Actions: cancel clear delete end-sessions" "--help lists the action names"

serve_stop
finish
