#!/bin/bash
# Retrying a dead dependency re-opens the jobs its death cancelled
# (park.c) -- where that meets other things:
#   - a worker holding a cancelled job to finalize it as the retry runs:
#     the retry waits for it (and gives up, changing nothing, while a
#     lease holds it), so the job is not left parked under a live job;
#   - a job of policy any that counted a re-opened job's cancel does not
#     count its next end again, nor is it released with the re-opened
#     job's one waiter;
#   - pruning (jobq prune, keep_done) keeps the runs a re-open weighs, so
#     a dependency that ended cancelled still keeps its waiter cancelled;
#   - a job cancelled as it was enqueued (--after a dead job) keeps its
#     --delay when re-opened, and its dependency row goes with it;
#   - a job marked for cancelling that a person deletes (the dashboard)
#     before it ended is not brought back by the retry.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
. "$top_srcdir/tests/operator/common.sh"
. "$top_srcdir/tests/serve_lib.sh"
setup reopen
LOG=$T/log

# A handler that logs each start and fails the first time it sees a job
# whose payload says "once", succeeds otherwise.
cat >"$T/step.sh" <<'EOF'
#!/bin/sh
p=$(cat)
echo "start $JOBQ_JOB_ID $p" >>"$LOG"
case $p in
*once*) [ -e "$T/seen.$JOBQ_JOB_ID" ] || { touch "$T/seen.$JOBQ_JOB_ID"; exit 1; } ;;
esac
exit 0
EOF
sed -i "s|\$LOG|$LOG|; s|\$T/|$T/|g" "$T/step.sh"
chmod 755 "$T/step.sh"

conf() {
	write_conf <<EOC
[worker]
poll_interval = 20ms
reserve_ttl = 2s
heartbeat = 500ms
$1

[queue default]
[queue side]

[handler step]
exec = $T/step.sh
max_attempts = 1

[user ada]
password_hash = $PWHASH
role = admin
EOC
}
conf ""
drain() { jq_ work -q default --stop-when-empty 2>>"$T/worker.log"; }
ran() { grep -c "^start $1 " "$LOG" 2>/dev/null || true; }
reset() { sql "DELETE FROM jobs; DELETE FROM failed_jobs; DELETE FROM job_runs; DELETE FROM jobq_deps; DELETE FROM jobq_parked; DELETE FROM jobq_parked_deps"; rm -f "$LOG" "$T"/seen.*; }

# ---- a worker holds the cancelled job as the retry runs ----
reset
d=$(jq_ enqueue step '{"n": "once"}')
w=$(jq_ enqueue -q side --after "$d" step '{"n": "W"}')
shielded "$w" drain
is "$(sql "SELECT COUNT(*) FROM failed_jobs WHERE id = $d")" 1 "held: the dependency is dead"
is "$(sql "SELECT cancel_by IS NOT NULL FROM jobs WHERE id = $w")" 1 "held: its waiter is marked to be cancelled (no worker serves its queue)"
# As a claim that is about to finalize it would hold it:
sql "UPDATE jobs SET lease_token = REPEAT('a', 32), reserved_by = 'test:hold', reserved_at = UTC_TIMESTAMP(6), lease_expires_at = UTC_TIMESTAMP(6) + INTERVAL 2 SECOND WHERE id = $w"
t0=$(date +%s.%N)
out=$(jq_ failed retry "$d" 2>&1)
rc=$?
t1=$(date +%s.%N)
is "$rc" 0 "held: the retry waits for the hold to end, then succeeds"
is "$(python3 -c "print(int($t1 - $t0 >= 1.0))")" 1 "held: it waited ($(python3 -c "print(f'{$t1 - $t0:.1f}')") s)"
is "$(sql "SELECT CONCAT_WS(',', cancel_by IS NULL, lease_token IS NULL, waiting_on) FROM jobs WHERE id = $w")" "1,1,1" \
	"held: the waiter waits for the retried job again"
