#!/bin/bash
# A job that left the queue stays visible in the dashboard as its runs
# keep it (issue 21, item 1): GET /api/jobs/ID of a done job answers its
# state, queue, type, attempts, created time, payload, runs (with the
# handler's result) and audit, the same as `jobq show` prints; a job
# forgotten from the dead letter answers "forgotten" without a payload
# (only a done job's is kept); once its runs are pruned, 404.  Both
# handler modes: the run that makes a job done keeps its payload in both.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
. "$top_srcdir/tests/operator/common.sh"
. "$top_srcdir/tests/serve_lib.sh"
setup serve_done

TH=$top_srcdir/tests/handlers
write_conf <<EOC
[worker]
poll_interval = 20ms

[queue default]

[handler exec]
exec = $TH/done_py.py
env.PYTHONPATH = $HANDLERS
env.PYTHONDONTWRITEBYTECODE = 1

[handler persist]
exec = $TH/done_py.py
mode = persistent
env.PYTHONPATH = $HANDLERS
env.PYTHONDONTWRITEBYTECODE = 1

[user ada]
password_hash = $PWHASH
role = admin
EOC
serve_start
login ada "$T/jar"

for t in exec persist; do
	id=$(jq_ enqueue $t '{"n": 7, "who": "'$t'"}')
	die=$(jq_ enqueue $t '{"die": true}')
	created=$(sql "SELECT DATE_FORMAT(created_at, '%Y-%m-%d %H:%i:%s.%f') FROM jobs WHERE id = $id")
	jq_ work --stop-when-empty 2>"$T/work.$t.log"
	is "$(count jobs)/$(count failed_jobs "id = $die")" "0/1" "[$t] one job done, one dead-lettered"

	hit GET "/api/jobs/$id" "$T/jar"
	is "$CODE" 200 "[$t] GET /api/jobs/ID of a done job: 200"
	is "$(printf '%s' "$BODY" | jget '[d["job"][k] for k in ("id", "state", "queue", "type", "attempts")]')" \
		"[$id, \"done\", \"default\", \"$t\", 1]" "[$t] its id, state done, queue, type and attempts"
	is "$(printf '%s' "$BODY" | jget 'json.loads(d["job"]["payload"])')" "{\"n\": 7, \"who\": \"$t\"}" \
		"[$t] its payload"
	is "$(printf '%s' "$BODY" | jget 'd["job"]["created_at"]')" "$created" "[$t] when it was enqueued"
	is "$(printf '%s' "$BODY" | jget '[(r["outcome"], json.loads(r["result"])) for r in d["runs"]]')" \
		'[["done", {"n": 7}]]' "[$t] its one run, done, with the handler's result"
	is "$(printf '%s' "$BODY" | jget '"priority" in d["job"] or "next_backoff_ms" in d["job"]')" false \
		"[$t] nothing a finished job no longer has (priority, next backoff)"
	run show --json "$id"
	is "$(printf '%s' "$OUT" | jget '(d["state"], d["payload"]["n"])')" '["done", 7]' "[$t] jobq show says the same"

	# Forgotten from the dead letter: known by its runs, no payload kept.
	post /api/failed/forget "$T/jar" "{\"ids\": [$die]}"
	is "$CODE" 200 "[$t] the dead job is forgotten"
	hit GET "/api/jobs/$die" "$T/jar"
	is "$CODE:$(printf '%s' "$BODY" | jget '(d["job"]["state"], d["job"]["payload"], len(d["runs"]), d["audit"][0]["action"])')" \
		'200:["forgotten", null, 1, "forget"]' "[$t] a forgotten job: its runs and the forget, no payload"
done

# Pruned: nothing is left to show.
run prune --older-than 0 --yes
is "$RC" 0 "jobq prune --older-than 0"
hit GET "/api/jobs/$id" "$T/jar"
is "$CODE:$(printf '%s' "$BODY" | jget 'd["error"]')" \
	"404:no such job (not queued, not dead-lettered, no runs kept)" "once its runs are pruned: 404, saying why"
hit GET /api/jobs/99999999 "$T/jar"
is "$CODE" 404 "a job that never was: 404"
finish
