#!/bin/bash
# Watchdogs (issue 22 item 5): a missed schedule raises exactly one
# alert with three schedulers ticking, and one clear once it recovers; a
# dead man's switch when nothing ticks; max_wait, a stale lease and
# dead-letter growth each raise once and clear once; and catch_up none,
# latest and all each enqueue what they promise.
#
# Every `jobq work` runs the watchdogs every 3-4 s; the alert program
# appends the JSON it reads to one file, so a duplicate delivery from any
# worker shows there.  JOBQ_SCHEDULER_NOW (the scheduler's test clock)
# plays hours of schedule in seconds.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
setup watchdog

alerts_setup
cat >"$T/sleep.sh" <<'EOS'
#!/bin/sh
exec sleep 60
EOS
cat >"$T/die.sh" <<'EOS'
#!/bin/sh
exit 65
EOS
chmod +x "$T"/*.sh
# watchers N ARGS: starts N workers (each runs the watchdogs).
WATCHERS=()
watchers() {
	local k
	for k in $(seq "$1"); do
		start_worker "${@:2}"
		WATCHERS+=("$WORKER_PID")
	done
}
stop_watchers() {
	local p
	for p in "${WATCHERS[@]}"; do kill -TERM "$p" 2>/dev/null; done
	for p in "${WATCHERS[@]}"; do wait_exit 20 "$p"; done
	WATCHERS=()
}

# ---- a schedule: missed with three schedulers ticking, then recovered ----
write_conf <<EOC
[worker]
poll_interval = 50ms
on_alert = $T/alert.sh $A
env.ALERT_TAG = from-the-worker-section

[queue default]

[handler echo]
exec = $HANDLERS/echo.sh

[schedule hourly]
cron = 0 * * * *
type = echo
catch_up = none
alert_after = 2m
EOC
JOBQ_SCHEDULER_NOW=2026-01-05T10:00:10Z jq_ schedule --quiet
is "$(sql "SELECT COUNT(*) FROM jobq_schedule_runs WHERE status = 'enqueued'")" 1 "the 10:00 fire is enqueued"

# 11:05 with catch_up = none: the 11:00 fire is recorded missed, by one
# of the three ticking workers, and raises one alert.
JOBQ_SCHEDULER_NOW=2026-01-05T11:05:00Z watchers 3 --schedule
wait_alerts 20 1 raised missed hourly
ok $? "a missed fire raises an alert"
sleep 5 # another round of every watcher
is "$(alert_count raised missed hourly)" 1 "... exactly one, with three schedulers ticking"
is "$(sql "SELECT COUNT(*) FROM jobq_schedule_runs WHERE status = 'missed'")" 1 "... the fire recorded missed once"
is "$(sql "SELECT COUNT(*) FROM jobq_alerts WHERE kind = 'missed' AND open_key = 1")" 1 "... one open incident"
like "$(grep '"raised"' "$A" | head -n 1)" '"reason":"schedule hourly: the fire of 2026-01-05 11:00 was missed' \
	"... saying which fire"
is "$(head -n 1 "$A.env")" from-the-worker-section \
	"on_alert runs with [worker] env.NAME (the shipped alert scripts' setting)"
stop_watchers

# 12:00: the fire is on time again: the incident clears, once.
JOBQ_SCHEDULER_NOW=2026-01-05T12:00:20Z watchers 3 --schedule
wait_alerts 20 1 cleared missed hourly
ok $? "the schedule recovered: the alert clears"
sleep 4
is "$(alert_count cleared missed hourly) $(alert_count raised missed hourly)" "1 1" "... once, and nothing raised again"
is "$(sql "SELECT COUNT(*) FROM jobq_alerts WHERE kind = 'missed' AND open_key IS NULL AND cleared_at IS NOT NULL")" 1 \
	"... the incident is closed"
stop_watchers

# 14:10, workers but nothing ticking: the 13:00 fire never came (a dead
# man's switch).  A tick at 15:00 ends it.
JOBQ_SCHEDULER_NOW=2026-01-05T14:10:00Z watchers 3
wait_alerts 20 2 raised missed hourly
ok $? "no scheduler ticking: the fire not enqueued within alert_after raises an alert"
like "$(grep '"raised"' "$A" | tail -n 1)" 'the fire of 2026-01-05 13:00 was not enqueued within 2m' "... saying so"
JOBQ_SCHEDULER_NOW=2026-01-05T15:00:05Z jq_ schedule --quiet >/dev/null
wait_alerts 20 2 cleared missed hourly
ok $? "... and clears once a tick enqueues a fire"
sleep 4
is "$(alert_count raised missed hourly) $(alert_count cleared missed hourly)" "2 2" "... each delivered once"
stop_watchers
is "$(sql "SELECT COUNT(*) FROM jobs")" 0 "the schedule's jobs were done (no unfinished alert)"
is "$(grep -c '"kind":"unfinished"' "$A")" 0 "... and none raised"

# ---- queues: max_wait, a stale lease, dead-letter growth ----
write_conf <<EOC
[worker]
poll_interval = 50ms
queues = default
on_alert = $T/alert.sh $A

[queue default]
[queue slow]
max_wait = 1s
[queue fragile]
stale_alert = 0s
[queue deadq]
dead_alert = 1/h

[handler echo]
exec = $HANDLERS/echo.sh
queue = slow
[handler nap]
exec = $T/sleep.sh
queue = fragile
[handler die]
exec = $T/die.sh
queue = deadq
EOC
empty_tables
watchers 3

# max_wait: a job in a queue nobody serves waits past 1s.
jq_ enqueue echo '{}' >/dev/null
wait_alerts 20 1 raised wait slow
ok $? "max_wait: a job waiting longer raises an alert"
like "$(grep '"kind":"wait"' "$A")" 'the oldest due job of queue slow has waited' "... saying how long"
timeout 30 "$JOBQ" -c "$CONF" work -q slow --stop-when-empty 2>/dev/null
wait_alerts 20 1 cleared wait slow
ok $? "... and clears once a worker drains the queue"

# a stale lease: a worker serving fragile is killed mid-job (reserve_ttl
# 2s), and no worker serves fragile to take the job back.
sed -e 's/^queues = default$/queues = fragile\nreserve_ttl = 2s/' "$CONF" >"$T/victim.ini"
jq_ enqueue nap '{}' >/dev/null
"$JOBQ" -c "$T/victim.ini" work 2>"$T/victim.log" &
victim=$!
BG_PIDS+=("$victim")
wait_for_sql 20 "SELECT COUNT(*) FROM jobs WHERE queue = 'fragile' AND lease_token IS NOT NULL" 1
{ kill -KILL "$victim"; wait "$victim"; } 2>/dev/null
wait_alerts 20 1 raised stale fragile
ok $? "stale_alert: a lease that expired with its worker raises an alert"
jq_ release-stale >/dev/null 2>&1
wait_alerts 20 1 cleared stale fragile
ok $? "... and clears once the job is taken back"
sql "DELETE FROM jobs WHERE queue = 'fragile'"

# dead_alert = 1/h: the second dead job of the hour raises it.
jq_ enqueue die '{}' >/dev/null
timeout 30 "$JOBQ" -c "$CONF" work -q deadq --stop-when-empty 2>/dev/null
sleep 4.5
is "$(alert_count raised dead deadq)" 0 "dead_alert = 1/h: one dead job is not an incident"
jq_ enqueue die '{}' >/dev/null
timeout 30 "$JOBQ" -c "$CONF" work -q deadq --stop-when-empty 2>/dev/null
wait_alerts 20 1 raised dead deadq
ok $? "... the second raises an alert"
jq_ failed clear --yes >/dev/null 2>&1 || sql "DELETE FROM failed_jobs"
wait_alerts 20 1 cleared dead deadq
ok $? "... which clears once the dead letter is cleared"
sleep 4
for k in "wait slow" "stale fragile" "dead deadq"; do
	set -- $k
	is "$(alert_count raised "$1" "$2") $(alert_count cleared "$1" "$2")" "1 1" "$1 $2: raised once, cleared once across three workers"
done
stop_watchers
is "$(grep -c 'alert .*on_alert .*alert.sh ran' "$T"/worker.*.log | awk -F: '{ n += $2 } END { print n }')" \
	"$(grep -c . "$A")" "every delivery ran on_alert once"

# ---- catch_up: none, latest, all ----
write_conf <<EOC
[worker]
poll_interval = 50ms

[queue default]

[handler echo]
exec = $HANDLERS/echo.sh

[schedule c_none]
cron = */10 * * * *
type = echo
overlap = allow
catch_up = none
[schedule c_latest]
cron = */10 * * * *
type = echo
overlap = allow
catch_up = latest 30m
[schedule c_all]
cron = */10 * * * *
type = echo
overlap = allow
catch_up = all 30m
[schedule c_old]
cron = */10 * * * *
type = echo
overlap = allow
catch_up = 30m
EOC
empty_tables
sql "DELETE FROM jobq_schedule_runs; DELETE FROM jobq_schedule_state"
JOBQ_SCHEDULER_NOW=2026-01-05T10:00:05Z jq_ schedule --quiet
# 11:05, after an hour with nothing ticking: fires 10:10 ... 11:00
for k in 1 2 3; do JOBQ_SCHEDULER_NOW=2026-01-05T11:05:00Z jq_ schedule --quiet >"$T/tick.$k" 2>&1 & done
wait
fires() {
	sql "SELECT GROUP_CONCAT(CONCAT(TIME_FORMAT(fire_at, '%H:%i'), ':', status) ORDER BY fire_at SEPARATOR ' ')
		FROM jobq_schedule_runs WHERE name = '$1'"
}
is "$(fires c_none)" "10:00:enqueued 11:00:missed" "catch_up = none: the late fire is recorded missed"
is "$(fires c_latest)" "10:00:enqueued 11:00:enqueued" "catch_up = latest 30m: the latest late fire only"
is "$(fires c_old)" "10:00:enqueued 11:00:enqueued" "catch_up = 30m: the same as latest 30m"
is "$(fires c_all)" "10:00:enqueued 10:40:enqueued 10:50:enqueued 11:00:enqueued" \
	"catch_up = all 30m: every fire within 30m, each once (three ticks at once)"
