#!/bin/bash
# Lost answers in the watchdogs and the scheduler, and a schedule's
# first fire:
#   1. a watchdog incident whose INSERT (or its read-back) loses its
#      answer is still delivered "raised" once, by the worker that
#      opened it, on its next pass; and "cleared" once;
#   2. catch_up = all: a tick cut off after committing the first missed
#      fire leaves the next one to be enqueued, not skipped by the
#      overlap rule (the job of a fire of the same catch-up run does not
#      count as "the last fire"); a fire cut off on time still holds up
#      the next one;
#   3. a schedule added with `jobq schedule add` (or removed and added
#      again) never fires an occurrence from before it was added;
#   4. schedule disable, edit and remove hold against a tick under way:
#      once they have returned, no fire of the old schedule happens.
# The worker and the ticks talk to the server through
# tests/replylost.py (see tests/replylost.sh).
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
setup sched_lost
PX=$T/px
replylost_start "$PX"

alerts_setup
dropped() { wc -l <"$PX/dropped" 2>/dev/null || echo 0; }

SOCKET=$T/p.sock write_conf <<EOC
[worker]
poll_interval = 50ms
on_alert = $T/alert.sh $A

[queue default]
[queue other]
max_wait = 1s

[handler tick]
exec = /bin/true
queue = other
EOC

# ---- 1. the answer to an incident's INSERT, then to its read-back ----
n=0
for what in 'INSERT INTO jobq_alerts' 'FROM jobq_alerts WHERE id = '; do
	n=$((n + 1))
	jq_ enqueue tick '{}' >/dev/null
	printf '%s' "$what" >"$PX/drop"
	start_worker -q default
	wait_for_sql 20 "SELECT COUNT(*) FROM jobq_alerts WHERE kind = 'wait' AND open_key = 1" 1
	ok $? "$n: a job waits past max_wait: the incident is open ($what answer lost)"
	[ ! -e "$PX/drop" ]
	ok $? "... the answer was lost"
	wait_alerts 15 $n raised wait
	ok $? "... and raised is delivered all the same, on the worker's next pass"
	sleep 4 # another pass
	is "$(alert_count raised wait)" $n "... once"
	is "$(grep -c 'alert raised: wait other' "$T"/worker.*.log | awk -F: '{ s += $NF } END { print s }')" $n \
		"... and logged once"
	jq_ work -q other --stop-when-empty 2>/dev/null
	wait_alerts 15 $n cleared wait
	ok $? "... cleared once the job ran"
	sleep 4
	is "$(alert_count raised wait) $(alert_count cleared wait)" "$n $n" "... each delivered once"
	kill -TERM "$WORKER_PID"
	wait_exit 20 "$WORKER_PID"
done

# ---- 2. catch_up = all, a tick cut off after its first fire ----
# A tick at 10:00:40 has looked at it; nothing ticks at 10:01.
fired() { sql "SELECT COUNT(*) FROM jobq_schedule_runs WHERE name = 'every' AND job_id IS NOT NULL AND fire_at IN ($1)"; }
JOBQ_SCHEDULER_NOW=2026-01-05T10:00:30Z jq_ schedule add every --cron '* * * * *' --type tick --catch-up 'all 1h'
ok $? "2: a schedule every minute, catch_up = all"
JOBQ_SCHEDULER_NOW=2026-01-05T10:00:40Z jq_ schedule >/dev/null
jq_ work -q other --stop-when-empty 2>/dev/null
printf '^COMMIT' >"$PX/drop"
out=$(JOBQ_SCHEDULER_NOW=2026-01-05T10:02:10Z jq_ schedule 2>&1)
is "$?" 69 "a tick that fires 10:01 and 10:02 loses the answer to its first COMMIT: 69"
is "$(fired "'2026-01-05 10:01:00'")" 1 "... the 10:01 fire is a job"
out=$(JOBQ_SCHEDULER_NOW=2026-01-05T10:02:20Z jq_ schedule 2>&1)
is "$?" 0 "the next tick"
like "$out" "every: 10:02 fire enqueued" "... enqueues 10:02 (the overlap rule does not count 10:01's job)"
is "$(fired "'2026-01-05 10:01:00', '2026-01-05 10:02:00'")" 2 "... both fires have a job, as an uncut tick leaves"
out=$(JOBQ_SCHEDULER_NOW=2026-01-05T10:03:05Z jq_ schedule 2>&1)
like "$out" "every: 10:03 fire skipped: job [0-9]+ of its last fire" \
	"the 10:03 fire is skipped while 10:02's job is queued (overlap = skip)"
