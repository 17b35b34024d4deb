#!/bin/bash
# Groups with callbacks (issue 23), in exec and persistent mode: a
# 200-job group, enqueued as two batches, on 3 workers gets exactly one
# --on-complete callback and one --on-success callback, each started
# after every job of the group ended, with the right counts; a group with
# a dead job gets its --on-complete callback and no --on-success one;
# SIGKILL of the worker running a group's jobs during the fan-in leaves
# exactly one callback; cancelled and expired jobs (jobq cancel, the
# expiry sweep) complete their group too; bad input is refused with one
# line and writes nothing; a callback job forgotten from the dead letter
# is shown as such.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
. "$top_srcdir/tests/operator/common.sh" # jget, count (its lines is replaced below)
setup groups
TH=$top_srcdir/tests/handlers
LOG=$T/log

# t WORD NAME: the time (ns) of the first "WORD NAME" line of the log.
t() { awk -v w="$1" -v n="$2" '$1 == w && $2 == n { print $4; exit }' "$LOG"; }
# starts NAME: how many times NAME started.
starts() { awk -v n="$1" '$1 == "start" && $2 == n' "$LOG" 2>/dev/null | wc -l; }
# last_end REGEX: the time of the last "end" line of a job matching REGEX.
last_end() { awk -v r="$1" '$1 == "end" && $2 ~ r && $4 > t { t = $4 } END { print t }' "$LOG"; }
before() { [ -n "$1" ] && [ -n "$2" ] && [ "$1" -lt "$2" ]; }
# lines PREFIX N [EXTRA [TOP]]: N batch lines of type step named
# PREFIX1..PREFIXN, EXTRA added to the payload, TOP to the line.
lines() {
	for i in $(seq 1 "$2"); do
		echo "{\"type\": \"step\"${4:-}, \"payload\": {\"name\": \"$1$i\"${3:-}}}"
	done
}
# callback TYPE GROUP: the payloads of the runs of TYPE jobs for GROUP.
callback() {
	sql "SELECT payload FROM job_runs WHERE type = '$1' AND payload LIKE '%\"name\": \"$2\"%' ORDER BY id"
}

for hmode in exec persistent; do
	empty_tables
	sql "DELETE FROM jobq_groups"
	rm -f "$LOG"
	extra=""
	[ $hmode = persistent ] && extra="mode = persistent
env.PYTHONPATH = $HANDLERS"
	write_conf <<EOC
[worker]
poll_interval = 20ms
reserve_ttl = 2s
heartbeat = 500ms
workdir = $T

[queue default]
[queue callbacks]

[handler step]
exec = $TH/deps_log.py $LOG $hmode
$extra

[handler fanin]
exec = $TH/deps_log.py $LOG $hmode
queue = callbacks
$extra

