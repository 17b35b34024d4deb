#!/bin/bash
# The history search (GET /api/search, issue 21 item 2): every job the
# database knows, in whichever of its three places it is (queued in
# jobs, dead in failed_jobs, done as its runs), by state, queue, type,
# unique key, payload text and enqueue time, paged by id with each job
# once; bad filters are refused with 400 and the field.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
. "$top_srcdir/tests/operator/common.sh"
. "$top_srcdir/tests/serve_lib.sh"
setup serve_search

write_conf <<EOC
[worker]
poll_interval = 20ms

[queue default]
[queue mail]

[handler echo]
exec = $HANDLERS/echo.sh

[handler send_email]
exec = /bin/sh -c 'cat >/dev/null; exit 0'
queue = mail

[user vic]
password_hash = $PWHASH
role = viewer
EOC

# Done: four jobs a real worker ran (their runs keep them); dead: two;
# queued: one of each state, one with a unique key.
for i in 1 2 3 4; do
	jq_ enqueue send_email '{"to": "Done-'$i'@example.com"}' >/dev/null
done
jq_ work --stop-when-empty 2>"$T/work.log"
sql "INSERT INTO failed_jobs (id, queue, type, payload, attempts, exception, unique_key, created_at)
       VALUES (9001, 'mail', 'send_email', '{\"to\": \"dead@example.com\"}', 5, 'smtp 550', 'invoice-7',
               UTC_TIMESTAMP(6) - INTERVAL 2 DAY),
              (9002, 'default', 'echo', '{\"n\": \"dead two\"}', 1, 'bad', NULL, UTC_TIMESTAMP(6) - INTERVAL 1 HOUR)"
ready=$(jq_ enqueue echo '{"n": "ready one"}')
delayed=$(jq_ enqueue --delay 1h send_email '{"to": "later@example.com"}')
keyed=$(jq_ enqueue --unique-key invoice-8 echo '{"n": "keyed"}')
stale=$(jq_ enqueue echo '{"n": "stale one"}')
sql "UPDATE jobs SET lease_token = REPEAT('c', 32), reserved_by = 'gone:1:x', reserved_at = UTC_TIMESTAMP(6) - INTERVAL 2 HOUR,
       lease_expires_at = UTC_TIMESTAMP(6) - INTERVAL 1 HOUR WHERE id = $stale"
done_ids=$(sql "SELECT GROUP_CONCAT(job_id ORDER BY job_id SEPARATOR ' ') FROM job_runs WHERE outcome = 'done'")
is "$(echo "$done_ids" | wc -w)" 4 "four jobs done by a worker: only their runs keep them"

