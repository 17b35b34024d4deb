#!/bin/bash
# jobq release-stale, jobq workers [--json], jobq prune --older-than.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
. "$top_srcdir/tests/operator/common.sh"
setup admin

write_conf <<EOC
[worker]
poll_interval = 20ms
heartbeat = 200ms

[queue default]
[queue mail]
[queue parked]

[handler echo]
exec = $HANDLERS/echo.sh

[handler nap]
exec = /bin/sh -c 'sleep 0.2; cat >/dev/null'
queue = mail
EOC

# ---- release-stale ----
run release-stale
is "$RC/$OUT" "0/released 0 stale jobs" "nothing stale: 'released 0 stale jobs'"
for i in 1 2 3 4 5; do jq_ enqueue --queue parked echo "{\"i\": $i}" >/dev/null; done
ids=($(sql "SELECT id FROM jobs ORDER BY id"))
# Three stale (lease expired), one reserved (lease alive), one ready.
sql "UPDATE jobs SET attempts = 1, reserved_by = 'gone:1:x', reserved_at = UTC_TIMESTAMP(6) - INTERVAL 10 MINUTE,
     lease_token = MD5(id), lease_expires_at = UTC_TIMESTAMP(6) - INTERVAL 1 MINUTE,
     available_at = UTC_TIMESTAMP(6) - INTERVAL 10 MINUTE WHERE id IN (${ids[0]}, ${ids[1]}, ${ids[2]})"
sql "UPDATE jobs SET attempts = 1, reserved_by = 'alive:1:y', reserved_at = UTC_TIMESTAMP(6),
     lease_token = MD5(id), lease_expires_at = UTC_TIMESTAMP(6) + INTERVAL 10 MINUTE WHERE id = ${ids[3]}"
run status --json --queue parked
is "$(printf '%s' "$OUT" | jget '[d["queues"]["parked"][k] for k in ("ready", "reserved", "stale")]')" "[1, 1, 3]" \
	"before: 1 ready, 1 reserved, 3 stale"
run release-stale
is "$RC" 0 "release-stale exits 0"
is "$OUT" "released 3 stale jobs" "and says it released 3"
is "$(sql "SELECT COUNT(*) FROM jobs WHERE id IN (${ids[0]}, ${ids[1]}, ${ids[2]}) AND lease_token IS NULL AND reserved_by IS NULL
     AND ABS(TIMESTAMPDIFF(SECOND, available_at, UTC_TIMESTAMP())) <= 10")" 3 "the stale jobs are unleased and due now"
is "$(sql "SELECT CONCAT(reserved_by, ' ', lease_expires_at > UTC_TIMESTAMP(6)) FROM jobs WHERE id = ${ids[3]}")" "alive:1:y 1" \
	"the job with a live lease is untouched"
run status --json --queue parked
is "$(printf '%s' "$OUT" | jget '[d["queues"]["parked"][k] for k in ("ready", "reserved", "stale")]')" "[4, 1, 0]" \
	"after: 4 ready, 1 reserved, 0 stale"
run show --json "${ids[0]}"
is "$(printf '%s' "$OUT" | jget 'd["state"], d["attempts"]')" '["ready", 1]' "show: a released job is ready, its attempt still counted"
run release-stale
is "$OUT" "released 0 stale jobs" "a second run releases nothing"
run release-stale extra
is "$RC" 64 "release-stale with an argument: 64"
sql "DELETE FROM jobs"

# ---- workers ----
run workers
is "$RC" 0 "workers exits 0"
like "$OUT" "0 workers" "none registered yet"
start_worker --queue default,mail -j 3
wpid=$WORKER_PID
wait_for_sql 10 "SELECT COUNT(*) FROM jobq_workers WHERE pid = $wpid" 1
ok $? "the worker registered"
# A worker that stopped heart-beating an hour ago.
sql "INSERT INTO jobq_workers (id, host, pid, queues, concurrency, heartbeat_ms, started_at, last_seen_at)
     VALUES ('oldhost:777:dead', 'oldhost', 777, 'mail', 4, 10000, UTC_TIMESTAMP(6) - INTERVAL 2 HOUR, UTC_TIMESTAMP(6) - INTERVAL 1 HOUR)"
