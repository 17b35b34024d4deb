#!/bin/bash
# POST /api/enqueue with a unique key, jobs to wait for and a group,
# against `jobq enqueue --unique-key/--unique-for`, `--after/--after-any`
# and `--batch --group --on-complete`:
#   (a) a taken key is refused (200, "refused", the holder's id) with
#       nothing written and no audit row; a resend of the submit id gets
#       the first answer; a unique_for window holds the key after its job
#       is done; the checks of --unique-key, and count/after/group with a
#       key, are 400 naming the fields;
#   (b) "after" an unknown id is 400 naming it, nothing written; after a
#       done job the job is ready, after a dead one it is cancelled
#       naming it (said in the answer), with after_policy "any" ready;
#       jobs waiting for a delayed job are released when a real worker
#       runs it; every job enqueued has its audit row;
#   (c) a group: its jobs join it, the callback is enqueued once when a
#       worker ends the last; a resend adds nothing; a completed group
#       is 409;
#   (d) the answer to the COMMIT lost: the resent submit finds the jobs
#       (or the refusal) of the first, and each job has its audit row.
. "$top_srcdir/tests/lib.sh"
one_build normal "behaviour alone"
. "$top_srcdir/tests/operator/common.sh"
. "$top_srcdir/tests/serve_lib.sh"
setup serve_enqueue_flow
PX=$T/px
replylost_start "$PX"

SOCKET=$T/p.sock write_conf <<EOC
[worker]
poll_interval = 20ms

[queue default]

[handler echo]
exec = $HANDLERS/echo.sh

[handler fail]
exec = /bin/sh -c 'exit 65'

[handler cb]
exec = $HANDLERS/echo.sh

[user alice]
password_hash = $PWHASH
role = admin

[serve]
overview_cache = 0
EOC
serve_start
login alice "$T/jar"
field() { printf '%s' "$1" | jget "d.get(\"$2\")"; }
state() { jq_ show --json "$1" | jget 'd["state"]'; }
enq() { post /api/enqueue "$T/jar" "{\"type\": \"echo\", \"payload\": \"{}\", $1}"; }
audited() { count jobq_audit "action = 'enqueue' AND job_id = $1"; }
nothing() { echo "$(count jobs)/$(count jobq_audit)/$(count jobq_groups)"; }

# ---- (a) unique key ----
enq '"unique_key": "order:1", "delay": 3600, "submit_id": "u-1"'
a=$(field "$BODY" first_id)
is "$CODE $(field "$BODY" count) $(field "$BODY" refused)" "200 1 null" "a free key: 200, one job"
is "$(sql "SELECT unique_key FROM jobs WHERE id = $a")/$(audited "$a")" "order:1/1" "it holds the key, and has its audit row"
before=$(nothing)
enq '"unique_key": "order:1", "submit_id": "u-2"'
is "$CODE $(field "$BODY" refused) $(field "$BODY" holder_id) $(field "$BODY" in_window) $(field "$BODY" count)" \
	"200 true $a false 0" "the key taken: 200, refused, naming the holder $a"
like "$(field "$BODY" message)" "taken by job $a; nothing was enqueued" "and saying so"
is "$(nothing)" "$before" "nothing written, no audit row"
enq '"unique_key": "order:1", "submit_id": "u-2"'
is "$CODE $(field "$BODY" refused) $(field "$BODY" holder_id) $(field "$BODY" repeated)" "200 true $a true" \
	"the refused submit resent: the same refusal, repeated"
enq '"unique_key": "order:1", "delay": 3600, "submit_id": "u-1"'
is "$CODE $(field "$BODY" first_id) $(field "$BODY" repeated)/$(nothing)" "200 $a true/$before" \
	"the first submit resent: its job, repeated, nothing written"
is "$(jq_ enqueue --unique-key order:1 echo '{}' 2>/dev/null)" "$a" "jobq enqueue --unique-key meets the same holder"
# a window: the key stays taken once the job is done
enq '"unique_key": "w:1", "unique_for": "1h"'
w=$(field "$BODY" first_id)
is "$CODE $(sql "SELECT job_id FROM jobq_unique WHERE unique_key = 'w:1'")" "200 $w" "unique_for: the window names job $w"
jq_ work --stop-when-empty 2>"$T/work.log"
is "$(state "$w")" done "a worker runs it"
before=$(nothing)
enq '"unique_key": "w:1"'
is "$CODE $(field "$BODY" refused) $(field "$BODY" holder_id) $(field "$BODY" in_window)/$(nothing)" \
	"200 true $w true/$before" "the window still open after it is done: refused, naming it, nothing written"