serve_start
login vic "$T/jar"
# ids QUERY: the ids of every page of /api/search?QUERY (limit 3), with
# their states, as "id:state ..."; the number of pages in $T/pages.
ids() {
	local after=0 all="" pages=0
	while :; do
		hit GET "/api/search?$1&limit=3&after=$after" "$T/jar"
		[ "$CODE" = 200 ] || { echo "HTTP $CODE $BODY"; return; }
		all+=$(printf '%s' "$BODY" | jget '" ".join("%d:%s" % (j["id"], j["state"]) for j in d["jobs"])')" "
		pages=$((pages + 1))
		after=$(printf '%s' "$BODY" | jget 'd["next_after"]')
		[ "$after" = null ] && break
	done
	echo "$pages" >"$T/pages"
	echo "$all" | xargs
}
d=($done_ids)
all="${d[0]}:done ${d[1]}:done ${d[2]}:done ${d[3]}:done $ready:ready $delayed:delayed $keyed:ready $stale:stale 9001:dead 9002:dead"
is "$(ids '')" "$all" "no filter: every job once, in id order, with its state, from the three places"
is "$(cat "$T/pages")" 4 "in pages of 3"
is "$(ids 'state=done')" "${d[0]}:done ${d[1]}:done ${d[2]}:done ${d[3]}:done" "state=done: the done jobs"
is "$(ids 'state=dead')" "9001:dead 9002:dead" "state=dead: the dead letter"
is "$(ids 'state=queued')" "$ready:ready $delayed:delayed $keyed:ready $stale:stale" "state=queued: every queued job"
is "$(ids 'state=stale')" "$stale:stale" "state=stale"
is "$(ids 'queue=mail')" "${d[0]}:done ${d[1]}:done ${d[2]}:done ${d[3]}:done $delayed:delayed 9001:dead" "queue=mail, in every place"
is "$(ids 'type=echo&state=dead')" "9002:dead" "type and state together"
is "$(ids 'unique_key=invoice-7')" "9001:dead" "a unique key finds the dead job that had it"
is "$(ids 'unique_key=invoice-8')" "$keyed:ready" "and the queued one"
is "$(ids 'q=done-3%40EXAMPLE')" "${d[2]}:done" "payload text (any case) finds a done job by what its run kept"
is "$(ids 'q=%22n%22')" "$ready:ready $keyed:ready $stale:stale 9002:dead" "and jobs in the other places"
is "$(ids 'q=100%25')" "" "a % in the text is a %, not a wildcard"
is "$(ids "since=$(date -u -d '-3 hour' +%Y-%m-%dT%H:%M:%SZ)&state=dead")" "9002:dead" "since: enqueued within the last 3 hours"
is "$(ids "until=$(date -u -d '-1 day' +%Y-%m-%dT%H:%M:%SZ)")" "9001:dead" "until: enqueued before yesterday"
# A payload text reads one window a request, up to where a place has had
# 15,000 rows, and says how far it read: 20,000 runs of other jobs put a
# dead match beyond the first window, reached on the next page.
sql "INSERT INTO job_runs (job_id, queue, type, attempt, worker, started_at, duration_ms, outcome, exit_status)
       SELECT 100000 + seq, 'default', 'echo', 1, 'w', UTC_TIMESTAMP(6), 1, 'retry', 'exit 1' FROM seq_1_to_20000"
sql "INSERT INTO failed_jobs (id, queue, type, payload, attempts, exception)
       VALUES (200000, 'default', 'echo', '{\"n\": \"far away\"}', 1, 'bad')"
hit GET "/api/search?q=far%20away" "$T/jar"
is "$(printf '%s' "$BODY" | jget '(len(d["jobs"]), d["searched_to"] == d["next_after"], 110000 < d["searched_to"] < 115100)')" \
	"[0, true, true]" "a text search reads the first 15,000 runs, says how far that is, and goes on from there"
is "$(ids 'q=far%20away')" "200000:dead" "walking on, it finds the job at id 200,000"
is "$(cat "$T/pages")" 2 "on the second page"
hit GET "/api/search?q=stale%20one" "$T/jar"
is "$(printf '%s' "$BODY" | jget '(len(d["jobs"]), "searched_to" in d)')" "[1, true]" \
	"a page with a match but not full says how far it read too"
hit GET "/api/search?q=stale%20one&state=dead" "$T/jar"
is "$(printf '%s' "$BODY" | jget '(len(d["jobs"]), "searched_to" in d, d["next_after"])')" "[0, false, null]" \
	"a place the state leaves out does not bound the window"
sql "DELETE FROM job_runs WHERE job_id > 100000"
sql "DELETE FROM failed_jobs WHERE id = 200000"

hit GET "/api/search?state=done&limit=1" "$T/jar"
is "$(printf '%s' "$BODY" | jget '(d["jobs"][0]["queue"], d["jobs"][0]["type"], d["jobs"][0]["attempts"], d["jobs"][0]["created_at"] is not None, d["jobs"][0]["ended_at"] is not None)')" \
	'["mail", "send_email", 1, true, true]' "a done job: queue, type, attempts, when enqueued and when done"

for t in 'state=gone|state: expected' 'since=yesterday|since and until' 'limit=501|limit 1-500' \
	'q=%ff|must be UTF-8' "type=$(printf 'x%.0s' $(seq 65))|must be UTF-8"; do
	hit GET "/api/search?${t%%|*}" "$T/jar"
	is "$CODE" 400 "${t%%|*}: 400"
	like "$(printf '%s' "$BODY" | jget 'd["error"]')" "${t#*|}" "... naming it"
done
hit GET /api/search
is "$CODE" 401 "without a session: 401"
serve_stop
is "$(grep -c -e 'Sanitizer' -e 'runtime error:' "$T/serve.log")" 0 "the server log holds no sanitizer report"
finish