run workers --json
is "$RC" 0 "workers --json exits 0"
printf '%s' "$OUT" >"$T/w.json"
mine="[w for w in d['workers'] if w['pid'] == $wpid]"
is "$(jget "len($mine)" <"$T/w.json")" 1 "the running worker is listed once"
is "$(jget "[($mine)[0][k] for k in ('host', 'queues', 'concurrency', 'state')]" <"$T/w.json")" \
	"[\"$(hostname)\", \"default,mail\", 3, \"alive\"]" "with host, queues, concurrency, alive"
like "$(jget "($mine)[0]['id']" <"$T/w.json")" ":$wpid:" "its id holds its pid"
is "$(jget "[(w['host'], w['pid'], w['queues'], w['concurrency'], w['state']) for w in d['workers'] if w['id'] == 'oldhost:777:dead']" <"$T/w.json")" \
	'[["oldhost", 777, "mail", 4, "gone"]]' "a worker last seen an hour ago is marked gone"
is "$(jget "len(d['workers'])" <"$T/w.json")" 2 "two workers listed"
run workers
like "$(printf '%s\n' "$OUT" | grep ":$wpid:")" "alive +3 .* default,mail " "text: the running worker, alive, concurrency, queues"
like "$(printf '%s\n' "$OUT" | grep 'oldhost:777:dead')" "gone +4 .* mail " "text: the old one, gone"
like "$OUT" "2 workers" "text: the total"
run status --json
is "$(printf '%s' "$OUT" | jget 'd["workers"]')" 1 "status counts only the live worker"

# After runs, the per-type statistics from the run history.
for i in 1 2 3; do jq_ enqueue nap "{\"i\": $i}" >/dev/null; done
wait_for_sql 15 "SELECT COUNT(*) FROM job_runs WHERE type = 'nap'" 3
ok $? "the worker ran three nap jobs"
wait_for_sql 5 "SELECT jobs_done FROM jobq_workers WHERE pid = $wpid" 3
run workers --json
printf '%s' "$OUT" >"$T/w.json"
avg=$(sql "SELECT ROUND(AVG(duration_ms), 1) FROM job_runs WHERE type = 'nap'")
is "$(jget "[d['types_last_24h']['nap'][k] for k in ('runs', 'failures')]" <"$T/w.json")" "[3, 0]" "nap: 3 runs, 0 failures"
is "$(jget "'%.1f' % d['types_last_24h']['nap']['avg_ms']" <"$T/w.json")" "$avg" "nap: avg_ms is the mean of the run history ($avg)"
ok "$(jget "0 if 150 <= d['types_last_24h']['nap']['avg_ms'] < 2000 else 1" <"$T/w.json")" "nap: the average reflects the 0.2 s handler"
is "$(jget "($mine)[0]['done']" <"$T/w.json")" 3 "the worker's done counter"
# Synthetic history with known durations: the mean is exact; old runs
# and other types are kept apart.
sql "INSERT INTO job_runs (job_id, queue, type, attempt, worker, started_at, duration_ms, outcome, exit_status) VALUES
     (9001, 'default', 'synth', 1, 'x', UTC_TIMESTAMP(6) - INTERVAL 1 HOUR, 100, 'done', 'exit 0'),
     (9002, 'default', 'synth', 1, 'x', UTC_TIMESTAMP(6) - INTERVAL 2 HOUR, 400, 'retry', 'exit 75'),
     (9003, 'default', 'synth', 1, 'x', UTC_TIMESTAMP(6) - INTERVAL 3 HOUR, 250, 'done', 'exit 0'),
     (9004, 'default', 'synth', 1, 'x', UTC_TIMESTAMP(6) - INTERVAL 3 DAY, 99999, 'done', 'exit 0')"
run workers --json
is "$(printf '%s' "$OUT" | jget "[d['types_last_24h']['synth'][k] for k in ('runs', 'failures', 'avg_ms', 'max_ms')]")" "[3, 1, 250, 400]" \
	"synth: 3 runs in 24 h, 1 failure, mean 250 ms, max 400 (the 3-day-old run left out)"
run workers
like "$(printf '%s\n' "$OUT" | grep '^synth ')" "^synth +3 +1 +250\.0 +400$" "text: the per-type line"
kill -TERM "$wpid"
wait_exit 10 "$wpid"
is "$?" 0 "the worker stops on SIGTERM"
is "$(count jobq_workers "pid = $wpid")" 0 "and removes its registry row"
run workers extra
is "$RC" 64 "workers with an argument: 64"