is "$(sql "SELECT COUNT(*) FROM jobs j JOIN jobq_schedule_runs r ON r.job_id = j.id WHERE r.name = 'c_all'")" 4 \
	"... each with its own job"
like "$(cat "$T"/tick.*)" "c_all: 3 fires from 10:10 on older than catch_up not enqueued" "... the older ones reported"
JOBQ_SCHEDULER_NOW=2026-01-05T11:05:30Z jq_ schedule --quiet
is "$(sql "SELECT COUNT(*) FROM jobs")" 9 "a tick again enqueues nothing more (1 + 2 + 2 + 4 jobs)"
out=$(jq_ schedule add c_db --cron '*/10 * * * *' --type echo --catch-up 'all 1h' --alert-after 5m 2>&1)
is "$?" 0 "schedule add --catch-up 'all 1h' --alert-after 5m"
is "$(sql "SELECT CONCAT(catch_up_mode, ' ', catch_up_ms, ' ', alert_after_ms) FROM jobq_schedules WHERE name = 'c_db'")" \
	"all 3600000 300000" "... kept in the database"
like "$(jq_ schedule --list --json | tr -d ' \t\n')" '"name":"c_db".*"catch_up":"all","alert_after_s":300' "... and listed"
out=$(jq_ schedule add c_bad --cron '* * * * *' --type echo --catch-up 'none 5m' 2>&1)
is "$?" 65 "catch_up = none takes no duration"
is "$(cat "$T"/worker.*.log | grep -c 'runtime error\|Sanitizer')" 0 "no worker log holds a sanitizer report"
finish
