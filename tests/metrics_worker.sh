#!/bin/bash
# A worker's own /metrics (metrics_listen in [worker], --metrics-listen):
# counters and histograms that follow a known set of jobs exactly, read
# with the official Python parser and passed by `promtool check
# metrics`; labels from the whitelist only; the dashboard's
# metrics_token guards it; nothing but GET /metrics is served there; a
# taken address stops the worker from starting, saying which.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
PY=/usr/bin/python3
$PY -c 'import prometheus_client' 2>/dev/null ||
	skip_all "no Prometheus parser (apt-get install python3-prometheus-client)"
setup metrics_worker
TH=$top_srcdir/tests/handlers

write_conf <<EOC
[worker]
poll_interval = 20ms
metrics_listen = 127.0.0.1:0

[queue default]
[queue mail]

[handler ok]
exec = $TH/exitwith.sh
max_attempts = 2
backoff = 1h, 1h

[handler slow]
exec = $TH/sleeper.sh 5
queue = mail
timeout = 300ms
kill_grace = 100ms
max_attempts = 1

[handler p]
exec = $TH/persist_raw.py
mode = persistent
max_jobs = 2
EOC
jq_ check >/dev/null
is "$?" 0 "metrics_listen in [worker] is a key jq check accepts"

# metrics URL from worker log N
murl() {
	local i
	for i in $(seq 1 100); do
		M=$(grep -o '/metrics served on http://[^ ]*' "$T/worker.$1.log" | tail -1)
		[ -n "$M" ] && break
		sleep 0.1
	done
	M=http://${M#/metrics served on http://}
}
scrape() { curl -s -o "$T/m.txt" -w '%{http_code}' "$@" "$M/metrics"; }
sample() { $PY "$top_srcdir/tests/prom_sample.py" "$T/m.txt" "$@" 2>&1; }
# scrape_until VALUE SAMPLE-ARGS...: scrapes until the sample reads VALUE (5 s at most)
scrape_until() {
	local want=$1 i
	shift
	for i in $(seq 1 50); do
		scrape >/dev/null
		[ "$(sample "$@")" = "$want" ] && return 0
		sleep 0.1
	done
}

# 3 done, 1 dead at once (exit 65), 1 killed by SIGSEGV (a crash: retry
# in an hour), 1 over its timeout (dead: one attempt), 1 of a type with
# no handler (dead unrun), 1 follow-up-free.
sql "INSERT INTO jobs (queue, type, payload) VALUES ('default', 'ok', '{}'), ('default', 'ok', '{}'),
	('default', 'ok', '{}'), ('default', 'ok', '{\"exit\": 65}'), ('default', 'ok', '{\"signal\": \"SEGV\"}'),
	('mail', 'slow', '{}'), ('mail', 'nope', '{}')"
start_worker -j 2
murl 0
like "$M" '^http://127\.0\.0\.1:[0-9]+$' "the worker logs its /metrics address ($M)"
wait_for_sql 20 "SELECT (SELECT COUNT(*) FROM job_runs), (SELECT COUNT(*) FROM failed_jobs)" "6	3" ||
	diag "runs/failed: $(sql "SELECT (SELECT COUNT(*) FROM job_runs), (SELECT COUNT(*) FROM failed_jobs)")"
for i in $(seq 1 50); do
	scrape >/dev/null
	[ "$(sample --sum jobq_outcome_writes_total)" = 7 ] && break
	sleep 0.1
done
is "$(scrape)" 200 "GET /metrics: 200 (no metrics_token set)"
like "$(curl -s -D - -o /dev/null "$M/metrics" | tr -d '\r' | grep -i '^content-type:')" \
	'text/plain; version=0.0.4' "in the text format's content type"
r() { sample jobq_runs_total "queue=$1" "type=$2" "outcome=$3"; }
is "$(r default ok done)/$(r default ok dead)/$(r default ok retry)" "3/1/1" \
	"jobq_runs_total{default,ok}: 3 done, 1 dead, 1 retry"
is "$(r mail slow dead)/$(r mail slow done)" "1/0" "jobq_runs_total{mail,slow}: the timed-out run, dead"
is "$(sample --sum jobq_runs_total type=nope)/$(sample --sum jobq_runs_total type=_unknown)" "<none>/<none>" \
	"a type without a handler has no run series (it never ran), and never its own label"