sql "UPDATE jobq_unique SET expires_at = UTC_TIMESTAMP(6) - INTERVAL 1 SECOND WHERE unique_key = 'w:1'"
enq '"unique_key": "w:1", "delay": 3600'
w2=$(field "$BODY" first_id)
is "$CODE $(field "$BODY" refused)/$(sql "SELECT unique_key FROM jobs WHERE id = '$w2'")/$(audited "$w2")" \
	"200 null/w:1/1" "the window passed: the key is free again, job $w2 audited"
before=$(nothing)
bad() { # bad 'JSON fields' 'message regex' what
	enq "$1"
	like "$CODE $(field "$BODY" error)" "^400 $2" "$3: 400, naming it"
}
bad '"unique_key": "k "' '"unique_key": .k . ends in a space' "a key ending in a space"
bad '"unique_key": ""' '"unique_key": expected 1 to 255 bytes' "an empty key"
bad '"unique_key": 7' '"unique_key": must be a string' "a key that is no string"
bad '"unique_for": "1h"' '"unique_for" goes with "unique_key"' "unique_for alone"
bad '"unique_key": "k", "unique_for": 0' '"unique_for" must be above 0' "unique_for 0"
bad '"unique_key": "k", "count": 2' '"unique_key" and "count"' "a key with count 2"
bad "\"unique_key\": \"k\", \"after\": [$a]" '"unique_key" and "after"' "a key with after"
bad '"unique_key": "k", "group": "g"' '"unique_key" and "group"' "a key with a group"

# ---- (b) after ----
bad '"after": [999999]' '"after": job 999999 is not known.*nothing was enqueued' "after an unknown job"
bad '"after": ["first"]' '"after": job ids only' "after a ref"
bad '"ref": "x"' '"ref": the API enqueues one job shape' "ref"
bad '"after_policy": "any"' '"after_policy": goes with a non-empty "after"' "after_policy alone"
bad "\"after\": [$a], \"after_policy\": \"some\"" '"after_policy": must be "all" or "any"' "a bad after_policy"
is "$(nothing)" "$before" "none of the refusals wrote anything"
d=$(jq_ enqueue echo '{}')
x=$(jq_ enqueue fail '{}')
jq_ work --stop-when-empty 2>>"$T/work.log"
is "$(state "$d")/$(state "$x")" "done/failed" "job $d is done, job $x dead (failed)"
enq "\"after\": [$d], \"submit_id\": \"b-1\""
j=$(field "$BODY" first_id)
is "$CODE $(field "$BODY" waiting_on) $(field "$BODY" cancelled)/$(state "$j")/$(audited "$j")" "200 0 null/ready/1" \
	"after a done job: ready (as --after), audited"
enq "\"after\": [$d], \"submit_id\": \"b-1\""
is "$CODE $(field "$BODY" first_id) $(field "$BODY" repeated)/$(count jobs "id > $j")" "200 $j true/0" \
	"resent: the first answer, nothing more"
enq "\"after\": [$x]"
j=$(field "$BODY" first_id)
is "$CODE $(field "$BODY" cancelled)/$(state "$j")/$(audited "$j")" "200 dependency $x (dead)/cancelled/1" \
	"after a dead job: cancelled at once, the answer naming it, audited"
cli=$(jq_ enqueue --after "$x" echo '{}' 2>&1 >/dev/null)
like "$cli" "cancelled at once by dependency $x \\(dead\\)" "as jobq enqueue --after says"
enq "\"after\": [$x], \"after_policy\": \"any\""
j=$(field "$BODY" first_id)
is "$CODE $(field "$BODY" cancelled)/$(state "$j")" "200 null/ready" "after_policy any after a dead job: ready"
jq_ work --stop-when-empty 2>>"$T/work.log"
p=$(jq_ enqueue --delay 1h echo '{}')
enq "\"after\": [$p, $d], \"count\": 2, \"submit_id\": \"b-2\""
j=$(field "$BODY" first_id)
ids=$(sql "SELECT GROUP_CONCAT(job_id ORDER BY job_id) FROM jobq_deps WHERE after_id = $p")
is "$CODE $(field "$BODY" count) $(field "$BODY" waiting_on)/$(count jobs "id >= $j AND type = 'echo'")" "200 2 1/2" \
	"count 2 after a delayed job: two jobs, each waiting for it"
