#!/bin/bash
# GET /metrics: Prometheus text format that the official Python parser
# (Debian's python3-prometheus-client) reads, with the values the
# database holds; metrics_token guards it when set; metrics_listen serves
# it on an address of its own, and only there.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
PY=/usr/bin/python3
$PY -c 'import prometheus_client' 2>/dev/null ||
	skip_all "no Prometheus parser (apt-get install python3-prometheus-client)"
. "$top_srcdir/tests/operator/common.sh"
. "$top_srcdir/tests/serve_lib.sh"
setup serve_metrics

write_conf <<EOC
[worker]
poll_interval = 20ms

[queue default]
[queue "odd"]
[queue mail]

[handler echo]
exec = $HANDLERS/echo.sh

[schedule hourly]
cron = 0 * * * *
type = echo

[schedule off]
cron = 0 * * * *
type = echo
enabled = no

[user admin]
password_hash = $PWHASH
role = admin
EOC
# A queue name cannot hold a quote: the whitelist refuses it.
jq_ check >/dev/null 2>&1
is "$?" 78 'a queue named "odd" with quotes is refused'
sed -i '/^\[queue "odd"\]$/d' "$CONF"

sql "INSERT INTO jobs (queue, type, payload) VALUES ('default', 'echo', '{}'), ('default', 'echo', '{}'), ('mail', 'echo', '{}');
     UPDATE jobs SET available_at = UTC_TIMESTAMP(6) - INTERVAL 90 SECOND WHERE queue = 'mail';
     INSERT INTO jobs (queue, type, payload, available_at) VALUES ('mail', 'echo', '{}', UTC_TIMESTAMP(6) + INTERVAL 1 HOUR);
     INSERT INTO failed_jobs (id, queue, type, payload, exception) VALUES (77, 'mail', 'echo', '{}', 'x');
     INSERT INTO job_runs (job_id, queue, type, attempt, worker, started_at, duration_ms, outcome, exit_status)
       VALUES (1, 'default', 'echo', 1, 'w', UTC_TIMESTAMP(6), 1, 'done', 'exit 0'),
              (2, 'default', 'echo', 1, 'w', UTC_TIMESTAMP(6), 1, 'done', 'exit 0'),
              (3, 'default', 'echo', 1, 'w', UTC_TIMESTAMP(6), 1, 'retry', 'exit 1'),
              (4, 'default', 'echo', 1, 'w', UTC_TIMESTAMP(6) - INTERVAL 2 HOUR, 1, 'done', 'exit 0'),
              (5, 'default', 'echo', 0, 'cli:root', UTC_TIMESTAMP(6), 0, 'cancelled', 'not started'),
              (6, 'default', 'echo', 0, 'w', UTC_TIMESTAMP(6), 0, 'expired', 'not started'),
              (7, 'default', 'echo', 1, 'w', UTC_TIMESTAMP(6), 40, 'cancelled', 'killed by signal 15');
     INSERT INTO jobq_workers (id, host, pid, queues, concurrency, heartbeat_ms, started_at, last_seen_at, jobs_done, jobs_retried, jobs_dead)
       VALUES ('h1:1', 'h1', 1, 'default', 1, 60000, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6), 10, 2, 1),
              ('h2:2', 'h2', 2, 'default', 1, 1000, UTC_TIMESTAMP(6) - INTERVAL 1 DAY, UTC_TIMESTAMP(6) - INTERVAL 1 HOUR, 5, 0, 0)"
serve_start

hit GET /metrics
is "$CODE" 200 "GET /metrics without a session: 200 (no metrics_token set)"
like "$(header content-type)" '^text/plain; version=0.0.4' "in the text format's content type"
is "$(header x-content-type-options)" nosniff "with the security headers"

# sample NAME LABELS...: the value the parser reads for one sample.
cat >"$T/parse.py" <<'EOP'
import sys
from prometheus_client.parser import text_string_to_metric_families
fams = {f.name: f for f in text_string_to_metric_families(open(sys.argv[1]).read())}
if sys.argv[2] == "--families":
    print(" ".join(sorted("%s:%s" % (n, f.type) for n, f in fams.items())))
    sys.exit(0)
want = dict(kv.split("=", 1) for kv in sys.argv[3:])
name = sys.argv[2]
for f in fams.values():
    for s in f.samples:
        if s.name == name and s.labels == want:
            print(int(s.value))
            sys.exit(0)