# ---- prune ----
sql "DELETE FROM job_runs; DELETE FROM failed_jobs; DELETE FROM jobq_workers"
sql "INSERT INTO job_runs (job_id, queue, type, attempt, worker, started_at, duration_ms, outcome, exit_status) VALUES
     (1, 'default', 'echo', 1, 'x', UTC_TIMESTAMP(6) - INTERVAL 3 DAY, 1, 'done', 'exit 0'),
     (2, 'default', 'echo', 1, 'x', UTC_TIMESTAMP(6) - INTERVAL 25 HOUR, 1, 'done', 'exit 0'),
     (3, 'default', 'echo', 1, 'x', UTC_TIMESTAMP(6) - INTERVAL 23 HOUR, 1, 'done', 'exit 0'),
     (4, 'default', 'echo', 1, 'x', UTC_TIMESTAMP(6), 1, 'done', 'exit 0')"
sql "INSERT INTO failed_jobs (id, queue, type, payload, exception, failed_at) VALUES
     (21, 'default', 'echo', '{}', 'e', UTC_TIMESTAMP(6) - INTERVAL 2 DAY),
     (22, 'default', 'echo', '{}', 'e', UTC_TIMESTAMP(6) - INTERVAL 1 HOUR)"
sql "INSERT INTO jobq_workers (id, host, pid, queues, concurrency, heartbeat_ms, started_at, last_seen_at) VALUES
     ('h:1:a', 'h', 1, 'default', 1, 10000, UTC_TIMESTAMP(6) - INTERVAL 5 DAY, UTC_TIMESTAMP(6) - INTERVAL 2 DAY),
     ('h:2:b', 'h', 2, 'default', 1, 10000, UTC_TIMESTAMP(6) - INTERVAL 1 DAY, UTC_TIMESTAMP(6))"
jq_ enqueue echo '{"keep": true}' >/dev/null
run prune --older-than 1d --failed
is "$RC/$(count job_runs)" "64/4" "prune with no terminal and no --yes: 64, nothing deleted"
run prune --older-than 1d --failed --yes
is "$RC" 0 "prune --yes exits 0"
is "$OUT" "pruned 2 runs, 1 failed job, 1 gone worker, 0 schedule fires" "and says what it deleted"
is "$(sql "SELECT GROUP_CONCAT(job_id ORDER BY job_id) FROM job_runs")" "3,4" "only runs older than a day went"
is "$(sql "SELECT GROUP_CONCAT(id) FROM failed_jobs")" "22" "only failed jobs older than a day went"
is "$(sql "SELECT GROUP_CONCAT(id) FROM jobq_workers")" "h:2:b" "only the worker gone for more than a day went"
is "$(count jobs)" 1 "queued jobs are never pruned"
run prune --older-than 1d --failed --yes
is "$OUT" "pruned 0 runs, 0 failed jobs, 0 gone workers, 0 schedule fires" "a second prune deletes nothing"
sql "UPDATE job_runs SET started_at = started_at - INTERVAL 2 DAY; UPDATE failed_jobs SET failed_at = failed_at - INTERVAL 2 DAY"
run prune --older-than 1d --keep-failed --yes
is "$OUT/$(count failed_jobs)" "pruned 2 runs, 0 failed jobs, 0 gone workers, 0 schedule fires/1" "--keep-failed (now the default) keeps the dead-letter table"
run prune
is "$RC" 64 "prune without --older-than: 64"
run prune --older-than later
is "$RC" 64 "prune with a bad duration: 64"
# Many old rows: deleted in chunks, all counted.
sql "INSERT INTO job_runs (job_id, queue, type, attempt, worker, started_at, duration_ms, outcome, exit_status)
     SELECT 1, 'default', 'echo', 1, 'x', UTC_TIMESTAMP(6) - INTERVAL 3 DAY, 1, 'done', 'exit 0'
     FROM information_schema.columns a, information_schema.columns b LIMIT 2500"
run prune --older-than 2d --failed --yes
is "$OUT/$(count job_runs)" "pruned 2500 runs, 1 failed job, 0 gone workers, 0 schedule fires/0" "2,500 old runs pruned (more than one chunk)"
finish