for i in ${ids//,/ }; do
	is "$(state "$i")/$(audited "$i")" "waiting/1" "job $i waits, and has its audit row"
done
sql "UPDATE jobs SET available_at = UTC_TIMESTAMP(6) WHERE id = $p"
jq_ work --stop-when-empty 2>>"$T/work.log"
is "$(state "$p") $(for i in ${ids//,/ }; do state "$i"; done | xargs)" "done done done" \
	"a worker runs the job they wait for, then both of them"

# ---- (c) a group ----
post /api/enqueue "$T/jar" \
	'{"type": "echo", "payload": "{}", "count": 2, "group": "g1", "on_complete": "cb", "submit_id": "g-1"}'
g=$(field "$BODY" first_id)
gid=$(sql "SELECT id FROM jobq_groups WHERE name = 'g1'")
is "$CODE $(field "$BODY" count)/$(count jobs "group_id = $gid")/$(count jobq_audit "action = 'enqueue' AND job_id IN (SELECT id FROM jobs WHERE group_id = $gid)")" \
	"200 2/2/2" "group g1: two jobs join it, each audited"
is "$(printf '%s' "$BODY" | jget '",".join(map(str, d["ids"]))')" "$(sql "SELECT GROUP_CONCAT(id ORDER BY id) FROM jobs WHERE group_id = $gid")" \
	"group g1: the answer's ids are the two jobs"
post /api/enqueue "$T/jar" \
	'{"type": "echo", "payload": "{}", "count": 2, "group": "g1", "on_complete": "cb", "submit_id": "g-1"}'
is "$CODE $(field "$BODY" repeated)/$(count jobs "group_id = $gid")/$(printf '%s' "$BODY" | jget '",".join(map(str, d["ids"]))')" \
	"200 true/2/$(sql "SELECT GROUP_CONCAT(id ORDER BY id) FROM jobs WHERE group_id = $gid")" \
	"resent: nothing more joins, and the answer names the same two jobs"
jq_ work --stop-when-empty 2>>"$T/work.log"
jq_ work --stop-when-empty 2>>"$T/work.log"
is "$(sql "SELECT CONCAT(total, ' ', done, ' ', ended_at IS NOT NULL) FROM jobq_groups WHERE id = $gid")" "2 2 1" \
	"a worker ends both: the group is complete"
is "$(sql "SELECT COUNT(*) FROM job_runs WHERE type = 'cb'")" 1 "its on_complete callback ran once"
before=$(nothing)
post /api/enqueue "$T/jar" '{"type": "echo", "payload": "{}", "group": "g1", "on_complete": "cb"}'
like "$CODE $(field "$BODY" error)" '^409 "group": group .g1. has completed' "a completed group: 409, naming it"
bad '"group": "g2", "on_complete": "nosuch"' '"on_complete": unknown callback type' "a callback type with no handler"
bad '"on_success": "cb"' '"on_complete" and "on_success" go with "group"' "a callback without a group"
bad '"group": "123"' '"group": group name: .123. is all digits' "a group named by digits"
is "$(nothing)" "$before" "none of these wrote anything"

# ---- (d) the answer to the COMMIT lost ----
lost() { # lost 'JSON fields' what: the COMMIT's answer lost once
	rm -f "$PX/dropped" "$PX/held"
	echo "INSERT INTO jobq_submits " >"$PX/hold"
	echo "^COMMIT$" >"$PX/after"
	(enq "$1" && printf '%s %s' "$CODE" "$BODY" >"$T/answer") &
	for ((i = 0; i < 100; i++)); do [ -e "$PX/held" ] && break; sleep 0.1; done
	rm -f "$PX/hold"
	wait $!
	like "$(cat "$PX/dropped" 2>/dev/null)" "COMMIT$" "$2: the answer to its COMMIT was lost"
}
lost "\"after\": [$d], \"submit_id\": \"l-1\"" "after"
j=$(sql "SELECT first_id FROM jobq_submits WHERE submit_id = 'l-1'")
like "$(cat "$T/answer")" "^200 .*\"first_id\":$j,.*\"repeated\":true" "after: the dashboard resent it and found job $j"
is "$(count jobs "id >= $j")/$(audited "$j")" "1/1" "after: one job, with its audit row"
lost '"unique_key": "order:1", "submit_id": "l-2"' "a taken key"
like "$(cat "$T/answer")" "^200 .*\"refused\":true,\"holder_id\":$a,.*\"repeated\":true" \
	"a taken key: the resent submit answers the refusal"

finish