is "$(sql "SELECT COUNT(*) FROM jobq_parked WHERE id = $w")" 0 "held: it is parked no more"

reset
d=$(jq_ enqueue step '{"n": "once"}')
w=$(jq_ enqueue -q side --after "$d" step '{"n": "W"}')
shielded "$w" drain
sql "UPDATE jobs SET lease_token = REPEAT('a', 32), reserved_by = 'test:hold', reserved_at = UTC_TIMESTAMP(6), lease_expires_at = UTC_TIMESTAMP(6) + INTERVAL 1 MINUTE WHERE id = $w"
out=$(jq_ failed retry "$d" 2>&1)
rc=$?
[ "$rc" != 0 ]
ok $? "held for long: the retry gives up (exit $rc)"
like "$out" "job $w, which its death cancelled, is held by worker test:hold to be finalized" "held for long: naming the job and the worker"
is "$(sql "SELECT COUNT(*) FROM failed_jobs WHERE id = $d"):$(sql "SELECT COUNT(*) FROM jobq_parked WHERE id = $w AND parked_by = $d")" "1:1" \
	"held for long: nothing changed (the job stays dead, its waiter parked under it)"

# ---- policy any: a re-opened job's end counts once ----
reset
z=$(jq_ enqueue -q side step '{"n": "Z"}')
d=$(jq_ enqueue step '{"n": "once"}')
w=$(jq_ enqueue --after "$d" step '{"n": "W"}')
y=$(jq_ enqueue --after "$w" step '{"n": "Y"}')
x=$(jq_ enqueue --after-any "$w,$z" step '{"n": "X"}')
drain
is "$(sql "SELECT waiting_on FROM jobs WHERE id = $x")" 1 "any: X counted W's cancel (it waits for Z alone)"
like "$(jq_ show "$y")" "re-opens +when job $d is retried" "any: show of Y (parked under W, W under D) names D, the job to retry"
is "$(jq_ show --json "$y" | python3 -c 'import json, sys; print(json.load(sys.stdin)["reopened_by_retry_of"])')" "$d" "any: and so does show --json"
jq_ failed retry "$d" >/dev/null
drain
is "$(ran "$d"):$(ran "$w"):$(ran "$y")" "2:1:1" "any: the retried job, the job it re-opened and that one's waiter ran"
is "$(ran "$x")" 0 "any: X did not run: W's second end did not count for it"
is "$(sql "SELECT waiting_on FROM jobs WHERE id = $x")" 1 "any: X still waits for Z"
jq_ cancel "$z" >/dev/null
drain
is "$(ran "$x")" 1 "any: X runs once Z ended"

# ---- pruned runs: a cancelled dependency keeps its waiter cancelled ----
for how in prune keep_done; do
	reset
	[ $how = keep_done ] && conf "keep_done = 1s"
	x=$(jq_ enqueue -q side step '{"n": "X"}')
	a=$(jq_ enqueue step '{"n": "once"}')
	b=$(jq_ enqueue --after "$a,$x" step '{"n": "B"}')
	drain
	jq_ cancel "$x" >/dev/null
	sleep 1.2
	if [ $how = prune ]; then
		jq_ prune --older-than 1s --yes >/dev/null
	else
		timeout 3 "$JOBQ" -c "$CONF" work -q default 2>>"$T/worker.log"
	fi
	is "$(sql "SELECT COUNT(*) FROM job_runs WHERE job_id IN ($x, $b)")" 2 "$how: the runs of the parked job and of what it waits for are kept"
	is "$(sql "SELECT COUNT(*) FROM job_runs WHERE job_id = $a")" 1 "$how: the dead job's runs stay too"
	jq_ failed retry "$a" >/dev/null
	drain
	is "$(ran "$b")" 0 "$how: B does not run: X ended cancelled"
	is "$(sql "SELECT COUNT(*) FROM jobs WHERE id = $b"):$(sql "SELECT COUNT(*) FROM jobq_parked WHERE id = $b"):$(sql "SELECT GROUP_CONCAT(outcome) FROM job_runs WHERE job_id = $b")" \
		"0:0:cancelled" "$how: B stays cancelled, for good (its one run, parked no more)"
	conf ""
