#!/bin/bash
# Edit then retry a dead-lettered job (`jobq failed retry --payload`,
# POST /api/failed/retry-edited): the job goes back to its queue with the
# new payload and a worker runs it with that payload; a payload that is
# not JSON or is over max_payload, an unknown id, a viewer: refused and
# nothing changed; one audit row holds the old and the new payload (each
# cut to its first 460 characters, its size first); and an edited retry
# racing a forget of the same job: exactly one of them wins, whole.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
. "$top_srcdir/tests/operator/common.sh"
. "$top_srcdir/tests/serve_lib.sh"
setup serve_editretry

# fix: writes its stdin to ran/ID and dies (65) unless the payload says
# "fixed"; so a job dies with the payload it was enqueued with and runs
# with the one it was edited to.
mkdir -p "$T/ran"
write_conf <<EOC
[worker]
poll_interval = 20ms
max_payload = 2000

[queue default]

[handler fix]
exec = /bin/sh -c 'p=\$(cat); printf %s "\$p" > $T/ran/\$JOBQ_JOB_ID; case "\$p" in *fixed*) exit 0;; esac; exit 65'

[user ada]
password_hash = $PWHASH
role = admin

[user bob]
password_hash = $PWHASH
role = viewer
EOC

a=$(jq_ enqueue fix '{"v": "bad a"}')
b=$(jq_ enqueue fix '{"v": "bad b"}')
c=$(jq_ enqueue fix '{"v": "bad c"}')
jq_ work --stop-when-empty 2>"$T/work.log"
is "$(count failed_jobs)/$(count jobs)" "3/0" "a worker dead-lettered the three jobs"

# snap: everything an edited retry may change.
snap() {
	sql "SELECT CONCAT_WS('|', (SELECT GROUP_CONCAT(id, payload ORDER BY id) FROM failed_jobs),
	     (SELECT GROUP_CONCAT(id, payload ORDER BY id) FROM jobs), (SELECT COUNT(*) FROM jobq_audit))"
}
before=$(snap)

# ---- CLI: refused, nothing changed ----
run failed retry --payload '{"v": "fixed",' "$a"
is "$RC" 65 "CLI: a payload that is not JSON: 65"
like "$ERR" "payload is not valid JSON \(at byte [0-9]+\).*nothing done" "which says so, and where"
is "$(lines "$ERR")" 1 "on one line"
big=$(python3 -c 'print("{\"v\": \"fixed %s\"}" % ("x" * 2100))')
run failed retry --payload "$big" "$a"
is "$RC" 65 "CLI: a payload over max_payload: 65"
like "$ERR" "more than max_payload \(2000\)" "which names the limit"
printf '%s' "$big" >"$T/big.json"
run failed retry --payload-file "$T/big.json" "$a"
is "$RC" 65 "CLI: a payload file over max_payload: 65"
run failed retry --payload '{"v": "fixed"}' 999999
is "$RC" 65 "CLI: an id that is not dead-lettered: 65"
like "$ERR" "no failed job 999999; nothing done" "which says so"
run failed retry --payload-file "$T/nosuch.json" "$a"
is "$RC" 66 "CLI: a payload file that cannot be read: 66"
like "$ERR" "open .*nosuch.json: No such file" "named with the reason"
run failed retry --payload '{}' "$a" "$b"
is "$RC" 64 "CLI: --payload with two ids: 64"
run failed retry --all --payload '{}'
is "$RC" 64 "CLI: --payload with --all: 64"
run failed retry --payload '{}' --payload-file - "$a"
is "$RC" 64 "CLI: --payload and --payload-file: 64"
run failed forget --payload '{}' "$a"
is "$RC" 64 "CLI: --payload with forget: 64"
run failed retry --dry-run --payload '{"v": "fixed"}' "$a"
is "$RC/$OUT" "0/would retry job $a with the edited payload" "CLI: --dry-run says what it would do"
is "$(snap)" "$before" "none of these changed anything"

# ---- CLI: edited and retried ----
run failed retry --payload '{"v": "fixed a"}' "$a"
is "$RC/$OUT" "0/retried job $a with the edited payload" "CLI: retry --payload moves the job"
is "$(sql "SELECT CONCAT(payload, ' ', attempts) FROM jobs WHERE id = $a")" '{"v": "fixed a"} 0' "it is queued with the new payload, attempts reset"
is "$(count failed_jobs "id = $a")" 0 "and has left the dead letter"
is "$(sql "SELECT CONCAT_WS('|', username, action, detail) FROM jobq_audit WHERE job_id = $a")" \
	"cli:$(id -un)|retry-edited|payload 14 -> 16 bytes; old: {\"v\": \"bad a\"}; new: {\"v\": \"fixed a\"}" \
	"one audit row: who (cli:account), the old and the new payload with their sizes"
printf '  {"v": "fixed c"}\n\n' | jq_ failed retry --payload-file - "$c" >"$T/out.c" 2>&1
is "$?/$(sql "SELECT payload FROM jobs WHERE id = $c")" '0/  {"v": "fixed c"}' "CLI: --payload-file - reads stdin (trailing blanks dropped)"

