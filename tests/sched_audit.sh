#!/bin/bash
# The scheduler's audit: what the other schedule tests did not pin.
#   1. an INI [schedule NAME] whose cron never fires (0 0 31 2 *) is a
#      configuration error at FILE:LINE (exit 78), as `jobq schedule
#      add` refuses it, and as every other bad key is;
#   2. --dry-run of a catch_up = all schedule says what the tick then
#      does: each fire within catch_up enqueued, oldest first, the older
#      ones counted (it said one fire, and the rest "missed");
#   3. --list and --list --json call the last fire's job cancelled when
#      it was cancelled (they said done);
#   4. a database schedule that cannot fire (its handler left the INI)
#      fails every tick (exit 1, said under --quiet) until it is
#      disabled; disabled, the ticks leave it alone and check warns;
#   5. --list keeps its columns under their headings with a 64-character
#      name and a long expression (they pushed the rest of the row out);
#   6. --window with a value that is no duration says so (it said "at
#      least 1s");
#   7. a payload that is not UTF-8 is refused where it is written (INI:
#      FILE:LINE, 78; add: 65), as every other payload is: it passed
#      `jobq check`, then every tick failed on the database's refusal
#      with 69, and the schedules after it in the file never fired;
#   8. `schedule edit NAME` with nothing to change is a usage error (it
#      said "changed" and wrote the row again);
#   9. --list --json gives every schedule the same keys (last_job,
#      last_manual and problem were there only for some), null when a
#      value is missing;
#  10. a fire the server refuses for one schedule alone (here a trigger)
#      is that schedule's failure (exit 1, said); the schedules after it
#      still fire (the tick stopped at it, exit 69);
#  11. `schedule --run` of an unknown name says which command failed,
#      and `jobq check` says a database schedule's never-firing cron
#      once (it said "it would never fire: it never fires");
#  12. `jobq prune` trims the schedules' fires (the table grew by a row
#      a fire forever), but each schedule's last ones, which the ticks
#      weigh overlap and catch-up by: after it, a tick fires nothing
#      twice and --list names the same last fire.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
setup sched_audit

# ---- 1. an INI cron that never fires ----
cat >"$T/never.ini" <<EOC
[database]
socket = $SOCKET
user = root
database = $DB
[queue default]
[handler echo]
exec = /bin/true
[schedule feb]
type = echo
cron = 0 0 31 2 *
EOC
conf_refused never 10 "cron: '0 0 31 2 \\*' names no date that exists: it would never fire" \
	"1: an INI cron that never fires"
run "$JOBQ" -c "$T/never.ini" schedule
is "$RC/$OUT" "78/" "1: ... and a tick refuses the file too (78), enqueueing nothing"
sed -i 's/^cron = .*/cron = 0 0 29 2 */' "$T/never.ini"
run "$JOBQ" -c "$T/never.ini" check
is "$RC" 0 "1: Feb 29 exists (in leap years): the file is fine"

# ---- 2. --dry-run, catch_up = all ----
write_conf <<EOC
[queue default]
[handler echo]
exec = /bin/true
EOC
JOBQ_SCHEDULER_NOW=2026-01-05T10:00:30Z jq_ schedule add every --cron '* * * * *' --type echo --catch-up 'all 5m' >/dev/null
JOBQ_SCHEDULER_NOW=2026-01-05T10:00:40Z jq_ schedule >/dev/null
jobs() { sql "SELECT COUNT(*) FROM jobs"; }
before=$(jobs)
dry=$(JOBQ_SCHEDULER_NOW=2026-01-05T10:20:10Z jq_ schedule --dry-run)
is "$(jobs)" "$before" "2: --dry-run writes nothing"
is "$(printf '%s\n' "$dry" | grep -c 'every: would enqueue the')" 5 "2: --dry-run, catch_up = all 5m: would enqueue 5 fires (10:16 to 10:20; 10:15 is 5m10s old)"
like "$dry" "every: would enqueue the 10:16 fire late .*every: would enqueue the 10:20 fire \\(" \
	"2: ... oldest first, the late ones said late"