[handler allgood]
exec = $TH/deps_log.py $LOG $hmode
$extra
EOC
	m="[$hmode]"
	g=big-$hmode

	# 200 jobs as two batches into one group, no worker running yet.
	out=$(lines J 150 | jq_ enqueue --batch --group "$g" --on-complete fanin --on-success allgood 2>&1)
	is "$?" 0 "$m the first batch of the group is enqueued"
	out=$(lines J 50 ', "n": 2' | jq_ enqueue --batch --group "$g" 2>&1)
	is "$?" 0 "$m a second batch joins the open group"
	gid=$(sql "SELECT id FROM jobq_groups WHERE name = '$g'")
	is "$(sql "SELECT CONCAT_WS(',', total, holds, on_complete, complete_queue, on_success) FROM jobq_groups WHERE id = $gid")" \
		"200,0,fanin,callbacks,allgood" "$m the group counts 200 jobs, no hold left, and its callbacks"
	is "$(sql "SELECT COUNT(*) FROM jobs WHERE group_id = $gid")" 200 "$m its 200 jobs carry its id"

	out=$(jq_ group show "$g")
	like "$out" "jobs: +200: 0 done, 0 dead" "$m group show counts the jobs"
	like "$out" "queued: +200 ready, 0 delayed" "$m and the queued ones by state"
	like "$out" "on-complete: fanin: not enqueued" "$m and says the callback is not enqueued yet"

	start_worker --concurrency 2
	start_worker --concurrency 2
	start_worker --concurrency 2
	wait_for_sql 60 "SELECT COUNT(*) FROM job_runs WHERE type IN ('fanin', 'allgood')" 2
	ok $? "$m both callbacks ran"
	sleep 0.5
	want="{\"group\": $gid, \"name\": \"$g\", \"total\": 200, \"done\": 200, \"dead\": 0, \"cancelled\": 0, \"expired\": 0}"
	is "$(callback fanin "$g")" "$want" "$m exactly one --on-complete callback, with the counts"
	is "$(callback allgood "$g")" "$want" "$m exactly one --on-success callback"
	is "$(starts "$g")" 2 "$m the two callbacks started once each"
	before "$(last_end '^J[0-9]+$')" "$(t start "$g")"
	ok $? "$m the first callback started after every job of the group ended"
	is "$(sql "SELECT COUNT(*) FROM job_runs WHERE type = 'step' AND outcome = 'done'")" 200 "$m 200 jobs ran done"
	is "$(sql "SELECT COUNT(*) FROM job_runs WHERE type = 'fanin' AND queue = 'callbacks'")" 1 "$m the callback ran in its handler's queue"
	is "$(sql "SELECT CONCAT_WS(',', ended_at IS NOT NULL, complete_job IS NOT NULL, success_job IS NOT NULL) FROM jobq_groups WHERE id = $gid")" \
		"1,1,1" "$m the group is ended and names its callback jobs"
	cj=$(sql "SELECT complete_job FROM jobq_groups WHERE id = $gid")
	out=$(jq_ group show --json "$gid" | tr -d ' \n')
	like "$out" "\"state\":\"ended\".*\"total\":200,\"done\":200" "$m group show --json ID: ended, its counts"
	like "$out" "\"on_complete\":.\"type\":\"fanin\",\"job\":$cj,\"state\":\"done\"" "$m and its callback job, done"
	out=$(echo '{"type": "step", "payload": {}}' | jq_ enqueue --batch --group "$g" 2>&1)
	is "$?" 65 "$m a completed group takes no more jobs (exit 65)"
	like "$out" "group '$g' has completed" "$m and says so"
	out=$(echo '{"type": "step", "payload": {}}' | jq_ enqueue --batch --dry-run --group "$g" 2>&1)
	is "$?" 65 "$m a dry run refuses it too"
	out=$(echo '{"type": "step", "payload": {}}' | jq_ enqueue --batch --batch-key "k-$hmode" --group "$g" 2>&1)
	is "$?" 65 "$m refused with a --batch-key too"
	is "$(sql "SELECT COUNT(*) FROM jobq_batches WHERE batch_key = 'k-$hmode'")" 0 "$m which leaves no trace in jobq_batches"
	out=$(echo '{"type": "step", "payload": {}}' | jq_ enqueue --batch --batch-key "k-$hmode" --group "$g-2" 2>&1)
	is "$?" 0 "$m so the key serves the same input with another group"

	# A dead job: --on-complete gets dead 1; --on-success is not enqueued.
	out=$( (lines D 9; echo '{"type": "step", "payload": {"name": "DX", "exit": 65}}') |
		jq_ enqueue --batch --group "dead-$hmode" --on-complete fanin --on-success allgood 2>&1)
	is "$?" 0 "$m a group with a job that fails is enqueued"
	dg=$(sql "SELECT id FROM jobq_groups WHERE name = 'dead-$hmode'")
	wait_for_sql 30 "SELECT ended_at IS NOT NULL FROM jobq_groups WHERE id = $dg" 1
	ok $? "$m the group with a dead job ends"
	wait_for_sql 30 "SELECT COUNT(*) FROM job_runs WHERE type = 'fanin' AND payload LIKE '%\"dead-$hmode\"%'" 1
	is "$(callback fanin "dead-$hmode")" \
		"{\"group\": $dg, \"name\": \"dead-$hmode\", \"total\": 10, \"done\": 9, \"dead\": 1, \"cancelled\": 0, \"expired\": 0}" \
		"$m its --on-complete callback counts the dead job"
	is "$(sql "SELECT CONCAT(COUNT(*), ',', COALESCE(MAX(success_job), 'none')) FROM jobq_groups WHERE id = $dg")" "1,none" \
		"$m no --on-success callback"
	is "$(sql "SELECT COUNT(*) FROM jobs WHERE type = 'allgood'")$(callback allgood "dead-$hmode")" 0 "$m none is queued or ran"

	# SIGKILL of the worker running the group's jobs: its jobs come back
	# when their leases expire, and the group counts each once.
	stop_workers
	rm -f "$LOG"
	lines K 4 ', "sleep": 3' | jq_ enqueue --batch --group "kill-$hmode" --on-complete fanin >/dev/null
	kg=$(sql "SELECT id FROM jobq_groups WHERE name = 'kill-$hmode'")
	start_worker --concurrency 4
	victim=$WORKER_PID
	i=0; while [ "$(awk '$1 == "start"' "$LOG" 2>/dev/null | wc -l)" -lt 4 ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
	kill -9 "$victim"
	pkill -KILL -P "$victim" 2>/dev/null
	start_worker --concurrency 2
	start_worker --concurrency 2
	wait_for_sql 60 "SELECT COUNT(*) FROM job_runs WHERE type = 'fanin' AND payload LIKE '%\"kill-$hmode\"%'" 1
	ok $? "$m after the SIGKILL, the jobs ran again and the callback ran"
	sleep 1
	is "$(callback fanin "kill-$hmode")" \
		"{\"group\": $kg, \"name\": \"kill-$hmode\", \"total\": 4, \"done\": 4, \"dead\": 0, \"cancelled\": 0, \"expired\": 0}" \
		"$m exactly one callback, each job counted once"
	is "$(starts "kill-$hmode")" 1 "$m it started once"
	stop_workers

	# Jobs of a group that end together are bundled (bundle_sql: one
	# INSERT of their run rows, one DELETE, the DELETE's count added to
	# the group's tally), those that waited for another job too (their
	# dependency rows go once their rows are gone).  One of them gained a
	# waiter while it ran: its fence fails in the bundle, and it is
	# written again in full.  Each is counted once, the callback comes
	# once, the waiter runs once, after it.
	rm -f "$LOG" "$T/bw_open"
	out=$( (echo '{"type": "step", "ref": "a", "payload": {"name": "BA"}}'
		for i in 1 2 3 4; do echo "{\"type\": \"step\", \"after\": [\"a\"], \"payload\": {\"name\": \"BW$i\", \"gate\": \"$T/bw_open\"}}"; done
		echo "{\"type\": \"step\", \"payload\": {\"name\": \"BX\", \"gate\": \"$T/bw_open\"}}") |
		jq_ enqueue --batch --group "bundle-$hmode" --on-complete fanin 2>&1)
	ids=($(echo "$out" | grep -E '^[0-9]+$'))
	bg=$(sql "SELECT id FROM jobq_groups WHERE name = 'bundle-$hmode'")
	start_worker --queue default,callbacks --concurrency 8
	i=0; while [ "$(awk '$1 == "start" && $2 ~ /^B[WX]/' "$LOG" 2>/dev/null | wc -l)" -lt 5 ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
	is "$(awk '$1 == "start" && $2 ~ /^B[WX]/' "$LOG" | wc -l)" 5 "$m five jobs of a group run at once, four of them released by the one they waited for"
	by=$(jq_ enqueue --after "${ids[5]}" step '{"name": "BY"}')
	touch "$T/bw_open"
	wait_for_sql 30 "SELECT COUNT(*) FROM job_runs WHERE type = 'fanin' AND payload LIKE '%\"bundle-$hmode\"%'" 1
	ok $? "$m the group ended together gets its callback"
	wait_for_sql 30 "SELECT COUNT(*) FROM job_runs WHERE job_id = $by AND outcome = 'done'" 1
	ok $? "$m the waiter gained while its job ran runs"
	sleep 0.5
	is "$(callback fanin "bundle-$hmode")" \
		"{\"group\": $bg, \"name\": \"bundle-$hmode\", \"total\": 6, \"done\": 6, \"dead\": 0, \"cancelled\": 0, \"expired\": 0}" \
		"$m one callback, each job counted once"
	list=$(echo "${ids[@]}" | tr ' ' ,)
	want=$(for x in "${ids[@]}"; do printf '%s:done,' "$x"; done)
	is "$(sql "SELECT GROUP_CONCAT(CONCAT(job_id, ':', outcome) ORDER BY job_id) FROM job_runs WHERE job_id IN ($list)")" \
		"${want%,}" "$m each job has one run row, done"
	is "$(sql "SELECT COUNT(*) FROM jobq_deps WHERE job_id IN ($list) OR after_id IN ($list)")" 0 \
		"$m no dependency row of theirs is left"
	before "$(t end BX)" "$(t start BY)"
	ok $? "$m the waiter started after its job ended"
	stop_workers
done

# Many groups in one worker's transactions: an outcome tallies its job in
# its group's count, and one statement per group and transaction writes
# the tallies (queue_outcome.c), so jobs of three groups, done and dead,
# ended together by one worker of 8 slots, are each counted once.
empty_tables
rm -f "$LOG"
for k in 1 2 3; do
	(lines "M$k-" 29; echo "{\"type\": \"step\", \"payload\": {\"name\": \"M$k-X\", \"exit\": $((k == 2 ? 65 : 0))}}") |
		jq_ enqueue --batch --group "many-$k" --on-complete fanin >/dev/null
done
start_worker --concurrency 8
start_worker --queue callbacks
wait_for_sql 60 "SELECT COUNT(*) FROM job_runs WHERE type = 'fanin'" 3
ok $? "three groups run by one worker at once each get their callback"
sleep 0.5
for k in 1 2 3; do
	gk=$(sql "SELECT id FROM jobq_groups WHERE name = 'many-$k'")
	is "$(callback fanin "many-$k")" \
		"{\"group\": $gk, \"name\": \"many-$k\", \"total\": 30, \"done\": $((k == 2 ? 29 : 30)), \"dead\": $((k == 2 ? 1 : 0)), \"cancelled\": 0, \"expired\": 0}" \
		"group many-$k: one callback, every job counted once"
done
stop_workers

# Cancel and the expiry sweep end a group's jobs too (no handler ran).
empty_tables
lines C 2 | jq_ enqueue --batch --delay 1h --group cancelled --on-complete fanin >/dev/null
for id in $(sql "SELECT id FROM jobs WHERE group_id = (SELECT id FROM jobq_groups WHERE name = 'cancelled')"); do
	jq_ cancel "$id" >/dev/null 2>&1
done
is "$(sql "SELECT CONCAT_WS(',', cancelled, ended_at IS NOT NULL) FROM jobq_groups WHERE name = 'cancelled'")" "2,1" "jobq cancel counts and completes the group"
is "$(sql "SELECT COUNT(*) FROM jobs WHERE type = 'fanin' AND payload LIKE '%\"cancelled\": 2%'")" 1 "its callback is queued"
# Delayed past their expiry, which no way in takes: set in SQL.
lines E 2 '' ', "expires_in": "2h"' | jq_ enqueue --batch --delay 1h --group expired --on-complete fanin >/dev/null
sql "UPDATE jobs SET expires_at = UTC_TIMESTAMP(6) + INTERVAL 1 SECOND WHERE group_id = (SELECT id FROM jobq_groups WHERE name = 'expired')"
start_worker --queue callbacks
wait_for_sql 30 "SELECT CONCAT_WS(',', expired, ended_at IS NOT NULL) FROM jobq_groups WHERE name = 'expired'" "2,1"
ok $? "the expiry sweep counts and completes the group"
is "$(sql "SELECT COUNT(*) FROM job_runs WHERE type = 'fanin' AND payload LIKE '%\"expired\": 2%'") " "1 " "its callback runs"
stop_workers

# A group whose job and callback both die, then are forgotten from the
# dead letter: the count (as the callback's payload gave it) keeps the
# job dead; group show says the callback job was forgotten, as jobq show
# of it does.
cat >>"$CONF" <<'EOC'

[handler sink]
exec = /bin/sh -c 'exit 65'
EOC
echo '{"type": "sink", "payload": {}}' | jq_ enqueue --batch --group forgot --on-complete sink >/dev/null
jq_ work --queue default --stop-when-empty --quiet 2>/dev/null
sj=$(sql "SELECT COUNT(*) FROM failed_jobs WHERE type = 'sink'")
cb=$(sql "SELECT complete_job FROM jobq_groups WHERE name = 'forgot'")
is "$sj/$(where "$cb")" "2/failed" "the group's job and its callback are dead-lettered"
like "$(jq_ group show forgot)" "on-complete: sink: job $cb \\(failed\\)"$'\n' "group show: a dead-lettered callback is failed"
is "$(jq_ group show --json forgot | jget '[d["on_complete"][k] for k in ("state", "forgotten")]')" '["failed", false]' \
	"and in JSON, not forgotten"
jq_ failed forget --yes $(sql "SELECT id FROM failed_jobs WHERE type = 'sink'") >/dev/null
is "$(count failed_jobs "type = 'sink'")/$(jq_ show --json "$cb" | jget 'd["state"]')" "0/forgotten" \
	"both forgotten; jobq show says the callback job is forgotten"
out=$(jq_ group show forgot)
like "$out" "jobs: +1: 0 done, 1 dead, " "group show: the forgotten job still counts dead, as the callback's payload did"
like "$out" "on-complete: sink: job $cb \\(dead, forgotten from the dead letter\\)" \
	"group show: the callback job is dead, forgotten from the dead letter"
is "$(jq_ group show --json forgot | jget '[d["dead"]] + [d["on_complete"][k] for k in ("job", "state", "forgotten")]')" \
	"[1, $cb, \"dead\", true]" "group show --json: dead 1; the callback job dead, forgotten true"

# A batch of three chunks, written two at a time on two connections:
# the first chunk holds the group open and the last lets it go, so the
# group counts every job and no hold is left.
empty_tables
lines W 25000 | jq_ enqueue --batch --delay 1h --group wide --on-complete fanin >"$T/wide.out" 2>&1
is "$?/$(sql "SELECT COUNT(*) FROM jobs WHERE group_id = (SELECT id FROM jobq_groups WHERE name = 'wide')")" "0/25000" \
	"25,000 lines in three chunks join the group"
is "$(sql "SELECT CONCAT_WS(',', total, holds, ended_at IS NULL) FROM jobq_groups WHERE name = 'wide'")" "25000,0,1" \
	"it counts 25,000 jobs, holds none and stays open for them"
is "$(sql "SELECT CONCAT_WS(',', lines_done, jobs_done) FROM jobq_batches ORDER BY created_at DESC LIMIT 1")" "25000,25000" \
	"the batch's progress row names every line"
empty_tables

# Follow-ups on descriptor 3 make a group and join it; its callback comes
# once, after all of them ended.
cat >>"$CONF" <<'EOC'

[handler fan]
exec = /bin/sh -c 'for i in 1 2 3; do echo "{\"enqueue\": {\"type\": \"step\", \"payload\": {\"name\": \"F$i\"}, \"group\": \"fd3\", \"on_complete\": \"fanin\"}}" >&3; done'
EOC
rm -f "$LOG"
jq_ enqueue fan '{}' >/dev/null
start_worker --queue default,callbacks --concurrency 3
wait_for_sql 30 "SELECT COUNT(*) FROM job_runs WHERE type = 'fanin' AND payload LIKE '%\"fd3\"%'" 1
ok $? "follow-ups that name a group make it, and its callback runs"
fg=$(sql "SELECT id FROM jobq_groups WHERE name = 'fd3'")
is "$(callback fanin fd3)" "{\"group\": $fg, \"name\": \"fd3\", \"total\": 3, \"done\": 3, \"dead\": 0, \"cancelled\": 0, \"expired\": 0}" \
	"once, counting the three follow-ups"
before "$(last_end '^F[0-9]$')" "$(t start fd3)"
ok $? "after all three ended"
stop_workers
out=$(echo '{"type": "step", "group": "g"}' | jq_ enqueue --batch 2>&1)
is "$?" 65 "\"group\" in a batch line: exit 65"
like "$out" "^jobq: enqueue: line 1: \"group\": only in follow-ups" "with its line number"

# A graph in a group: group show lists what the waiting jobs wait for;
# the callback comes once the graph ran.
empty_tables
out=$(printf '%s\n' '{"type": "step", "ref": "a", "payload": {"name": "GA"}}' \
	'{"type": "step", "after": ["a"], "payload": {"name": "GB"}}' |
	jq_ enqueue --batch --group graph --on-complete fanin 2>&1)
ids=($(echo "$out" | grep -E '^[0-9]+$'))
like "$(jq_ group show graph)" "waiting: +job ${ids[1]} waits for ${ids[0]}" "group show lists a waiting job and what it waits for"
start_worker --queue default,callbacks
wait_for_sql 30 "SELECT COUNT(*) FROM job_runs WHERE type = 'fanin' AND payload LIKE '%\"graph\"%'" 1
ok $? "a graph in a group gets its callback"
is "$(sql "SELECT CONCAT_WS(',', total, done) FROM jobq_groups WHERE name = 'graph'")" "2,2" "counting both jobs"
# A job waits for those of its dependencies that have not ended.
out=$(printf '%s\n' '{"type": "step", "ref": "a", "payload": {"name": "WA"}}' \
	'{"type": "step", "ref": "b", "delay": "1h", "payload": {"name": "WB"}}' \
	'{"type": "step", "after": ["a", "b"], "payload": {"name": "WC"}}' |
	jq_ enqueue --batch --group half 2>&1)
ids=($(echo "$out" | grep -E '^[0-9]+$'))
wait_for_sql 30 "SELECT COUNT(*) FROM job_runs WHERE job_id = ${ids[0]} AND outcome = 'done'" 1
like "$(jq_ group show half | grep 'waits for')" "^waiting: +job ${ids[2]} waits for ${ids[1]}\$" "group show: what a job still waits for, not one that ended"
like "$(jq_ group show --json half | tr -d ' \n')" "\"waits_for\":\\[${ids[1]}\\]" "and in JSON, as an array of ids"
like "$(jq_ group show half)" "created: +[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:]{8} \\+00:00 \\(.* ago\\)" "group show prints times as show does (zone, relative)"
like "$(jq_ group show --json half | tr -d ' \n')" "\"created_at\":\"[-0-9]+T[0-9:]+\\.[0-9]{6}\\+00:00\"" "and --json as show --json does"
# A job that waits for 300 jobs: the whole list, not one cut where the
# server's GROUP_CONCAT limit would cut it (1,024 bytes on MySQL).
many=$( (for i in $(seq 1 300); do echo "{\"type\": \"step\", \"ref\": \"m$i\", \"delay\": \"1h\", \"payload\": {}}"; done
	printf '{"type": "step", "after": [%s], "payload": {"name": "WM"}}\n' "$(seq -s, -f '"m%g"' 1 300)") |
	jq_ enqueue --batch --group many 2>&1)
mids=($(echo "$many" | grep -E '^[0-9]+$'))
is "$(jq_ group show --json many | python3 -c 'import json, sys; w = json.load(sys.stdin)["waiting"]; print(len(w), len(w[0]["waits_for"]), w[0]["waits_for"][-1])')" \
	"1 300 ${mids[299]}" "group show --json: a job waiting for 300 jobs lists all 300"
like "$(jq_ group show many | grep 'waits for')" " ${mids[299]}\$" "and the text the last of them"
stop_workers
out=$(jq_ group show nosuch 2>&1)
is "$?" 65 "group show of an unknown group: exit 65"
is "$out" "jobq: group: no group 'nosuch'" "one line saying so"

# Bad input: one line, its exit status, nothing written.
n0=$(sql "SELECT CONCAT(COUNT(*), '/', (SELECT COUNT(*) FROM jobq_groups)) FROM jobs")
out=$(lines B 2 | jq_ enqueue --batch --group bad --on-complete nosuch 2>&1)
is "$?" 65 "an unknown callback type: exit 65"
is "$out" "jobq: enqueue: --on-complete: unknown callback type 'nosuch' (no [handler nosuch] section in $CONF)" "one line naming it"
out=$(lines B 2 | jq_ enqueue --batch --group "$(printf 'g%.0s' $(seq 1 129))" --on-complete fanin 2>&1)
is "$?" 64 "a group name of 129 characters: exit 64"
is "$(echo "$out" | head -1)" "jobq: enqueue: --group: group name: 129 characters, more than 128" "one line saying so"
out=$(lines B 2 | jq_ enqueue --batch --group "pad " 2>&1)
is "$?/$(echo "$out" | head -1)" "64/jobq: enqueue: --group: group name: 'pad ' ends with a space" \
	"a group name that ends with a space (the collation would take it for 'pad'): exit 64"
out=$(lines B 2 | jq_ enqueue --batch --on-complete fanin 2>&1)
is "$?" 64 "--on-complete without --group: exit 64"
is "$(echo "$out" | head -1)" "jobq: enqueue: --on-complete goes with --group" "one line saying so"
out=$(jq_ enqueue --group g1 step '{}' 2>&1)
is "$?" 64 "--group without --batch: exit 64"
# A graph refused by the database (a job it waits for is unknown) makes
# no group: the group is opened in the graph's own transaction.
out=$(printf '%s\n' '{"type": "step", "after": [999999999]}' | jq_ enqueue --batch --group ghost --on-complete fanin 2>&1)
is "$?" 65 "a graph waiting for an unknown job: exit 65"
like "$out" "job 999999999 is not known.*nothing was written" "one line naming it"
is "$(sql "SELECT CONCAT(COUNT(*), '/', (SELECT COUNT(*) FROM jobq_groups)) FROM jobs")" "$n0" "the bad input wrote nothing"
out=$(printf '%s\n' '{"type": "step", "ref": "a"}' '{"type": "step", "after": ["a"]}' |
	jq_ enqueue --batch --group ghost --on-complete step 2>&1)
is "$?" 0 "the graph corrected, with another callback: enqueued in group ghost"
is "$(sql "SELECT CONCAT_WS(',', total, on_complete) FROM jobq_groups WHERE name = 'ghost'")" "2,step" "which has its callback"

# group show reads one snapshot: held (tests/replylost.py) between its
# read of the group's row and its count of the queued jobs while the
# group's last job ends and enqueues its callback, it shows the group as
# it was when it began: its ended and its queued jobs add up to its total.
replylost_start "$T/px"
sed "s#^socket = .*#socket = $T/p.sock#" "$CONF" >"$T/proxy.ini"
empty_tables
lines S 3 | jq_ enqueue --batch --group snap --on-complete fanin >/dev/null
jq_ work -q default --once >/dev/null 2>&1
jq_ work -q default --once >/dev/null 2>&1
printf 'COUNT\\(\\*\\) FROM jobs WHERE group_id' >"$T/px/hold"
"$JOBQ" -c "$T/proxy.ini" group show snap >"$T/snap.out" 2>&1 &
snap=$!
for ((i = 0; i < 100; i++)); do [ -e "$T/px/held" ] && break; sleep 0.1; done
jq_ work -q default --once >/dev/null 2>&1
is "$(sql "SELECT CONCAT_WS(',', done, ended_at IS NOT NULL) FROM jobq_groups WHERE name = 'snap'")" "3,1" \
	"group show held between its reads; meanwhile the group's last job ended"
rm -f "$T/px/hold"
wait $snap
is "$?/$(grep -E '^(state|jobs|queued|on-complete):' "$T/snap.out" | tr -s ' ' | tr '\n' '|')" \
	"0/state: open|jobs: 3: 2 done, 0 dead, 0 cancelled, 0 expired|queued: 1 ready, 0 delayed, 0 waiting, 0 reserved, 0 stale|on-complete: fanin: not enqueued|" \
	"and it shows the group as it was before: open, 2 done and 1 queued, its callback not enqueued"

finish
