#!/bin/bash
# Bulk actions on a filter (issue 21 item 3, POST /api/bulk/count and
# POST /api/bulk): retry or forget every dead job of a queue and type,
# release every stale job, delete every waiting (or only the ready or
# delayed) job.  The count fixes the set (the ids up to the highest one
# counted); the first chunk goes ahead only when the set still holds the
# number confirmed; chunks of 100 each end on their own; a job the
# server refuses is skipped and the rest go on; each job acted on has its
# own audit row; a viewer and bad bodies are refused and change nothing.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
. "$top_srcdir/tests/operator/common.sh"
. "$top_srcdir/tests/serve_lib.sh"
setup serve_bulk

write_conf <<EOC
[queue default]
[queue mail]
[queue spare]

[handler echo]
exec = $HANDLERS/echo.sh

[handler send_email]
exec = /bin/true
queue = mail

[user ada]
password_hash = $PWHASH
role = admin

[user vic]
password_hash = $PWHASH
role = viewer
EOC

# 250 dead jobs in mail, 5 in default; 4 delayed, 2 ready, 3 stale and
# one under a live lease in default.
sql "INSERT INTO failed_jobs (id, queue, type, payload, attempts, exception)
       SELECT 1000 + seq, 'mail', 'send_email', '{}', 3, 'smtp 550' FROM seq_1_to_250;
     INSERT INTO failed_jobs (id, queue, type, payload, attempts, exception)
       SELECT 2000 + seq, 'default', 'echo', '{}', 1, 'bad' FROM seq_1_to_5;
     INSERT INTO jobs (id, queue, type, payload, available_at)
       SELECT 3000 + seq, 'default', 'echo', '{}', UTC_TIMESTAMP(6) + INTERVAL 1 HOUR FROM seq_1_to_4;
     INSERT INTO jobs (id, queue, type, payload) SELECT 3100 + seq, 'default', 'echo', '{}' FROM seq_1_to_2;
     INSERT INTO jobs (id, queue, type, payload, lease_token, reserved_by, reserved_at, lease_expires_at)
       SELECT 3200 + seq, 'default', 'echo', '{}', REPEAT('s', 32), 'gone:1:x', UTC_TIMESTAMP(6) - INTERVAL 2 HOUR,
              UTC_TIMESTAMP(6) - INTERVAL 1 HOUR FROM seq_1_to_3;
     INSERT INTO jobs (id, queue, type, payload, lease_token, reserved_by, reserved_at, lease_expires_at)
       VALUES (3300, 'default', 'echo', '{}', REPEAT('l', 32), 'live:1:x', UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) + INTERVAL 1 HOUR)"

serve_start
login vic "$T/vjar"
vcsrf=$CSRF
login ada "$T/jar"

post /api/bulk/count "$T/vjar" '{"action": "retry"}' "$vcsrf"
is "$CODE" 403 "a viewer cannot count for a bulk action"
post /api/bulk "$T/vjar" '{"action": "forget", "count": 255, "upto": 2005}' "$vcsrf"
is "$CODE" 403 "nor run one"
post /api/bulk/count "$T/jar" '{"action": "explode"}'
is "$CODE $(printf '%s' "$BODY" | jget 'd["error"]')" "400 action: retry, forget, release, delete or cancel" "an unknown action: 400, named"
post /api/bulk/count "$T/jar" '{"action": "retry", "queue": "nope"}'
is "$CODE" 422 "an unknown queue: 422"
post /api/bulk/count "$T/jar" '{"action": "retry", "state": "ready"}'
is "$CODE" 400 "a state on anything but delete and cancel: 400"
post /api/bulk/count "$T/jar" '{"action": "delete", "state": "stale"}'
is "$CODE" 400 "delete takes ready or delayed only"
post /api/bulk "$T/jar" '{"action": "retry", "queue": "mail", "count": "all"}'
is "$CODE" 400 "a bulk action without the confirmed count: 400"
is "$(sql "SELECT COUNT(*) FROM failed_jobs")" 255 "none of that changed anything"