like "$dry" "every: 15 fires from 10:01 on older than catch_up not enqueued" "2: ... the older ones counted"
real=$(JOBQ_SCHEDULER_NOW=2026-01-05T10:20:10Z jq_ schedule)
is "$(printf '%s\n' "$real" | grep -c 'every: .*job [0-9]')" 5 "2: ... and the tick then enqueues those 5"
is "$(($(jobs) - before))" 5 "2: ... 5 jobs"
JOBQ_SCHEDULER_NOW=2026-01-05T10:00:30Z jq_ schedule add two --cron '*/10 * * * *' --type echo >/dev/null
JOBQ_SCHEDULER_NOW=2026-01-05T10:00:40Z jq_ schedule >/dev/null
like "$(JOBQ_SCHEDULER_NOW=2026-01-05T10:20:10Z jq_ schedule --dry-run)" "two: 1 earlier fire from 10:10 on was missed" \
	"2: one earlier missed fire 'was' missed"

# ---- 3. a cancelled job is not "done" ----
JOBQ_SCHEDULER_NOW=2026-01-05T10:00:30Z jq_ schedule add canc --cron '0 11 * * *' --type echo >/dev/null
# every's jobs of 2. run first: while one is queued, overlap = skip skips
# all of every's catch_up = all fires at 11:00, which then has no job
jq_ work --stop-when-empty 2>/dev/null
JOBQ_SCHEDULER_NOW=2026-01-05T11:00:10Z jq_ schedule >/dev/null
job=$(sql "SELECT job_id FROM jobq_schedule_runs WHERE name = 'canc'")
jq_ cancel "$job" >/dev/null
is "$(sql "SELECT outcome FROM job_runs WHERE job_id = $job")" cancelled "3: the fire's job is cancelled"
like "$(jq_ schedule --list | grep '^canc ')" " cancelled " "3: --list: its outcome is cancelled, not done"
is "$(jq_ schedule --list --json | python3 -c 'import json,sys; print([s["last_outcome"] for s in json.load(sys.stdin) if s["name"] == "canc"][0])')" \
	cancelled "3: --list --json: last_outcome cancelled"
jq_ work --stop-when-empty 2>/dev/null
like "$(jq_ schedule --list | grep '^every ')" " done " "3: a job that ran is still done"

# ---- 4. a schedule that cannot fire, disabled ----
write_conf <<EOC
[queue default]
[handler echo]
exec = /bin/true
[handler gone]
exec = /bin/true
EOC
jq_ schedule add orphan --cron '* * * * *' --type gone >/dev/null
write_conf <<EOC
[queue default]
[handler echo]
exec = /bin/true
EOC
run "$JOBQ" -c "$CONF" schedule --quiet
is "$RC" 1 "4: a schedule whose handler left the INI: the tick exits 1"
like "$OUT" "orphan: cannot fire: type: unknown job type 'gone'" "4: ... and says why, under --quiet"
jq_ schedule disable orphan >/dev/null
run "$JOBQ" -c "$CONF" schedule --quiet
is "$RC/$OUT" "0/" "4: disabled, it no longer fails the tick (0, nothing said)"
like "$(jq_ schedule --list | grep '^orphan ')" "disabled .*PROBLEM: type: unknown job type 'gone'" \
	"4: ... --list still shows the problem"
run "$JOBQ" -c "$CONF" check
is "$RC" 0 "4: ... jobq check passes"
like "$ERR" "warning: schedule 'orphan' is disabled, and could not fire if enabled: type: unknown job type 'gone'" \
	"4: ... with a warning naming it"
jq_ schedule enable orphan >/dev/null
run "$JOBQ" -c "$CONF" check
is "$RC" 78 "4: enabled again, jobq check fails (78)"
run "$JOBQ" -c "$CONF" schedule --quiet
is "$RC" 1 "4: enabled again, the tick fails again"
jq_ schedule remove orphan >/dev/null