is "$(r default slow done)" "<none>" "a pair no job had and no handler names is not shown"
is "$(sample jobq_outcome_writes_total outcome=dead)/$(sample jobq_outcome_writes_total outcome=done)/$(sample jobq_outcome_writes_total outcome=retry)" \
	"3/3/1" "jobq_outcome_writes_total: 3 dead (the unrun one too), 3 done, 1 retry"
is "$(sample jobq_handler_starts_total type=ok)/$(sample jobq_handler_starts_total type=slow)" "5/1" "handler starts by type"
is "$(sample jobq_handler_crashes_total type=ok)/$(sample jobq_handler_timeouts_total type=slow)/$(sample jobq_handler_timeouts_total type=ok)" \
	"1/1/0" "a crash (SIGSEGV) and a timeout, each by its type"
is "$(sample jobq_run_duration_seconds_count queue=default type=ok)" 5 "run-time histogram: 5 runs of ok"
slow_le=$(sample jobq_run_duration_seconds_bucket queue=mail type=slow le=0.25)/$(sample jobq_run_duration_seconds_bucket queue=mail type=slow le=2.5)
is "$slow_le" "0/1" "the timed-out run (about 0.3-0.4 s) sits between the 0.25 s and 2.5 s bounds"
is "$(sample jobq_run_duration_seconds_bucket queue=mail type=slow le=+Inf)" 1 "and in +Inf"
is "$(sample jobq_wait_seconds_count queue=default type=ok)" 5 "wait histogram: 5 starts of ok"
claimed=$(sample jobq_claimed_jobs_total)
is "$claimed" 7 "jobq_claimed_jobs_total: the 7 jobs"
ok "$([ "$(sample jobq_claims_total result=jobs)" -ge 1 ] && [ "$(sample jobq_claim_duration_seconds_count)" -ge 1 ]; echo $?)" \
	"claims counted, with their latency"
ok "$([ "$(sample jobq_outcome_write_duration_seconds_count)" -ge 1 ]; echo $?)" "outcome writes timed"
is "$(sample --sum jobq_db_errors_total)" 0 "no database errors"
ok "$([ "$(sample process_resident_memory_bytes)" -gt 1000000 ] && [ "$(sample process_open_fds)" -gt 3 ]; echo $?)" \
	"process metrics: resident memory and open descriptors"
start=$(sample process_start_time_seconds)
ok "$($PY -c "import time,sys; sys.exit(0 if abs(time.time() - $start) < 120 else 1)"; echo $?)" \
	"process_start_time_seconds is about now ($start)"
if command -v promtool >/dev/null; then
	out=$(promtool check metrics <"$T/m.txt" 2>&1)
	is "$?/$out" "0/" "promtool check metrics: clean"
else
	ok 0 "# SKIP no promtool (apt-get install prometheus)"
fi
is "$(scrape -X POST)" 405 "POST /metrics: 405"
is "$(curl -s -o /dev/null -w '%{http_code}' "$M/")" 404 "anything but /metrics: 404"
kill -TERM "$WORKER_PID"
wait_exit 20 "$WORKER_PID"
is "$?" 0 "the worker stops cleanly with its /metrics thread"

# A persistent handler recycled after max_jobs = 2: two restarts in 4 jobs.
start_worker
murl 1
sql "DELETE FROM job_runs; INSERT INTO jobs (queue, type, payload) VALUES ('default', 'p', '{}'), ('default', 'p', '{}'),
	('default', 'p', '{}'), ('default', 'p', '{}')"
wait_for_sql 20 "SELECT COUNT(*) FROM job_runs WHERE outcome = 'done'" 4
scrape_until 2 jobq_persistent_restarts_total type=p reason=recycled
is "$(sample jobq_persistent_restarts_total type=p reason=recycled)/$(sample jobq_persistent_restarts_total type=p reason=died)" "2/0" \
	"jobq_persistent_restarts_total{p,recycled}: 2 (max_jobs = 2, 4 jobs)"
kill -TERM "$WORKER_PID"
wait_exit 20 "$WORKER_PID"

# A chain of 4 (each job waits for the one before) on one worker: the
# first job is claimed, each other one handed off by the outcome that
# released it (queue.h: struct handoff), so no claim of its own.
start_worker
murl 2
sql "DELETE FROM job_runs"
printf '%s\n' '{"type": "ok", "ref": "a", "payload": {}}' '{"type": "ok", "ref": "b", "after": ["a"], "payload": {}}' \
	'{"type": "ok", "ref": "c", "after": ["b"], "payload": {}}' '{"type": "ok", "after": ["c"], "payload": {}}' |
	jq_ enqueue --batch >/dev/null
