#!/bin/bash
# Queue and type filters that no stored name can equal (non-ASCII text:
# the columns are ASCII) find nothing: the dashboard answers an empty
# list, not a 500 with a database error in its log; a bulk action with
# such a filter is refused; the CLI's lists find nothing as well.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
. "$top_srcdir/tests/operator/common.sh"
. "$top_srcdir/tests/serve_lib.sh"
setup serve_filters

write_conf <<EOC
[queue default]

[handler echo]
exec = $HANDLERS/echo.sh

[user admin]
password_hash = $PWHASH
role = admin
EOC
serve_start
login admin "$T/jar"
jq_ enqueue echo '{}' >/dev/null
sql "INSERT INTO failed_jobs (id, queue, type, payload, exception) VALUES (500, 'default', 'echo', '{}', 'x')"

for q in 'queue=%C3%A9' 'type=%C3%A9' 'queue=default&type=caf%C3%A9' 'queue=%E2%80%AE' 'type=%FF'; do
	hit GET "/api/jobs?$q" "$T/jar"
	is "$CODE $(printf '%s' "$BODY" | jget 'len(d["jobs"])')" "200 0" "/api/jobs?$q: an empty list"
	hit GET "/api/failed?$q" "$T/jar"
	is "$CODE $(printf '%s' "$BODY" | jget 'len(d["failed"])')" "200 0" "/api/failed?$q: an empty list"
done
hit GET "/api/jobs?queue=default" "$T/jar"
is "$CODE $(printf '%s' "$BODY" | jget 'len(d["jobs"])')" "200 1" "an ASCII filter still finds its job"
hit GET "/api/failed?type=echo" "$T/jar"
is "$CODE $(printf '%s' "$BODY" | jget 'len(d["failed"])')" "200 1" "and its dead-lettered job"

post /api/failed/retry "$T/jar" '{"all": true, "queue": "d\u00e9fault"}'
is "$CODE" 422 "retry all with a non-ASCII queue: refused"
post /api/failed/retry "$T/jar" '{"all": true, "type": "\u00e9cho"}'
is "$CODE" 422 "retry all with a non-ASCII type: refused"
is "$(count failed_jobs)" 1 "nothing was retried"

is "$(grep -ci 'collation\|error' "$T/serve.log")" 0 "no database error in the log"

run failed list --queue "$(printf 'caf\303\251')"
is "$RC" 0 "jobq failed list --queue with a non-ASCII name: no error"
is "$(printf '%s' "$ERR" | grep -ci collation)" 0 "and no server error"

finish