# ---- API ----
serve_start
login bob "$T/bob"
bob_csrf=$CSRF
login ada "$T/ada"
before=$(snap)
post /api/failed/retry-edited "$T/bob" "{\"id\": $b, \"payload\": \"{}\"}" "$bob_csrf"
is "$CODE" 403 "API: a viewer gets 403"
post /api/failed/retry-edited "$T/ada" "{\"id\": $b}"
is "$CODE" 400 "API: no payload: 400"
like "$BODY" "expected" "with a sentence"
post /api/failed/retry-edited "$T/ada" '{"id": "x", "payload": "{}"}'
is "$CODE" 400 "API: an id that is no number: 400"
post /api/failed/retry-edited "$T/ada" "{\"id\": $b, \"payload\": \"{\\\"v\\\": \"}"
is "$CODE" 422 "API: a payload that is not JSON: 422"
like "$BODY" "payload is not valid JSON" "with a sentence that says so"
post /api/failed/retry-edited "$T/ada" "{\"id\": $b, \"payload\": $(printf '%s' "$big" | python3 -c 'import json,sys; print(json.dumps(sys.stdin.read()))')}"
is "$CODE" 422 "API: a payload over max_payload: 422"
like "$BODY" "more than max_payload" "with a sentence that says so"
post /api/failed/retry-edited "$T/ada" '{"id": 999999, "payload": "{}"}'
is "$CODE" 404 "API: an id that is not dead-lettered: 404"
is "$(snap)" "$before" "none of these changed anything"
post /api/failed/retry-edited "$T/ada" "{\"id\": $b, \"payload\": \"{\\\"v\\\": \\\"fixed b\\\"}\"}"
is "$CODE/$(printf '%s' "$BODY" | jget 'd["retried"]')" "200/$b" "API: the edited retry answers 200 and the job's id"
is "$(sql "SELECT payload FROM jobs WHERE id = $b")/$(count failed_jobs "id = $b")" '{"v": "fixed b"}/0' "it moved with the new payload"
post /api/failed/retry-edited "$T/ada" "{\"id\": $b, \"payload\": \"{}\"}"
is "$CODE" 404 "API: again, once it has moved: 404"
hit GET "/api/jobs/$b" "$T/ada"
is "$(printf '%s' "$BODY" | jget '"|".join("%s %s %s" % (a["user"], a["action"], a["detail"]) for a in d["audit"])')" \
	'ada retry-edited payload 14 -> 16 bytes; old: {"v": "bad b"}; new: {"v": "fixed b"}' "the job's page shows the audit row"
hit GET "/api/audit?action=retry-edited" "$T/ada"
is "$CODE/$(printf '%s' "$BODY" | jget 'len(d["audit"])')" "200/3" "the audit page filters on retry-edited (the two CLI edits and this one)"

# ---- the worker runs them with the new payloads ----
jq_ work --stop-when-empty 2>>"$T/work.log"
is "$(count jobs)/$(count failed_jobs)" "0/0" "a worker ran the three edited jobs to done"
is "$(cat "$T/ran/$a")|$(cat "$T/ran/$b")|$(cat "$T/ran/$c")" '{"v": "fixed a"}|{"v": "fixed b"}|  {"v": "fixed c"}' \
	"each handler read its edited payload on stdin"

# ---- a long payload: the audit keeps the start of each, and the sizes ----
long=$(python3 -c 'print("{\"v\": \"%s\"}" % ("é" * 700))')
sql "INSERT INTO failed_jobs (id, queue, type, payload, exception) VALUES (7001, 'default', 'fix', '$long', 'x')"
run failed retry --payload '{"v": "fixed"}' 7001
is "$RC" 0 "an edited retry of a job with a 1409-byte payload"
detail=$(sql "SELECT detail FROM jobq_audit WHERE job_id = 7001")
like "$detail" '^payload 1409 -> 14 bytes; old: \{"v": "é+\.\.\.; new: \{"v": "fixed"\}$' "the detail keeps the sizes, the old payload's start and the new payload"
is "$(sql "SELECT CHAR_LENGTH(detail) <= 1024 FROM jobq_audit WHERE job_id = 7001")" 1 "within the detail column"

# ---- an edited retry racing a forget: exactly one wins, whole ----
rounds=0 moved=0 forgot=0 bad=0
while [ $rounds -lt 300 ] && { [ $rounds -lt 30 ] || [ $moved -lt 5 ] || [ $forgot -lt 5 ]; }; do
	rounds=$((rounds + 1))
	id=$((8000 + rounds))
	sql "INSERT INTO failed_jobs (id, queue, type, payload, exception) VALUES ($id, 'default', 'fix', '{}', 'x')"
	jq_ failed retry --payload "{\"round\": $rounds}" "$id" >/dev/null 2>&1 &
	rp=$!
	jq_ failed forget "$id" >/dev/null 2>&1 &
	fp=$!
	wait $rp
	rrc=$?
	wait $fp
	frc=$?
	state=$(sql "SELECT CONCAT_WS('/', (SELECT COUNT(*) FROM jobs WHERE id = $id AND payload = '{\"round\": $rounds}'),
	        (SELECT COUNT(*) FROM jobs WHERE id = $id), (SELECT COUNT(*) FROM failed_jobs WHERE id = $id),
	        (SELECT COUNT(*) FROM jobq_audit WHERE job_id = $id AND action = 'retry-edited'))")
	if [ "$rrc/$frc/$state" = "0/65/1/1/0/1" ]; then
		moved=$((moved + 1))
	elif [ "$rrc/$frc/$state" = "65/0/0/0/0/0" ]; then
		forgot=$((forgot + 1))
	else
		bad=$((bad + 1))
		diag "round $rounds: retry $rrc, forget $frc, jobs with the payload/jobs/failed/audit $state"
	fi
done
is "$bad" 0 "race: in each of $rounds rounds exactly one of the edited retry and the forget won, whole"
ok "$([ $moved -gt 0 ] && [ $forgot -gt 0 ]; echo $?)" "race: both outcomes happened (retry won $moved, forget won $forgot)"

finish
