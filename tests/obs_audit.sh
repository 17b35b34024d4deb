#!/bin/bash
# What the dashboard's /metrics says once workers come and go and queues
# are paused, against the worker's own /metrics and `jobq status`, with
# real workers, a real SIGKILL and the lease running out:
# - a worker killed mid-job: another takes the job back at its lease's
#   expiry, runs it once; its counters and the status totals add up;
# - jobq_worker_jobs_total lists the live workers only (a gone worker's
#   row stays in the registry until `jobq prune`: a series per worker
#   that ever ran would grow without end);
# - jobq_queue_paused says what `jobq status` marks paused;
# - the features together on two workers: each job counted once;
# - a run whose lease was lost is no retry on the dashboard's charts.
. "$top_srcdir/tests/lib.sh"
PY=/usr/bin/python3
$PY -c 'import prometheus_client' 2>/dev/null ||
	skip_all "no Prometheus parser (apt-get install python3-prometheus-client)"
one_build normal "waits out a lease; the sanitizer build adds nothing here"
. "$top_srcdir/tests/operator/common.sh"
. "$top_srcdir/tests/serve_lib.sh"
setup obs_audit
TH=$top_srcdir/tests/handlers

write_conf <<EOC
[worker]
poll_interval = 20ms
reserve_ttl = 2s
metrics_listen = 127.0.0.1:0

[queue default]
[queue mail]

[handler slow]
exec = $TH/sleeper.sh 1 $T/started

[user admin]
password_hash = $PWHASH
role = admin
EOC

# The worker's own /metrics URL, from the log of background process N.
wurl() {
	local i
	for i in $(seq 1 100); do
		W=$(grep -o '/metrics served on http://[^ ]*' "$T/worker.$1.log" | tail -1)
		[ -n "$W" ] && break
		sleep 0.1
	done
	W=http://${W#/metrics served on http://}
}
wsample() { curl -s "$W/metrics" >"$T/w.txt"; $PY "$top_srcdir/tests/prom_sample.py" "$T/w.txt" "$@" 2>&1; }
ssample() {
	curl -s "$URL/metrics" >"$T/s.txt"
	$PY "$top_srcdir/tests/prom_sample.py" "$T/s.txt" "$@" 2>&1
}
wid() { sql "SELECT id FROM jobq_workers WHERE pid = $1"; }

# Worker A runs a job to the end, then is killed in the middle of a
# second one: that job is stale once its lease runs out.
start_worker
A=$WORKER_PID
wurl 0
jq_ enqueue slow '{}' >/dev/null
wait_for_sql 20 "SELECT COUNT(*) FROM job_runs WHERE outcome = 'done'" 1
rm -f "$T/started"
id=$(jq_ enqueue slow '{}')
for i in $(seq 1 100); do [ -e "$T/started" ] && break; sleep 0.05; done
ok "$([ -e "$T/started" ]; echo $?)" "worker A started job $id"
aid=$(wid "$A")
kill -KILL "$A"
wait "$A" 2>/dev/null
BG_PIDS=()
wait_for_sql 20 "SELECT COUNT(*) FROM jobs WHERE id = $id AND lease_expires_at < UTC_TIMESTAMP(6)" 1
# A's heartbeat is a few intervals late before A counts as gone
for i in $(seq 1 100); do [ "$(jq_ status --json | jget 'd["workers"]')" = 0 ] && break; sleep 0.1; done
is "$(jq_ status --json | jget 'str(d["queues"]["default"]["stale"]) + "/" + str(d["queues"]["default"]["reserved"]) + "/" + str(d["workers"])')" \
	"1/0/0" "A killed, its lease run out: 1 stale, none reserved, no live worker"

# Worker B takes it back and runs it once; then nothing is left.  (Its
# log has A's name: A's goes first, or wurl could read A's address.)
rm -f "$T"/worker.*.log
start_worker
B=$WORKER_PID
wurl 0
wait_for_sql 30 "SELECT COUNT(*) FROM job_runs WHERE job_id = $id AND outcome = 'done'" 1
wait_for_sql 10 "SELECT COUNT(*) FROM jobs" 0
is "$(wsample jobq_claimed_jobs_total)/$(wsample jobq_runs_total queue=default type=slow outcome=done)/$(wsample jobq_outcome_writes_total outcome=done)" \
	"1/1/1" "worker B: the stale job claimed once, run once, written once"
is "$(jq_ status --json | jget '"/".join(str(d["queues"]["default"][k]) for k in ("ready", "delayed", "reserved", "stale", "failed"))')" \
	"0/0/0/0/0" "jobq status: nothing left in default"
is "$(sql "SELECT COUNT(*) FROM job_runs WHERE outcome = 'done'")" 2 "two runs done in all (A's first, B's)"