post /api/bulk/count "$T/jar" '{"action": "retry", "queue": "mail"}'
is "$CODE $BODY" '200 {"action":"retry","count":250,"upto":1250,"unknown_type":0}' "count: 250 dead jobs in mail, the highest 1250"
# Job 1250 is queued again under its own id (an operator re-enqueued it
# by hand): its retry is refused and the others go on.  Job 1251 dies
# after the count: it is not in the set confirmed.
sql "INSERT INTO jobs (id, queue, type, payload) VALUES (1250, 'mail', 'send_email', '{}');
     INSERT INTO failed_jobs (id, queue, type, payload, attempts, exception) VALUES (1251, 'mail', 'send_email', '{}', 1, 'x')"
post /api/bulk "$T/jar" '{"action": "retry", "queue": "mail", "count": 249, "upto": 1250}'
is "$CODE $BODY" '409 {"error":"the number of jobs changed; confirm again","action":"retry","count":251,"upto":1251,"unknown_type":0}' \
	"a count that is not the set's: 409 with the count now, nothing done"
is "$(sql "SELECT COUNT(*) FROM failed_jobs WHERE queue = 'mail'")" 251 "and nothing moved"
post /api/bulk "$T/jar" '{"action": "retry", "queue": "mail", "count": 250, "upto": 1250}'
is "$CODE $(printf '%s' "$BODY" | jget '(d["done"], d["skipped"], d["next_after"])')" "200 [100, 0, 1100]" \
	"the first chunk: 100 jobs retried, and where the next starts"
is "$(sql "SELECT COUNT(*) FROM jobs WHERE id BETWEEN 1001 AND 1100")" 100 "those 100 are in the queue"
chunks=1 done=100 skipped=0 after=1100
while [ "$after" != None ]; do
	post /api/bulk "$T/jar" "{\"action\": \"retry\", \"queue\": \"mail\", \"count\": 250, \"upto\": 1250, \"after\": $after}"
	[ "$CODE" = 200 ] || { echo "# HTTP $CODE $BODY"; break; }
	read -r d s after < <(printf '%s' "$BODY" | jget '"%d %d %s" % (d["done"], d["skipped"], d["next_after"])')
	done=$((done + d)) skipped=$((skipped + s)) chunks=$((chunks + 1))
done
is "$chunks $done $skipped" "3 249 1" "in 3 chunks: 249 retried, 1 refused (its id is queued again)"
is "$(sql "SELECT GROUP_CONCAT(id) FROM failed_jobs WHERE queue = 'mail'")" "1250,1251" \
	"the refused job and the one that died after the count stay dead"
is "$(sql "SELECT COUNT(DISTINCT job_id), MIN(username), MIN(detail) FROM jobq_audit WHERE action = 'retry'")" \
	"$(printf '249\tada\tbulk: queue=mail type=*')" "one audit row per job retried, with who and the filter"
grep -q "bulk retry of job 1250" "$T/serve.log"
ok $? "the refused job is logged with the server's reason"

# forget: the 5 dead jobs of type echo
post /api/bulk/count "$T/jar" '{"action": "forget", "type": "echo"}'
read -r n upto < <(printf '%s' "$BODY" | jget '"%d %d" % (d["count"], d["upto"])')
is "$n $upto" "5 2005" "forget: 5 dead echo jobs"
# one of them leaves the dead letter between the count and the action:
# fewer than confirmed is a 409 too (only a cancel of every state goes
# ahead on fewer: tests/cancel_race.sh), nothing forgotten
sql "DELETE FROM failed_jobs WHERE id = (SELECT MIN(id) FROM failed_jobs WHERE type = 'echo')"
post /api/bulk "$T/jar" "{\"action\": \"forget\", \"type\": \"echo\", \"count\": 5, \"upto\": 2005}"
is "$CODE $(printf '%s' "$BODY" | jget '(d["count"], d["upto"])') $(sql "SELECT COUNT(*) FROM failed_jobs WHERE type = 'echo'")" \
	"409 [4, 2005] 4" "one gone before the first chunk: 409 with the count now, nothing forgotten"
post /api/bulk "$T/jar" "{\"action\": \"forget\", \"type\": \"echo\", \"count\": 4, \"upto\": 2005}"
is "$(printf '%s' "$BODY" | jget '(d["done"], d["next_after"])')" "[4, null]" "forgotten in one chunk, the last"
is "$(sql "SELECT COUNT(*) FROM failed_jobs WHERE type = 'echo'") $(sql "SELECT COUNT(*) FROM jobq_audit WHERE action = 'forget'")" \
	"0 4" "gone, each audited"