print("<none>")
EOP
printf '%s\n' "$BODY" >"$T/metrics.txt"
sample() { $PY "$T/parse.py" "$T/metrics.txt" "$@" 2>&1; }
is "$(sample --families)" "jobq_alerts:gauge jobq_failed_jobs:gauge jobq_jobs:gauge jobq_oldest_ready_seconds:gauge jobq_queue_paused:gauge jobq_queue_workers:gauge jobq_runs_last_hour:gauge jobq_schedule_last_fire_timestamp_seconds:gauge jobq_schedule_missed_fires:gauge jobq_schedule_next_fire_timestamp_seconds:gauge jobq_worker_jobs:counter jobq_workers:gauge process_cpu_seconds:counter process_max_fds:gauge process_open_fds:gauge process_resident_memory_bytes:gauge process_start_time_seconds:gauge process_virtual_memory_bytes:gauge" \
	"the parser reads every family with its type"
is "$(sample jobq_jobs queue=default state=ready)" 2 "jobq_jobs{default,ready} = 2"
is "$(sample jobq_jobs queue=mail state=ready)/$(sample jobq_jobs queue=mail state=delayed)" "1/1" "mail: 1 ready, 1 delayed"
is "$(sample jobq_jobs queue=mail state=reserved)" 0 "zero states are listed too"
is "$(sample jobq_failed_jobs queue=mail)/$(sample jobq_failed_jobs queue=default)" "1/0" "jobq_failed_jobs per queue"
s=$(sample jobq_oldest_ready_seconds queue=mail)
ok "$([ "$s" -ge 90 ] && [ "$s" -lt 200 ]; echo $?)" "jobq_oldest_ready_seconds{mail} is the 90 s wait (got $s)"
is "$(sample jobq_workers)" 1 "jobq_workers counts only the live worker"
is "$(sample jobq_queue_workers queue=default)/$(sample jobq_queue_workers queue=mail)" "1/0" \
	"jobq_queue_workers: the live worker serves default, nobody mail"
is "$(sample jobq_schedule_last_fire_timestamp_seconds schedule=hourly)" 0 "a schedule that never fired: last fire 0"
nf=$(sample jobq_schedule_next_fire_timestamp_seconds schedule=hourly)
ok "$($PY -c "import time,sys; d=$nf-time.time(); sys.exit(0 if 0 < d <= 3600 and $nf % 3600 == 0 else 1)"; echo $?)" \
	"its next fire: the coming full hour ($nf)"
is "$(sample jobq_schedule_next_fire_timestamp_seconds schedule=off)" "<none>" "a disabled schedule owes no fire"
if command -v promtool >/dev/null; then
	out=$(promtool check metrics <"$T/metrics.txt" 2>&1)
	is "$?/$out" "0/" "promtool check metrics: clean"
else
	ok 0 "# SKIP no promtool (apt-get install prometheus)"
fi
# A fire two hours ago and none since (nobody ticks the scheduler): the
# fire owed is in the past; a fire recorded missed counts for a day.
sql "INSERT INTO jobq_schedule_runs (name, fire_at, status) VALUES
	('hourly', DATE_FORMAT(UTC_TIMESTAMP() - INTERVAL 2 HOUR, '%Y-%m-%d %H:00:00'), 'enqueued'),
	('off', UTC_TIMESTAMP() - INTERVAL 3 HOUR, 'missed')"
hit GET /metrics
printf '%s\n' "$BODY" >"$T/metrics.txt"
late=$(( $(date +%s) - $(sample jobq_schedule_next_fire_timestamp_seconds schedule=hourly) ))
ok "$([ "$late" -gt 3600 ] && [ "$late" -le 7200 ]; echo $?)" "the fire owed (the hour after the last one) is in the past (${late}s late)"
is "$(sample jobq_schedule_missed_fires schedule=off)/$(sample jobq_schedule_missed_fires schedule=hourly)" "1/0" \
	"jobq_schedule_missed_fires: the fire recorded missed"
sql "DELETE FROM jobq_schedule_runs"
is "$(sample jobq_worker_jobs_total worker=h1:1 outcome=done)/$(sample jobq_worker_jobs_total worker=h1:1 outcome=dead)" "10/1" "per-worker counters by outcome"
is "$(sample jobq_worker_jobs_total worker=h2:2 outcome=done)" "<none>" \
	"no series for the worker gone an hour ago (the registry keeps it until jobq prune)"
is "$(sample jobq_runs_last_hour type=echo outcome=done)/$(sample jobq_runs_last_hour type=echo outcome=retry)" "2/1" "runs of the last hour by type and outcome (the older run left out)"
is "$(sample jobq_runs_last_hour type=echo outcome=cancelled)/$(sample jobq_runs_last_hour type=echo outcome=expired)" "1/<none>" \
	"a job cancelled or expired before its handler started is no run; a handler stopped by a cancel is one"

# The watchdogs' open incidents: one series each; /api/alerts lists them
# with those cleared in the last day.
sql "INSERT INTO jobq_alerts (kind, name, reason) VALUES ('wait', 'mail', 'behind');
	INSERT INTO jobq_alerts (kind, name, open_key, reason, cleared_at) VALUES ('stale', 'mail', NULL, 'gone', UTC_TIMESTAMP(6))"