serve_start
bid=$(wid "$B")
is "$(ssample jobq_workers)" 1 "jobq_workers: B alone is alive"
is "$(ssample jobq_worker_jobs_total worker="$bid" outcome=done)" 1 "jobq_worker_jobs_total: B's one job done"
is "$(ssample jobq_worker_jobs_total worker="$aid" outcome=done)" "<none>" \
	"jobq_worker_jobs_total: nothing for A, gone (its registry row is kept until jobq prune)"
is "$(ssample --sum jobq_worker_jobs_total)" 1 "the series of live workers only: 1 job in all"
is "$(ssample jobq_jobs queue=default state=stale)/$(ssample jobq_jobs queue=default state=reserved)" "0/0" \
	"jobq_jobs: no stale or reserved job left"

# A paused queue: jobq status marks it, /metrics says it, and a resume
# takes it back.
jq_ pause mail >/dev/null
sql "INSERT INTO jobs (queue, type, payload) VALUES ('mail', 'slow', '{}')"
is "$(jq_ status --json | jget 'str(d["queues"]["mail"]["paused"]) + "/" + str(d["queues"]["mail"]["ready"])')" \
	"True/1" "jobq status: mail paused with 1 ready job"
is "$(ssample jobq_queue_paused queue=mail)/$(ssample jobq_queue_paused queue=default)" "1/0" \
	"jobq_queue_paused: 1 for mail, 0 for default"
is "$(ssample jobq_jobs queue=mail state=ready)" 1 "jobq_jobs{mail,ready}: the held job is ready"
jq_ resume mail >/dev/null
is "$(ssample jobq_queue_paused queue=mail)" 0 "resumed: jobq_queue_paused{mail} 0"
stop_workers

# The features together, on two workers (update mode, reserve-ahead):
# a backlog, a chain (its links handed off), a group with a failing
# member and its callback, a job that expires unstarted, a job a unique
# key refuses, a running job cancelled.  Summed over both workers, each
# job is counted once, and the counts are what the run history holds.
sql "DELETE FROM job_runs; DELETE FROM failed_jobs"
write_conf <<EOC
[worker]
poll_interval = 20ms
metrics_listen = 127.0.0.1:0
reserve_mode = update
concurrency = 2
reserve_ahead = 16

[queue default]

[handler ok]
exec = $TH/exitwith.sh
[handler cb]
exec = $TH/exitwith.sh
[handler slow]
exec = $TH/sleeper.sh 20 $T/started
kill_grace = 100ms
EOC
rm -f "$T/started" "$T"/worker.*.log
start_worker
wurl 0
W0=$W
start_worker
wurl 1
W1=$W
for i in $(seq 1 200); do echo '{"type": "ok", "payload": {}}'; done | jq_ enqueue --batch >/dev/null
printf '%s\n' '{"type": "ok", "ref": "a", "payload": {}}' '{"type": "ok", "ref": "b", "after": ["a"], "payload": {}}' \
	'{"type": "ok", "ref": "c", "after": ["b"], "payload": {}}' '{"type": "ok", "after": ["c"], "payload": {}}' |
	jq_ enqueue --batch >/dev/null
printf '%s\n' '{"type": "ok", "payload": {}}' '{"type": "ok", "payload": {"exit": 65}}' |
	jq_ enqueue --batch --group g1 --on-complete cb >/dev/null
delayed_expiring 1 ok '{}' >/dev/null
u1=$(jq_ enqueue -u k1 --delay 2s ok '{}')
u2=$(jq_ enqueue -u k1 ok '{}' 2>/dev/null)
is "$u2" "$u1" "the second job of unique key k1 is refused (the first one's id)"
id=$(jq_ enqueue slow '{}')
for i in $(seq 1 200); do [ -e "$T/started" ] && break; sleep 0.05; done
jq_ cancel "$id" >/dev/null
wait_for_sql 30 "SELECT COUNT(*) FROM jobs" 0
ok $? "every job ended"
sleep 0.5
curl -s "$W0/metrics" >"$T/w0.txt"
curl -s "$W1/metrics" >"$T/w1.txt"
both() {
	local a b
	a=$($PY "$top_srcdir/tests/prom_sample.py" "$T/w0.txt" --sum "$@")
	b=$($PY "$top_srcdir/tests/prom_sample.py" "$T/w1.txt" --sum "$@")
	echo $(( ${a/<none>/0} + ${b/<none>/0} ))
}
hist() { sql "SELECT COUNT(*) FROM job_runs WHERE outcome = '$1'"; }
is "$(both jobq_outcome_writes_total outcome=done)/$(both jobq_outcome_writes_total outcome=dead)/$(both jobq_outcome_writes_total outcome=cancelled)/$(both jobq_outcome_writes_total outcome=expired)" \
	"207/1/1/1" "outcome writes over both workers: 207 done (200, 4 links, a member, the callback, the unique job), 1 dead, 1 cancelled, 1 expired"
