#!/bin/bash
# The dashboard's write paths where they meet workflows and unique keys:
# Delete (one job, or "delete all" of a list) refuses a job that other
# jobs wait for or that a group counts, since it would leave them
# waiting and the group open for ever (Cancel ends it for them); the
# bulk count leaves those out; Edit and retry of a dead job re-opens the
# jobs its death cancelled, as `jobq failed retry` does; Edit and retry
# of a dead job whose unique key another job holds now is 409 and the
# job stays dead.
. "$top_srcdir/tests/lib.sh"
one_build normal "behaviour alone"
. "$top_srcdir/tests/operator/common.sh"
. "$top_srcdir/tests/serve_lib.sh"
setup serve_form_audit_flow

write_conf <<EOC
[worker]
poll_interval = 20ms

[queue default]

[handler echo]
exec = $HANDLERS/echo.sh

[handler fix]
exec = /bin/sh -c 'case "\$(cat)" in *fixed*) exit 0;; esac; exit 65'

[user ada]
password_hash = $PWHASH
role = admin
EOC
serve_start
login ada "$T/jar"
field() { printf '%s' "$1" | jget "d[\"$2\"]"; }
state() { jq_ show --json "$1" | jget 'd["state"]'; }

# ---- (a) Delete of a job another job waits for ----
a=$(jq_ enqueue --delay 1h echo '{}')
b=$(jq_ enqueue --after "$a" echo '{}')
naudit=$(count jobq_audit)
post "/api/jobs/$a/delete" "$T/jar" '{}'
like "$CODE $(field "$BODY" error)" "^409 .*other jobs wait for it.*cancel it" \
	"delete of a job another job waits for: 409, saying to cancel it"
is "$(count jobs "id = $a")/$(state "$b")/$(count jobq_audit)" "1/waiting/$naudit" \
	"the job stays, its dependent waits for it, nothing audited"
post "/api/jobs/$a/cancel" "$T/jar" '{}'
jq_ work --stop-when-empty 2>"$T/work.log"
is "$CODE/$(state "$a")/$(state "$b")" "200/cancelled/cancelled" \
	"cancel ends it for its dependent, which a worker then cancels (never runs it)"

# ---- (b) Delete of a job its group counts ----
printf '{"type": "echo", "delay": 3600}\n{"type": "echo", "delay": 3600}\n' |
	jq_ enqueue --batch --group g1 --on-complete echo >/dev/null
plain=$(jq_ enqueue --delay 1h echo '{}')
g=$(sql "SELECT MAX(id) FROM jobs WHERE group_id IS NOT NULL")
post "/api/jobs/$g/delete" "$T/jar" '{}'
like "$CODE $(field "$BODY" error)" "^409 .*its group counts it" "delete of a group's job: 409"
is "$(count jobs "group_id IS NOT NULL")" 2 "both of the group's jobs stay"
post /api/bulk/count "$T/jar" '{"action": "delete", "state": "delayed"}'
is "$CODE $(field "$BODY" count)" "200 1" "delete all delayed counts only the job outside the group"
post /api/bulk "$T/jar" "{\"action\": \"delete\", \"state\": \"delayed\", \"count\": 1, \"upto\": $(field "$BODY" upto), \"after\": 0}"
is "$CODE $(field "$BODY" done) $(field "$BODY" skipped)" "200 1 0" "and deletes it alone"
is "$(count jobs "id = $plain")/$(count jobs "group_id IS NOT NULL")" "0/2" "the group's jobs are still there"
jq_ cancel "$g" >/dev/null
g2=$(sql "SELECT id FROM jobs WHERE group_id IS NOT NULL")
jq_ cancel "$g2" >/dev/null
is "$(count jobs "type = 'echo' AND payload LIKE '%\"group\"%'")" 1 \
	"cancelling them ends the group: its on-complete job is enqueued"
sql "DELETE FROM jobs"

# ---- (c) Edit and retry re-opens the jobs its death cancelled ----
d=$(jq_ enqueue fix '{"v": "bad"}')
w=$(jq_ enqueue --after "$d" echo '{}')
jq_ work --stop-when-empty 2>"$T/work.log"
is "$(count failed_jobs "id = $d")/$(state "$w")" "1/cancelled" "the dead job's death cancelled its dependent"
post /api/failed/retry-edited "$T/jar" "{\"id\": $d, \"payload\": \"{\\\"v\\\": \\\"fixed\\\"}\"}"
is "$CODE/$(state "$w")" "200/waiting" "edit and retry: 200, and the dependent waits for it again"
jq_ work --stop-when-empty 2>>"$T/work.log"
is "$(state "$d")/$(state "$w")" "done/done" "the fixed job runs, then its dependent"

# ---- (d) Edit and retry when another job holds its unique key ----
k=$(jq_ enqueue --unique-key order:1 fix '{"v": "bad"}')
jq_ work --stop-when-empty 2>>"$T/work.log"
holder=$(jq_ enqueue --delay 1h --unique-key order:1 echo '{}')
naudit=$(count jobq_audit)
post /api/failed/retry-edited "$T/jar" "{\"id\": $k, \"payload\": \"{\\\"v\\\": \\\"fixed\\\"}\"}"
like "$CODE $(field "$BODY" error)" "^409 .*$holder" "edit and retry with the key held by job $holder: 409 naming it"
is "$(count failed_jobs "id = $k")/$(count jobs "id = $k")/$(count jobq_audit)" "1/0/$naudit" \
	"the job stays dead, nothing audited"

finish
