#!/bin/bash
# The audit trail of bulk actions: an enqueue of many jobs and "retry
# all matching" write a row for each job they touched, which the job's
# page (/api/jobs/ID) shows; the count of the whole action is a column
# of its own; the filters of "retry all matching" must be configured
# queues and types, so they can neither pad the detail (a name plus 250
# blanks still equals the name in SQL) nor forge a count in it.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
. "$top_srcdir/tests/operator/common.sh"
. "$top_srcdir/tests/serve_lib.sh"
setup serve_audit

write_conf <<EOC
[queue default]
[queue mail]

[handler echo]
exec = $HANDLERS/echo.sh

[handler send_email]
exec = $HANDLERS/echo.sh
queue = mail

[user admin]
password_hash = $PWHASH
role = admin
EOC
serve_start
login admin "$T/jar"

# audit_of ID: the job page's audit entries as "action count detail".
audit_of() {
	hit GET "/api/jobs/$1" "$T/jar"
	printf '%s' "$BODY" | jget '"|".join("%s %s %s" % (a["action"], a["count"], a["detail"]) for a in d["audit"])'
}

# ---- enqueue of many ----
post /api/enqueue "$T/jar" '{"type": "echo", "payload": "{\"n\": 1}", "count": 3}'
is "$CODE" 200 "an enqueue of 3 jobs"
first=$(printf '%s' "$BODY" | jget 'd["first_id"]')
ids=$(sql "SELECT GROUP_CONCAT(id ORDER BY id SEPARATOR ' ') FROM jobs")
is "$(echo "$ids" | wc -w)" 3 "3 jobs in the queue"
is "$first" "${ids%% *}" "first_id is the lowest of them"
for id in $ids; do
	is "$(audit_of "$id")" "enqueue 3 type=echo queue=default" "job $id's page shows the enqueue, one of 3 jobs"
done
is "$(sql "SELECT COUNT(*) FROM jobq_audit WHERE action = 'enqueue' AND job_count = 3")" 3 "one audit row per job, each with the count in its own column"
post /api/enqueue "$T/jar" '{"type": "send_email", "payload": "{}"}'
one=$(printf '%s' "$BODY" | jget 'd["first_id"]')
is "$(audit_of "$one")" "enqueue None type=send_email queue=mail" "an enqueue of one job: no count"
is "$(printf '%s' "$BODY" | jget 'd["ids"]')" "[$one]" "an enqueue of one job: ids holds its id"

# ---- ids that do not follow one another ----
# Another insert takes an id between two jobs of one enqueue (here a
# trigger on each audit row, as another client's enqueue can): the
# answer's ids are the jobs made, not first_id counted on.
sql "CREATE TABLE test_gap (on_ INT);
     CREATE TRIGGER test_gap AFTER INSERT ON jobq_audit FOR EACH ROW
       INSERT INTO jobs (queue, type, payload, available_at)
         SELECT 'mail', 'other', '{}', UTC_TIMESTAMP() + INTERVAL 1 DAY FROM test_gap WHERE NEW.action = 'enqueue';
     INSERT INTO test_gap VALUES (1)"
post /api/enqueue "$T/jar" '{"type": "echo", "payload": "{\"gap\": 1}", "count": 3}'
made=$(sql "SELECT GROUP_CONCAT(id ORDER BY id SEPARATOR ',') FROM jobs WHERE payload = '{\"gap\": 1}'")
is "$(sql "SELECT MAX(id) - MIN(id) FROM jobs WHERE payload = '{\"gap\": 1}'")" 4 "(the fillers took the ids between them)"
is "$CODE/$(printf '%s' "$BODY" | jget '",".join(map(str, d["ids"]))')/$(printf '%s' "$BODY" | jget 'd["first_id"]')" \
	"200/$made/${made%%,*}" "3 jobs with other ids between them: ids lists exactly the 3 made (first_id the first)"
sql "DROP TRIGGER test_gap; DROP TABLE test_gap; DELETE FROM jobs WHERE type = 'other'"

# ---- retry all matching ----
sql "INSERT INTO failed_jobs (id, queue, type, payload, attempts, exception) VALUES
     (9001, 'mail', 'send_email', '{}', 3, 'x'), (9002, 'mail', 'send_email', '{}', 3, 'x'),
     (9003, 'default', 'echo', '{}', 3, 'x')"
nbefore=$(count jobq_audit)
pad=$(printf '%250s' '')
post /api/failed/retry "$T/jar" "{\"all\": true, \"queue\": \"mail$pad\"}"
is "$CODE" 422 "retry all with a queue padded by 250 blanks is refused"
post /api/failed/retry "$T/jar" '{"all": true, "queue": "mail", "type": "send_email: 999 jobs, 0 refused"}'
is "$CODE" 422 "retry all with a type that is no configured type is refused"
post /api/failed/retry "$T/jar" '{"all": true, "queue": "nosuch"}'
is "$CODE" 422 "retry all with an unknown queue is refused"
post /api/failed/retry "$T/jar" '{"all": true, "queue": 7}'
is "$CODE" 400 "a filter that is not a string: 400"
is "$(count failed_jobs):$(count jobq_audit)" "3:$nbefore" "nothing retried, nothing audited"

post /api/failed/retry "$T/jar" '{"all": true, "queue": "mail", "type": ""}'
is "$CODE:$(printf '%s' "$BODY" | jget 'd["retried"]')" "200:2" "retry all of queue mail: 2 jobs"
for id in 9001 9002; do
	is "$(audit_of "$id")" "retry-all None all matching queue=mail type=*" "job $id's page shows the retry"
done
is "$(sql "SELECT CONCAT_WS('|', job_count, detail) FROM jobq_audit WHERE action = 'retry-all' AND job_id IS NULL")" \
	"2|2 jobs, 0 refused: all matching queue=mail type=*" "one row for the whole run: the count in its column and first in the detail"
is "$(count failed_jobs "id = 9003")" 1 "the job of the other queue stays dead"

finish