jq_ work -q other --stop-when-empty 2>/dev/null
printf '^COMMIT' >"$PX/drop"
JOBQ_SCHEDULER_NOW=2026-01-05T10:04:05Z jq_ schedule >/dev/null 2>&1
is "$? $(fired "'2026-01-05 10:04:00'")" "69 1" \
	"a tick that fires 10:04 on time loses the answer to its COMMIT: the job is there"
sleep 1 # the 10:05 tick comes later than the 10:04 job was enqueued
out=$(JOBQ_SCHEDULER_NOW=2026-01-05T10:05:00Z jq_ schedule 2>&1)
like "$out" "every: 10:05 fire skipped: job [0-9]+ of its last fire" \
	"... its job holds up the 10:05 fire (it was enqueued before 10:05 was due)"

# ---- 3. a schedule's first fire is never one from before it was added ----
JOBQ_SCHEDULER_NOW=2026-01-05T11:05:18Z jq_ schedule add fresh --cron '* * * * *' --type tick --catch-up 'all 1h'
out=$(JOBQ_SCHEDULER_NOW=2026-01-05T11:05:40Z jq_ schedule 2>&1)
is "$(sql "SELECT COUNT(*) FROM jobq_schedule_runs WHERE name = 'fresh'")" 0 \
	"3: added at 11:05:18, a tick at 11:05:40 does not fire 11:05"
out=$(JOBQ_SCHEDULER_NOW=2026-01-05T11:06:05Z jq_ schedule 2>&1)
like "$out" "fresh: 11:06 fire enqueued" "... its first fire is 11:06"
jq_ schedule remove fresh
JOBQ_SCHEDULER_NOW=2026-01-05T11:08:20Z jq_ schedule add fresh --cron '* * * * *' --type tick
out=$(JOBQ_SCHEDULER_NOW=2026-01-05T11:08:50Z jq_ schedule 2>&1)
is "$(sql "SELECT COUNT(*) FROM jobq_schedule_runs WHERE name = 'fresh'")" 0 \
	"removed and added again at 11:08:20: a tick at 11:08:50 does not fire 11:08"
out=$(JOBQ_SCHEDULER_NOW=2026-01-05T11:09:01Z jq_ schedule 2>&1)
like "$out" "fresh: 11:09 fire enqueued" "... its first fire is 11:09"

# ---- 4. disable, edit and remove hold against a tick under way ----
# A tick loads every schedule, then fires from that copy.  Held by the
# proxy at s1's run row (the operator's command comes first) or just
# after it (the tick comes first), once the command has returned no
# fire of what it changed may happen.  The operator talks to the server
# directly.
body="[queue default]
[queue other]
[handler tick]
exec = /bin/true
queue = other
[handler other]
exec = /bin/true
queue = other"
echo "$body" | write_conf
cp "$CONF" "$T/direct.ini"
echo "$body" | SOCKET=$T/p.sock write_conf
D() { "$JOBQ" -c "$T/direct.ini" "$@"; }
sql "DELETE FROM jobq_schedules; DELETE FROM jobq_schedule_state; DELETE FROM jobq_schedule_runs; DELETE FROM jobs"
JOBQ_SCHEDULER_NOW=2026-01-06T09:59:30Z D schedule add s1 --cron '0 10 * * *' --type tick --payload '{"v": "old"}' >/dev/null
# held_tick REGEX: a tick at 10:00:05 through the proxy, held at the
# first statement matching REGEX; TICK its pid, $T/tick.out its output.
held_tick() {
	sql "DELETE FROM jobs; DELETE FROM jobq_schedule_runs;
		UPDATE jobq_schedule_state SET checked_until = '2026-01-06 09:59:30' WHERE name = 's1'"
	rm -f "$PX/held"
	printf '%s' "$1" >"$PX/hold"
	(JOBQ_SCHEDULER_NOW=2026-01-06T10:00:05Z jq_ schedule >"$T/tick.out" 2>&1) &
	TICK=$!
	for i in $(seq 100); do [ -e "$PX/held" ] && break; sleep 0.1; done
	[ -e "$PX/held" ]
	ok $? "4: a tick held at /$1/"
}
s1_rows() { sql "SELECT CONCAT(COUNT(*), ' run rows, ', (SELECT COUNT(*) FROM jobs), ' jobs') FROM jobq_schedule_runs WHERE name = 's1'"; }