hit GET /metrics
printf '%s\n' "$BODY" >"$T/metrics.txt"
is "$(sample jobq_alerts kind=wait name=mail)/$(sample jobq_alerts kind=stale name=mail)" "1/<none>" \
	"jobq_alerts{wait,mail} 1 for the open incident, nothing for the cleared one"
login admin "$T/jar"
hit GET /api/alerts "$T/jar"
is "$(printf '%s' "$BODY" | jget '",".join(a["kind"] + ":" + str(a["open"]) for a in d["alerts"]) + " " + str(d["open"])')" \
	"wait:True,stale:False 1" "/api/alerts: the open incident first, then the cleared one"

# With a token: 401 without it, 200 with it.
serve_stop
printf '\n[serve]\nmetrics_token = s3cret-s3cret-s3cret\n' >>"$CONF"
serve_start
hit GET /metrics
is "$CODE" 401 "metrics_token set: no token, 401"
hit GET /metrics "" "" -H 'Authorization: Bearer s3cret-s3cret-s3creX'
is "$CODE" 401 "a wrong token: 401"
hit GET /metrics "" "" -H 'Authorization: Bearer s3cret-s3cret-s3cret'
is "$CODE" 200 "the right token: 200"
serve_stop

# ---- metrics_listen: /metrics on its own address, nothing else there ----
sed -i '/^metrics_token = /d' "$CONF"
printf 'metrics_listen = 127.0.0.1:0\n' >>"$CONF"
serve_start
MURL=$(grep -o '/metrics served on http://[^ ]*' "$T/serve.log" | sed 's,^/metrics served on ,,')
like "$MURL" '^http://127\.0\.0\.1:[0-9]+$' "the log names the metrics address ($MURL)"
ok "$([ "$MURL" != "$URL" ]; echo $?)" "apart from the dashboard's ($URL)"
mhit() { local u=$URL; URL=$MURL; hit "$@"; URL=$u; }
mhit GET /metrics
is "$CODE" 200 "GET /metrics on metrics_listen: 200"
like "$(header content-type)" '^text/plain; version=0.0.4' "in the text format"
is "$(header x-content-type-options)" nosniff "with the security headers"
printf '%s\n' "$BODY" >"$T/metrics.txt"
is "$(sample jobq_jobs queue=default state=ready)" 2 "the same values: jobq_jobs{default,ready} = 2"
mhit HEAD /metrics "" "" -I
is "$CODE" 200 "HEAD /metrics there: 200"
hit GET /metrics
is "$CODE" 404 "GET /metrics on the dashboard's listen: 404"
for path in / /login /api/me /static/app.js; do
	mhit GET "$path"
	is "$CODE" 404 "GET $path on metrics_listen: 404"
done
mhit POST /api/login "" '{"user": "admin", "password": "'"$PW"'"}'
is "$CODE" 404 "POST /api/login on metrics_listen: 404 (no logins there)"
mhit POST /metrics "" '{}'
is "$CODE/$(header allow)" "405/GET, HEAD" "POST /metrics there: 405 with Allow"
hit GET /api/me
is "$CODE" 200 "the dashboard still answers on listen"
serve_stop

# With metrics_token too, the metrics address asks for it.
printf 'metrics_token = s3cret-s3cret-s3cret\n' >>"$CONF"
serve_start
MURL=$(grep -o '/metrics served on http://[^ ]*' "$T/serve.log" | sed 's,^/metrics served on ,,')
mhit GET /metrics
is "$CODE" 401 "metrics_listen and metrics_token: no token, 401"
mhit GET /metrics "" "" -H 'Authorization: Bearer s3cret-s3cret-s3cret'
is "$CODE" 200 "the right token: 200"
serve_stop

# An address already taken: jobq serve refuses to start, saying which.
sed -i '/^metrics_listen = /d' "$CONF"
python3 -c 'import socket,time,sys; s=socket.socket(); s.bind(("127.0.0.1",0)); s.listen(1); print(s.getsockname()[1], flush=True); time.sleep(60)' >"$T/port" &
holder=$!
BG_PIDS+=("$holder")
for i in $(seq 1 100); do [ -s "$T/port" ] && break; sleep 0.1; done
printf 'metrics_listen = 127.0.0.1:%s\n' "$(cat "$T/port")" >>"$CONF"
timeout 20 "$JOBQ" -c "$CONF" serve --listen 127.0.0.1:0 >/dev/null 2>"$T/err"
is "$?" 1 "metrics_listen on a taken port: exit 1, as for listen"
like "$(cat "$T/err")" "metrics_listen on 127.0.0.1:[0-9]+: Address already in use" "and says which address"
kill "$holder" 2>/dev/null
finish