done

# ---- show: a waiting job's own --delay ----
reset
a=$(jq_ enqueue -q side step '{"n": "A"}')
b=$(jq_ enqueue --after "$a" --delay 2h step '{"n": "B"}')
like "$(jq_ show "$b")" "not before +[-0-9]+ [0-9:]+ .*\\(in 1h59m" "show: a waiting job shows the time --delay set, still ahead"
like "$(jq_ show --json "$b" | tr -d ' \n\t')" "\"not_before\":\"[-0-9]+T[0-9:.]+\\+00:00\"" "show --json: as not_before"
like "$(jq_ show --json "$a" | tr -d ' \n\t')" "\"not_before\":null" "null for a job that waits for nothing"

# ---- a job cancelled as it was enqueued keeps its --delay ----
reset
d=$(jq_ enqueue step '{"n": "once"}')
drain
n=$(jq_ enqueue --after "$d" --delay 1h step '{"n": "N"}')
is "$(sql "SELECT COUNT(*) FROM jobq_parked WHERE id = $n")" 1 "delay: --after a dead job, the job is cancelled and parked at once"
jq_ failed retry "$d" >/dev/null
drain
is "$(ran "$d"):$(ran "$n")" "2:0" "delay: the retried job ran; the job it re-opened did not, yet"
is "$(sql "SELECT available_at > UTC_TIMESTAMP(6) + INTERVAL 50 MINUTE FROM jobs WHERE id = $n")" 1 "delay: it is due in an hour, as --delay said"
sql "UPDATE jobs SET available_at = UTC_TIMESTAMP(6) WHERE id = $n" # the hour passes
drain
is "$(ran "$n")" 1 "delay: it ran once due"
is "$(sql "SELECT COUNT(*) FROM jobq_deps WHERE job_id = $n OR after_id = $n")" 0 "delay: no dependency row of it is left"

# ---- a job deleted before it ended cancelled is not re-opened ----
# A dead dependency's waiter is marked for cancelling and parked, still
# in jobs (shielded: as one past a cascade's 500 jobs) when a person
# deletes it (jobq's queue_delete: the dashboard's Delete, and its bulk form).
# Retrying the dependency must not bring it back.
reset
d=$(jq_ enqueue step '{"n": "once"}')
w=$(jq_ enqueue -q side --after "$d" step '{"n": "W"}')
shielded "$w" drain
is "$(sql "SELECT cancel_by IS NOT NULL FROM jobs WHERE id = $w"):$(sql "SELECT COUNT(*) FROM jobq_parked WHERE id = $w")" "1:1" \
	"delete: the waiter of a dead job is marked for cancelling and parked"
serve_start
login ada "$T/jar"
post "/api/jobs/$w/delete" "$T/jar" '{}'

is "$CODE" 200 "delete: the dashboard deletes it"
is "$(sql "SELECT COUNT(*) FROM jobs WHERE id = $w"):$(sql "SELECT COUNT(*) FROM jobq_parked WHERE id = $w"):$(sql "SELECT COUNT(*) FROM jobq_parked_deps WHERE job_id = $w"):$(sql "SELECT COUNT(*) FROM jobq_deps WHERE job_id = $w")" \
	"0:0:0:0" "delete: the job, its parked copy and its dependency rows are gone"
jq_ failed retry "$d" >/dev/null
is "$(sql "SELECT COUNT(*) FROM jobs WHERE id = $w")" 0 "delete: retrying the dead dependency does not bring the deleted job back"
drain
is "$(ran "$d"):$(ran "$w")" "2:0" "delete: the dependency ran again; the deleted job did not"

finish