held_tick "INSERT INTO jobq_schedule_runs.*'s1'"
OUT=$(D schedule disable s1)
is "$?:$OUT" "0:schedule 's1' disabled" "... meanwhile schedule disable s1 says disabled"
rm -f "$PX/hold"
wait $TICK
is "$(s1_rows)" "0 run rows, 0 jobs" "... and the tick, let go, fires nothing"
like "$(cat "$T/tick.out")" "s1: 10:00 fire not enqueued: the schedule was disabled, edited or removed during this tick" \
	"... and says why"
JOBQ_SCHEDULER_NOW=2026-01-06T09:59:40Z D schedule enable s1 >/dev/null

held_tick "INSERT INTO jobq_schedule_runs.*'s1'"
OUT=$(D schedule edit s1 --type other --payload '{"v": "new"}')
is "$?:$OUT" "0:schedule 's1' changed" "... meanwhile schedule edit s1 --type other --payload new says changed"
rm -f "$PX/hold"
wait $TICK
is "$(s1_rows)" "0 run rows, 0 jobs" "... and the tick, let go, does not fire the old type and payload"
JOBQ_SCHEDULER_NOW=2026-01-06T10:00:10Z D schedule >/dev/null
is "$(sql "SELECT CONCAT(type, ' ', payload) FROM jobs")" 'other {"v": "new"}' "... the next tick fires the new ones"
D schedule edit s1 --type tick --payload '{"v": "old"}' >/dev/null

held_tick "UPDATE jobq_schedule_runs SET job_id"
(D schedule disable s1 >/dev/null; s1_rows >"$T/at_return") &
OP=$!
sleep 1
[ ! -e "$T/at_return" ]
ok $? "the tick first (held after its run row): schedule disable waits for the fire under way"
rm -f "$PX/hold"
wait $TICK $OP
is "$(cat "$T/at_return"):$(s1_rows)" "1 run rows, 1 jobs:1 run rows, 1 jobs" \
	"... which was committed before it returned, and nothing after"
JOBQ_SCHEDULER_NOW=2026-01-06T09:59:40Z D schedule enable s1 >/dev/null

held_tick "INSERT INTO jobq_schedule_runs.*'s1'"
OUT=$(D schedule remove s1)
is "$?:$OUT" "0:schedule 's1' removed" "... meanwhile schedule remove s1 says removed"
rm -f "$PX/hold"
wait $TICK
is "$(s1_rows):$(sql "SELECT COUNT(*) FROM jobq_schedule_state WHERE name = 's1'")" "0 run rows, 0 jobs:0" \
	"... and the tick, let go, neither fires it nor leaves a row of it"
JOBQ_SCHEDULER_NOW=2026-01-06T10:00:30Z D schedule add s1 --cron '0 10 * * *' --type tick >/dev/null
like "$(JOBQ_SCHEDULER_NOW=2026-01-06T10:00:40Z D schedule --list | grep '^s1 ')" "^s1 +db +on +0 10 \* \* \* +[0-9-]+ [0-9:]+ [^ ]+ +- " \
	"... s1 added again starts afresh: no last fire"

stop_workers
finish
