#!/bin/bash
# A resent submit id is answered with every id the first request made,
# in order, however they were spread: POST /api/enqueue keeps them all in
# the submit's record (jobq_submits.job_ids, schema 29), for the plain
# enqueue and for one with a group or jobs to wait for.  A record from
# before schema 29 keeps only the first id and the count: its resend
# answers "ids": null for more than one job, as before.  jobq init adds
# the column to such a database, and running that step twice changes
# nothing.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
. "$top_srcdir/tests/operator/common.sh"
. "$top_srcdir/tests/serve_lib.sh"
setup serve_submit_ids

write_conf <<EOC
[queue default]
[handler echo]
exec = $HANDLERS/echo.sh

[user alice]
password_hash = $PWHASH
role = admin
EOC
serve_start
login alice "$T/jar"
field() { printf '%s' "$1" | jget "d[\"$2\"]"; }
ids_of() { printf '%s' "$1" | jget '",".join(map(str, d["ids"])) if d["ids"] is not None else "null"'; }
# enq SUBMIT_ID MORE: an enqueue of the payload {"s": SUBMIT_ID} with
# MORE fields; sets CODE and BODY.
enq() {
	post /api/enqueue "$T/jar" "{\"type\": \"echo\", \"payload\": \"{\\\"s\\\": \\\"$1\\\"}\", \"submit_id\": \"$1\"${2:-}}"
}
made() { sql "SELECT GROUP_CONCAT(id ORDER BY id) FROM jobs WHERE payload = '{\"s\": \"$1\"}'"; }

# ---- (a) ids with others between them, resent ----
# Another insert takes an id between two jobs of one enqueue (a trigger
# on each audit row, as another client's enqueue can).
sql "CREATE TABLE test_gap (on_ INT);
     CREATE TRIGGER test_gap AFTER INSERT ON jobq_audit FOR EACH ROW
       INSERT INTO jobs (queue, type, payload, available_at)
         SELECT 'default', 'other', '{}', UTC_TIMESTAMP() + INTERVAL 1 DAY FROM test_gap WHERE NEW.action = 'enqueue';
     INSERT INTO test_gap VALUES (1)"
enq plain-1 ', "count": 3'
first=$(ids_of "$BODY")
is "$CODE/$first" "200/$(made plain-1)" "3 jobs: the first answer lists them"
is "$(sql "SELECT MAX(id) - MIN(id) FROM jobs WHERE payload = '{\"s\": \"plain-1\"}'")" 4 "(the fillers took the ids between them)"
enq plain-1 ', "count": 3'
is "$CODE/$(field "$BODY" repeated)/$(ids_of "$BODY")/$(field "$BODY" first_id)" "200/true/$first/${first%%,*}" \
	"resent: the same ids, in order, not null (first_id the first)"
is "$(sql "SELECT job_ids FROM jobq_submits WHERE submit_id = 'plain-1'")" "$first" "the submit's record keeps them all"
enq one-1
one=$(ids_of "$BODY")
enq one-1
is "$(field "$BODY" repeated)/$(ids_of "$BODY")" "true/$one" "a submit of one job resent: its id"
sql "DROP TRIGGER test_gap; DROP TABLE test_gap; DELETE FROM jobs WHERE type = 'other'"

# ---- (b) a group, and jobs that wait ----
enq group-1 ', "count": 3, "group": "g1"'
first=$(ids_of "$BODY")
is "$CODE/$first" "200/$(made group-1)" "a group of 3: the first answer lists them"
enq group-1 ', "count": 3, "group": "g1"'
is "$CODE/$(field "$BODY" repeated)/$(ids_of "$BODY")" "200/true/$first" "resent: the same ids"
dep=${one}
enq after-1 ", \"count\": 2, \"after\": [$dep]"
first=$(ids_of "$BODY")
is "$CODE/$first" "200/$(made after-1)" "2 jobs that wait: the first answer lists them"
enq after-1 ", \"count\": 2, \"after\": [$dep]"
is "$CODE/$(field "$BODY" repeated)/$(ids_of "$BODY")" "200/true/$first" "resent: the same ids"
is "$(count jobs)" 9 "no resend enqueued anything"

# ---- (c) a database from before schema 29 ----
sql "ALTER TABLE jobq_submits DROP COLUMN job_ids; DELETE FROM jobq_schema WHERE version = 29;
     INSERT INTO jobq_submits (username, submit_id, first_id, job_count) VALUES
       ('alice', 'old-3', 100, 3), ('alice', 'old-1', 7, 1)"
out=$(jq_ init 2>&1)
ok $? "jobq init upgrades a schema without job_ids"
is "$(sql "SELECT COUNT(*) FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = 'jobq_submits' AND column_name = 'job_ids'")/$(sql "SELECT COUNT(*) FROM jobq_schema WHERE version = 29")" \
	"1/1" "the column is there, version 29 recorded"
sql "DELETE FROM jobq_schema WHERE version = 29"
out=$(jq_ init 2>&1)
ok $? "and its step run again changes nothing (no error: $out)"
enq old-3 ', "count": 3'
is "$CODE/$(field "$BODY" repeated)/$(field "$BODY" first_id)/$(field "$BODY" count)/$(ids_of "$BODY")" "200/true/100/3/null" \
	"an older record of 3 jobs resent: its first id and count, ids null (it kept no more)"
enq old-1
is "$CODE/$(field "$BODY" repeated)/$(ids_of "$BODY")" "200/true/7" "an older record of one job resent: its id"
enq new-2 ', "count": 2'
first=$(ids_of "$BODY")
enq new-2 ', "count": 2'
is "$(field "$BODY" repeated)/$(ids_of "$BODY")" "true/$first" "a submit after the upgrade: resent, the same ids"
serve_stop
finish