wait_for_sql 20 "SELECT COUNT(*) FROM job_runs WHERE outcome = 'done'" 4
ok $? "the chain of 4 ran"
scrape_until 3 jobq_handed_off_jobs_total
is "$(sample jobq_claimed_jobs_total)/$(sample jobq_handed_off_jobs_total)" "1/3" \
	"a chain: its first job claimed, the 3 others handed off by the outcomes that released them"
kill -TERM "$WORKER_PID"
wait_exit 20 "$WORKER_PID"

# Jobs ended unstarted: two a dead dependency cancelled (claimed to be
# ended), one whose expires_at passed while it was delayed (the sweep
# ends it).  Outcomes written, each counted; no handler run among them.
sql "DELETE FROM job_runs"
d=$(jq_ enqueue ok '{"exit": 65}')
jq_ enqueue --after "$d" ok '{}' >/dev/null
jq_ enqueue --after "$d" ok '{}' >/dev/null
delayed_expiring 1 ok '{}' >/dev/null
start_worker
murl 3
wait_for_sql 30 "SELECT COUNT(*) FROM job_runs" 4
ok $? "the dead job, its two waiters and the expired job ended"
scrape_until 1 jobq_outcome_writes_total outcome=expired
is "$(sample jobq_outcome_writes_total outcome=dead)/$(sample jobq_outcome_writes_total outcome=cancelled)/$(sample jobq_outcome_writes_total outcome=expired)" \
	"1/2/1" "jobq_outcome_writes_total: the dead job, the two cancelled and the one the sweep expired"
is "$(r default ok dead)/$(r default ok cancelled | sed 's/<none>/0/')/$(r default ok expired | sed 's/<none>/0/')" "1/0/0" \
	"jobq_runs_total: only the run of a handler (the dead job's), none for the jobs ended unstarted"
is "$(sample jobq_run_duration_seconds_count queue=default type=ok)/$(sample jobq_handler_starts_total type=ok)" "1/1" \
	"one run timed, one handler started"
is "$(jq_ workers --json | $PY -c 'import json, sys; t = json.load(sys.stdin)["types_last_24h"]["ok"]; print(t["runs"], t["failures"])')" "1 1" \
	"jobq workers: one run of ok, one failure (the jobs ended unstarted are no runs)"
kill -TERM "$WORKER_PID"
wait_exit 20 "$WORKER_PID"

# metrics_token of [serve]: the same secret guards the worker's /metrics.
printf '\n[serve]\nmetrics_token = s3cret-s3cret-s3cret\n' >>"$CONF"
start_worker
murl 4
is "$(scrape)" 401 "metrics_token set: no token, 401"
is "$(scrape -H 'Authorization: Bearer s3cret-s3cret-s3creX')" 401 "a wrong token: 401"
is "$(scrape -H 'Authorization: Bearer s3cret-s3cret-s3cret')" 200 "the right token: 200"
kill -TERM "$WORKER_PID"
wait_exit 20 "$WORKER_PID"

# --metrics-listen off: none; a taken address: no start, and it says so.
start_worker --metrics-listen off --max-time 1
wait_exit 20 "$WORKER_PID"
is "$(grep -c '/metrics served' "$T/worker.5.log")" 0 "--metrics-listen off: no /metrics"
$PY -c 'import socket,time; s=socket.socket(); s.bind(("127.0.0.1",0)); s.listen(1); print(s.getsockname()[1], flush=True); time.sleep(60)' >"$T/port" &
holder=$!
BG_PIDS+=("$holder")
for i in $(seq 1 100); do [ -s "$T/port" ] && break; sleep 0.1; done
timeout 20 "$JOBQ" -c "$CONF" work --metrics-listen "127.0.0.1:$(cat "$T/port")" >/dev/null 2>"$T/err"
is "$?" 1 "--metrics-listen on a taken port: exit 1"
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null
like "$(cat "$T/err")" "metrics_listen on 127.0.0.1:[0-9]+: Address already in use" "and says which address"
jq_ work --metrics-listen nowhere >/dev/null 2>"$T/err"
is "$?" 64 "--metrics-listen without a port: a usage error"
sed -i 's/^metrics_listen = .*/metrics_listen = localhost/' "$CONF"
jq_ check >/dev/null 2>"$T/err"
is "$?" 78 "metrics_listen without a port: a configuration error"
like "$(cat "$T/err")" "metrics_listen: expected ADDR:PORT" "saying what it expects"
finish