# ---- 5. --list with a long name and a long expression ----
long=$(printf 'n%.0s' $(seq 64))
jq_ schedule add "$long" --cron '0,10,20,30,40,50 8-18 1-15 jan-jun mon-fri' --type echo >/dev/null
list=$(jq_ schedule --list | grep -v '^(RUNS')
header=$(printf '%s\n' "$list" | head -1)
for col in SRC "NEXT FIRE" OUTCOME WHAT; do
	pre=${header%%"$col"*}
	bad=$(printf '%s\n' "$list" | tail -n +2 | while IFS= read -r line; do
		[ "${line:${#pre}-1:1}" = " " ] && [ "${line:${#pre}:1}" != " " ] || echo "$line"
	done)
	is "$bad" "" "5: --list: every row has its $col value under the heading"
done

# ---- 6. --window ----
run "$JOBQ" -c "$CONF" schedule --list --window soon
is "$RC" 64 "6: --window soon: exit 64"
like "$ERR" "^jobq: schedule: --window: bad duration 'soon'" "6: ... saying it is no duration"
run "$JOBQ" -c "$CONF" schedule --list --window 500ms
like "$RC/$ERR" "^64/jobq: schedule: --window: at least 1s, not '500ms'" "6: --window 500ms: at least 1s"

# ---- 7. a payload that is not UTF-8 ----
cat >"$T/utf.ini" <<EOC
[database]
socket = $SOCKET
user = root
database = $DB
[queue default]
[handler echo]
exec = /bin/true
[schedule latin1]
cron = * * * * *
type = echo
payload = {"name": "M$(printf '\xfc')ller"}
EOC
conf_refused utf 11 "payload: not valid UTF-8 \\(at byte 11\\)" "7: an INI payload that is not UTF-8"
run "$JOBQ" -c "$CONF" schedule add latin1 --cron '* * * * *' --type echo --payload "{\"a\": \"$(printf '\xfc')\"}"
is "$RC" 65 "7: schedule add --payload that is not UTF-8: exit 65"
like "$ERR" "^jobq: schedule add latin1: --payload: not valid UTF-8 \\(at byte 7\\)" "7: ... naming the option and the byte"
is "$(sql "SELECT COUNT(*) FROM jobq_schedules WHERE name = 'latin1'")" 0 "7: ... and nothing is written"

# ---- 8. an edit that changes nothing ----
before=$(sql "SELECT updated_at FROM jobq_schedules WHERE name = 'every'")
run "$JOBQ" -c "$CONF" schedule edit every
is "$RC" 64 "8: schedule edit NAME with no option: exit 64"
like "$ERR" "^jobq: schedule: edit every: nothing to change" "8: ... saying so"
is "$OUT" "" "8: ... and not 'changed'"
is "$(sql "SELECT updated_at FROM jobq_schedules WHERE name = 'every'")" "$before" "8: ... nothing written"
run "$JOBQ" -c "$CONF" schedule edit every --priority 3
is "$RC/$OUT" "0/schedule 'every' changed" "8: an edit with an option still changes it"