# release: the 3 stale jobs, never the live lease
post /api/bulk/count "$T/jar" '{"action": "release", "queue": "default"}'
is "$(printf '%s' "$BODY" | jget '(d["count"], d["upto"])')" "[3, 3203]" "release: 3 stale jobs (the live lease is not counted)"
post /api/bulk "$T/jar" '{"action": "release", "queue": "default", "count": 3, "upto": 3203}'
is "$(printf '%s' "$BODY" | jget 'd["done"]')" 3 "released"
is "$(sql "SELECT COUNT(*) FROM jobs WHERE id BETWEEN 3201 AND 3203 AND lease_token IS NULL") $(sql "SELECT reserved_by FROM jobs WHERE id = 3300")" \
	"3 live:1:x" "the stale jobs are ready; the running job keeps its lease"

# delete: only the delayed ones, then every waiting one
post /api/bulk/count "$T/jar" '{"action": "delete", "queue": "default", "state": "delayed"}'
is "$(printf '%s' "$BODY" | jget '(d["count"], d["upto"])')" "[4, 3004]" "delete delayed: 4"
post /api/bulk "$T/jar" '{"action": "delete", "queue": "default", "state": "delayed", "count": 4, "upto": 3004}'
is "$(sql "SELECT COUNT(*) FROM jobs WHERE id BETWEEN 3001 AND 3004") $(sql "SELECT COUNT(*) FROM jobs WHERE id IN (3101, 3102)")" \
	"0 2" "the delayed jobs are gone, the ready ones stay"
post /api/bulk/count "$T/jar" '{"action": "delete", "queue": "default"}'
is "$(printf '%s' "$BODY" | jget 'd["count"]')" 5 "delete waiting: the 2 ready and the 3 released (not the running one)"
post /api/bulk "$T/jar" '{"action": "delete", "queue": "default", "count": 5, "upto": 3203}'
is "$(sql "SELECT GROUP_CONCAT(id) FROM jobs WHERE queue = 'default'")" 3300 "only the running job is left"
is "$(sql "SELECT COUNT(*) FROM jobq_audit WHERE action = 'delete' AND detail LIKE 'bulk: queue=default type=*%'")" 9 \
	"each deletion audited (4 delayed, then 5)"
post /api/bulk/count "$T/jar" '{"action": "delete", "queue": "default"}'
is "$BODY" '{"action":"delete","count":0,"upto":0}' "nothing left to delete: count 0"
post /api/bulk "$T/jar" '{"action": "delete", "queue": "default", "count": 0, "upto": 0}'
is "$CODE $(printf '%s' "$BODY" | jget '(d["done"], d["next_after"])')" "200 [0, null]" "and a bulk action on it does nothing"

# A dead job whose type has no [handler] is not retried, as jobq failed
# retry refuses it: a retry would only dead-letter it again.  Bulk
# retry leaves it and says how many; a retry by id refuses it by name;
# an edited retry is 422; retry all matching leaves it, counted.
sql "DELETE FROM failed_jobs; DELETE FROM jobs WHERE id = 1250;
     INSERT INTO failed_jobs (id, queue, type, payload, attempts, exception) VALUES
       (4001, 'mail', 'gone', '{}', 1, 'unknown job type'), (4002, 'mail', 'gone', '{}', 1, 'unknown job type'),
       (4003, 'mail', 'send_email', '{}', 1, 'x')"
post /api/bulk/count "$T/jar" '{"action": "retry", "queue": "mail"}'
is "$CODE $BODY" '200 {"action":"retry","count":1,"upto":4003,"unknown_type":2}' \
	"bulk retry counts the job it can retry, and the 2 of a type no [handler] takes apart"
post /api/bulk "$T/jar" '{"action": "retry", "queue": "mail", "count": 1, "upto": 4003}'
is "$(printf '%s' "$BODY" | jget '(d["done"], d["skipped"])') $(sql "SELECT GROUP_CONCAT(id) FROM failed_jobs")" \
	"[1, 0] 4001,4002" "it retries that one; the other two stay dead"
post /api/failed/retry "$T/jar" '{"ids": [4001]}'
is "$CODE $(printf '%s' "$BODY" | jget '(d["retried"], d["refused"][0]["error"])')" \
	"200 [0, \"job 4001 is of type 'gone', which has no [handler] section in the configuration: a retry would only dead-letter it again\"]" \
	"a retry by id refuses it, naming the job and its type"