is "$(hist done)/$(hist dead)/$(hist cancelled)/$(hist expired)" "207/1/1/1" "the run history says the same"
is "$(both jobq_handler_starts_total)" 209 "handler starts: every job but the expired one"
is "$(both jobq_runs_total)" 209 "runs ended: one per start"
is "$(( $(both jobq_claimed_jobs_total) + $(both jobq_handed_off_jobs_total) ))" 209 \
	"claimed plus handed off: each started job reserved once"
is "$(jq_ workers --json | jget '[d["types_last_24h"][t][k] for t in ("ok", "slow") for k in ("runs", "failures")]')" \
	"[207, 1, 1, 0]" "jobq workers: ok 207 runs, 1 failure (the dead member); slow 1 run, cancelled by a person: no failure"
stop_workers

# --quiet (cron: mail only retries and dead letters): a running job a
# person cancels, and a job that expires unstarted, print nothing; a
# dead letter does.
rm -f "$T/started" "$T"/worker.*.log
start_worker --quiet --metrics-listen off
id=$(jq_ enqueue slow '{}')
for i in $(seq 1 200); do [ -e "$T/started" ] && break; sleep 0.05; done
jq_ cancel "$id" >/dev/null
delayed_expiring 1 ok '{}' >/dev/null
wait_for_sql 30 "SELECT COUNT(*) FROM jobs" 0
jq_ enqueue ok '{"exit": 65}' >/dev/null
wait_for_sql 30 "SELECT COUNT(*) FROM failed_jobs" 2
kill -TERM "$WORKER_PID"
wait_exit 20 "$WORKER_PID"
BG_PIDS=()
is "$(grep -c 'outcome=cancelled\|outcome=expired' "$T/worker.0.log")" 0 "--quiet: nothing for the cancelled job or the expired one"
is "$(grep -c 'outcome=dead' "$T/worker.0.log")" 1 "--quiet: the dead letter is told"

# A lost run: worker A is frozen past its lease, B takes the job and
# runs it; A's handler ends meanwhile (exit 0), and A's outcome, once
# thawed, is fenced off: a run row 'lost'.  The job ran twice and was
# retried never: the dashboard's charts (History and the overview) say
# one done and no retry, as A's own /metrics says lost, not retry.
sql "DELETE FROM job_runs; DELETE FROM jobq_run_stats; DELETE FROM jobq_run_stats_state"
write_conf <<EOC
[worker]
poll_interval = 50ms
metrics_listen = 127.0.0.1:0
reserve_ttl = 1s
heartbeat = 300ms

[queue default]

[handler twice]
exec = $TH/sleeper.sh 2

[user admin]
password_hash = $PWHASH
role = admin
EOC
rm -f "$T"/worker.*.log
start_worker
A=$WORKER_PID
wurl 0
id=$(jq_ enqueue twice '{}')
wait_for_sql 30 "SELECT reserved_by LIKE '%:$A:%' FROM jobs WHERE id = $id" 1
start_worker
B=$WORKER_PID
wait_for_sql 30 "SELECT COUNT(*) FROM jobq_workers WHERE pid = $B" 1
kill -STOP "$A"
stopped_at=$SECONDS
wait_for_sql 30 "SELECT reserved_by LIKE '%:$B:%' FROM jobs WHERE id = $id" 1
ok $? "A frozen: B took job $id"
while [ $((SECONDS - stopped_at)) -lt 4 ]; do sleep 0.2; done
kill -CONT "$A"
wait_for_sql 30 "SELECT COUNT(*) FROM jobs WHERE id = $id" 0
wait_for_sql 30 "SELECT GROUP_CONCAT(outcome ORDER BY outcome) FROM job_runs WHERE job_id = $id" "done,lost"
ok $? "two runs of job $id: B's done, A's lost"
is "$(wsample jobq_runs_total queue=default type=twice outcome=lost)/$(wsample jobq_runs_total queue=default type=twice outcome=retry)" \
	"1/0" "A's /metrics: the run lost, no retry"
serve_start
login admin "$T/jar"
for i in $(seq 150); do
	hit GET "/api/stats?range=1h" "$T/jar"
	[[ $BODY == *'"total":{"done":1,'* ]] && break
	sleep 0.1
done
is "$(printf '%s' "$BODY" | jget 'd["total"]["done"], d["total"]["retry"], d["total"]["dead"]')" "[1, 0, 0]" \
	"History (/api/stats): 1 done, no retry (the lost run is none)"
hit GET /api/overview "$T/jar"
is "$(printf '%s' "$BODY" | jget 'sum(d["runs_per_minute"]["done"]), sum(d["runs_per_minute"]["retry"])')" "[1, 0]" \
	"the overview's chart: 1 done, no retry"
is "$(jq_ workers --json | jget '[d["types_last_24h"]["twice"][k] for k in ("runs", "failures")]')" "[2, 0]" \
	"jobq workers: 2 runs of twice (A's lost, B's done), no failure"
stop_workers
finish