# ---- 9. --list --json: one shape ----
jq_ schedule add fresh --cron '0 3 * * *' --type echo >/dev/null
shape=$(jq_ schedule --list --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(len({tuple(sorted(s)) for s in d}), len(d) > 1,
      [(s["last_job"], s["last_manual"], s["problem"]) for s in d if s["name"] == "fresh"])')
is "$shape" "1 True [(None, False, None)]" "9: every schedule has the same keys; a new one's last_job, last_manual, problem: null, false, null"

# ---- 10. one schedule's refused fire does not stop the others ----
write_conf <<EOC
[queue default]
[handler echo]
exec = /bin/true
[schedule refused]
cron = 0 12 * * *
type = echo
payload = {"poison": 1}
[schedule after]
cron = 0 12 * * *
type = echo
EOC
# (one statement, no ';': a NULL queue is refused in strict mode)
sql "CREATE TRIGGER audit_poison BEFORE INSERT ON jobs FOR EACH ROW
	SET NEW.queue = IF(NEW.payload LIKE '%poison%', NULL, NEW.queue)"
run env JOBQ_SCHEDULER_NOW=2026-01-06T12:00:10Z "$JOBQ" -c "$CONF" schedule --quiet
is "$RC" 1 "10: a fire refused by the server: the tick exits 1 (a schedule could not fire), not 69"
like "$OUT" "refused: cannot fire: .*cannot be null" "10: ... naming the schedule and the server's reason"
is "$(sql "SELECT COUNT(*) FROM jobq_schedule_runs WHERE name = 'after' AND job_id IS NOT NULL")" 1 \
	"10: ... and the schedule after it in the file still fired"
is "$(sql "SELECT COUNT(*) FROM jobq_schedule_runs WHERE name = 'refused'")" 0 "10: ... the refused fire left no row"
sql "DROP TRIGGER audit_poison"
run env JOBQ_SCHEDULER_NOW=2026-01-06T12:00:40Z "$JOBQ" -c "$CONF" schedule
like "$RC/$OUT" "^0/refused: 12:00 fire enqueued" "10: the trigger gone, the next tick enqueues it (once)"

# ---- 11. messages ----
run "$JOBQ" -c "$CONF" schedule --run nosuch
is "$RC/$NERR" "65/1" "11: --run of an unknown name: exit 65, one line"
like "$ERR" "^jobq: schedule --run: no schedule 'nosuch'" "11: ... naming the command"
sql "INSERT INTO jobq_schedules (name, cron, type, payload) VALUES ('febdb', '0 0 30 2 *', 'echo', '{}')"
run "$JOBQ" -c "$CONF" check
like "$ERR" "database schedule 'febdb': .*would never fire" "11: check names the database row's never-firing cron"
is "$(grep -c 'never fire' <<<"$ERR")/$(grep -o 'never fire' <<<"$ERR" | wc -l)" "1/1" "11: ... once"
sql "DELETE FROM jobq_schedules WHERE name = 'febdb'"

# ---- 12. prune ----
sql "DELETE FROM jobq_schedule_runs"
sql "INSERT INTO jobq_schedule_runs (name, fire_at, status, manual, enqueued_at)
	SELECT 'old', '2026-01-01 00:00:00' + INTERVAL seq MINUTE, 'enqueued', 0,
	UTC_TIMESTAMP(6) - INTERVAL 3 DAY + INTERVAL seq SECOND FROM seq_1_to_2500"
sql "INSERT INTO jobq_schedule_runs (name, fire_at, status, manual, enqueued_at, job_id)
	VALUES ('old', '2026-01-03 00:00:00', 'enqueued', 1, UTC_TIMESTAMP(6) - INTERVAL 2 DAY, 7),
	       ('new', '2026-01-03 00:00:00', 'enqueued', 0, UTC_TIMESTAMP(6) - INTERVAL 2 DAY, NULL),
	       ('new', '2026-01-03 00:01:00', 'enqueued', 0, UTC_TIMESTAMP(6), NULL)"
run "$JOBQ" -c "$CONF" prune --older-than 1d --dry-run
like "$OUT" ", 2500 schedule fires$" "12: prune --dry-run counts the old fires, but each schedule's last ones"
is "$(sql "SELECT COUNT(*) FROM jobq_schedule_runs")" 2503 "12: ... and deletes nothing"
run "$JOBQ" -c "$CONF" prune --older-than 1d --yes
is "$RC" 0 "12: prune --yes exits 0"
like "$OUT" ", 2500 schedule fires$" "12: ... says how many fires it deleted (in chunks)"
is "$(sql "SELECT GROUP_CONCAT(CONCAT(name, ' ', LEFT(fire_at, 16), ' ', manual) ORDER BY name, fire_at SEPARATOR ', ')
	FROM jobq_schedule_runs")" \
	"new 2026-01-03 00:01 0, old 2026-01-02 17:40 0, old 2026-01-03 00:00 1" \
	"12: kept: fires newer than the cut-off, and each schedule's last fire, last timed fire and last job's"
finish