sql "INSERT INTO failed_jobs (id, queue, type, payload, attempts, exception) VALUES (4009, 'gonequeue', 'send_email', '{}', 1, 'x')"
post /api/failed/retry "$T/jar" '{"ids": [4009]}'
is "$CODE $(printf '%s' "$BODY" | jget '(d["retried"], d["refused"][0]["error"])')" \
	"200 [0, \"job 4009 is in queue 'gonequeue', which has no [queue] section in the configuration: a retry would leave it where no worker serves it\"]" \
	"a job of a queue no [queue] section names: refused too, naming its queue"
sql "DELETE FROM failed_jobs WHERE id = 4009"
post /api/failed/retry-edited "$T/jar" '{"id": 4002, "payload": "{\"a\": 1}"}'
is "$CODE" 422 "an edited retry of such a job: 422"
post /api/failed/retry "$T/jar" '{"all": true, "queue": "mail"}'
is "$CODE $(printf '%s' "$BODY" | jget '(d["retried"], d["unknown_type"])')" "200 [0, 2]" \
	"retry all matching leaves them, counted"
is "$(sql "SELECT GROUP_CONCAT(id) FROM failed_jobs") $(sql "SELECT COUNT(*) FROM jobs WHERE id IN (4001, 4002)")" \
	"4001,4002 0" "and they are still in the dead letter, none queued"
is "$(sql "SELECT detail FROM jobq_audit WHERE action = 'retry-all' ORDER BY id DESC LIMIT 1")" \
	"0 jobs, 0 refused, 2 of a type or queue not configured left: all matching queue=mail type=*" \
	"its audit row counts them"


# A cancel of every state, the action meant for a queue being worked,
# goes ahead on fewer than confirmed (jobs ended meanwhile, said as
# skipped); one of a state (or more than confirmed) is a 409.
sql "INSERT INTO jobs (id, queue, type, payload) SELECT 5000 + seq, 'spare', 'send_email', '{}' FROM seq_1_to_4"
post /api/bulk/count "$T/jar" '{"action": "cancel", "queue": "spare"}'
is "$(printf '%s' "$BODY" | jget '(d["count"], d["upto"])')" "[4, 5004]" "cancel: 4 jobs in spare"
sql "DELETE FROM jobs WHERE id = 5001"
post /api/bulk "$T/jar" '{"action": "cancel", "queue": "spare", "state": "ready", "count": 4, "upto": 5004}'
is "$CODE $(sql "SELECT COUNT(*) FROM jobs WHERE queue = 'spare'")" "409 3" "a cancel of ready jobs, one gone: 409, nothing cancelled"
post /api/bulk "$T/jar" '{"action": "cancel", "queue": "spare", "count": 2, "upto": 5004}'
is "$CODE $(sql "SELECT COUNT(*) FROM jobs WHERE queue = 'spare'")" "409 3" "a cancel of more than confirmed: 409, nothing cancelled"
post /api/bulk "$T/jar" '{"action": "cancel", "queue": "spare", "count": 4, "upto": 5004}'
is "$CODE $(printf '%s' "$BODY" | jget '(d["done"], d["skipped"], d["next_after"])') $(sql "SELECT COUNT(*) FROM jobs WHERE queue = 'spare'")" \
	"200 [3, 1, null] 0" "a cancel of every state, one gone: the 3 left cancelled, the one gone said as skipped"

# A cancel ends the jobs that wait for those it cancels, down the graph,
# and its answer counts them apart ("down"): here the delayed job's two
# waiters, which the filter of delayed jobs does not name.
a=$(jq_ enqueue -q spare --delay 1h echo '{}')
b=$(jq_ enqueue -q spare --after "$a" echo '{}')
jq_ enqueue -q spare --after "$b" echo '{}' >/dev/null
post /api/bulk/count "$T/jar" '{"action": "cancel", "queue": "spare", "state": "delayed"}'
upto=$(printf '%s' "$BODY" | jget 'd["upto"]')
post /api/bulk "$T/jar" "{\"action\": \"cancel\", \"queue\": \"spare\", \"state\": \"delayed\", \"count\": 1, \"upto\": $upto}"
is "$CODE $(printf '%s' "$BODY" | jget '(d["done"], d["down"])') $(sql "SELECT COUNT(*) FROM jobs WHERE queue = 'spare'")" \
	"200 [1, 2] 0" "a cancel of a delayed job: it and, counted apart, its two waiters down the chain"

finish
