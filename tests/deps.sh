#!/bin/bash
# Jobs that wait for other jobs (issue 23, dependencies), in exec and
# persistent mode: a diamond (A -> B, A -> C, B + C -> D) committed with
# --batch refs runs in order; a dead dependency stops its dependents and
# theirs, with the reason; policy any runs them; a bad graph is refused
# with its line number and writes nothing; --after of a job already done
# is ready at once; jobs enqueued after a job as it ends are released
# once; two workers, and a worker SIGKILLed during the fan-in, release D
# exactly once.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
setup deps
TH=$top_srcdir/tests/handlers
LOG=$T/log

. "$top_srcdir/tests/deps_lib.sh"
# wait_started SECS NAME...: waits until each NAME has started once.
wait_started() {
	local secs=$1 i=0 n
	shift
	for n in "$@"; do
		while [ "$(starts "$n")" != 1 ]; do
			i=$((i + 1))
			[ $i -le $((secs * 10)) ] || { waited_out "$1" "wait_started $*"; return 1; }
			sleep 0.1
		done
	done
}
# wait_log SECS N REGEX: waits until N "end" lines name a job matching REGEX.
wait_log() {
	local i=0
	while [ "$(awk -v r="$3" '$1 == "end" && $2 ~ r' "$LOG" 2>/dev/null | wc -l)" -lt "$2" ]; do
		i=$((i + 1))
		[ $i -le $(($1 * 10)) ] || { waited_out "$1" "wait_log $*"; return 1; }
		sleep 0.1
	done
}
# id_of NAME: the id of the job whose payload names NAME (queued or ended).
id_of() { sql "SELECT id FROM jobs WHERE payload LIKE '%\"$1\"%' UNION SELECT job_id FROM job_runs WHERE payload LIKE '%\"$1\"%' LIMIT 1"; }

for hmode in exec persistent; do
	empty_tables
	sql "DELETE FROM jobq_deps; DELETE FROM jobq_parked; DELETE FROM jobq_parked_deps"
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

[handler step]
exec = $TH/deps_log.py $LOG $hmode
backoff = 1s
$extra
EOC
	m="[$hmode]"

	# The diamond, enqueued with no worker running: only A is ready.
	out=$(printf '%s\n' \
		'{"type": "step", "ref": "a", "payload": {"name": "A", "sleep": 0.3}}' \
		'{"type": "step", "ref": "b", "after": ["a"], "payload": {"name": "B", "sleep": 0.6}}' \
		'{"type": "step", "ref": "c", "after": ["a"], "payload": {"name": "C", "sleep": 0.6}}' \
		'{"type": "step", "after": ["b", "c"], "payload": {"name": "D"}}' | jq_ enqueue --batch 2>&1)
	is "$?" 0 "$m the diamond is enqueued"
	like "$out" "enqueued 4 jobs in one transaction" "$m in one transaction"
	ids=($(echo "$out" | grep -E '^[0-9]+$'))
	is "${#ids[@]}" 4 "$m its four ids are printed in input order"
	a=${ids[0]} b=${ids[1]} c=${ids[2]} d=${ids[3]}
	is "$(sql "SELECT GROUP_CONCAT(CONCAT(id, ':', waiting_on) ORDER BY id) FROM jobs")" "$a:0,$b:1,$c:1,$d:2" "$m B and C wait for one job, D for two"
	is "$(sql "SELECT COUNT(*) FROM jobs WHERE available_at >= '9999-12-31'")" 3 "$m the waiting jobs are out of every claim's reach"
	like "$(jq_ show "$d")" "waiting" "$m show says D is waiting"
	like "$(jq_ show "$d")" "waits for +$b \\(waiting\\), $c \\(waiting\\)" "$m and lists what it waits for"
	like "$(jq_ show "$a")" "waited for by +$b \\(waiting\\), $c \\(waiting\\)" "$m and A what waits for it"
	like "$(jq_ show --json "$d" | tr -d ' \t\n')" "\"state\":\"waiting\"" "$m show --json: state waiting"
	is "$(jq_ show "$d" | grep -c available)/$(jq_ show --json "$d" | grep -c available_in)" "0/0" \
		"$m with no due time: it is due when released"
	like "$(jq_ status --json | tr -d ' \t\n')" '"waiting":3' "$m status counts 3 waiting"
	like "$(jq_ status --json | tr -d ' \t\n')" '"delayed":0' "$m and none of them as delayed"

	start_worker --concurrency 2
	start_worker --concurrency 2
	wait_for_sql 30 "SELECT COUNT(*) FROM job_runs WHERE job_id = $d" 1
	ok $? "$m D ran"
	is "$(starts A),$(starts B),$(starts C),$(starts D)" "1,1,1,1" "$m each job started once"
	before "$(t end A)" "$(t start B)" && before "$(t end A)" "$(t start C)"
	ok $? "$m B and C started after A ended"
	before "$(t end B)" "$(t start D)" && before "$(t end C)" "$(t start D)"
	ok $? "$m D started after B and C ended"
	is "$(sql "SELECT COUNT(*) FROM jobq_deps")" 0 "$m jobq_deps is empty once the graph ran"

	# A dead dependency: its dependents and theirs are cancelled, naming it;
	# a dependent of policy any runs.
	out=$(printf '%s\n' \
		'{"type": "step", "ref": "x", "payload": {"name": "X", "exit": 65}}' \
		'{"type": "step", "ref": "y", "after": ["x"], "payload": {"name": "Y"}}' \
		'{"type": "step", "after": ["y"], "payload": {"name": "Z"}}' \
		'{"type": "step", "after": ["x"], "after_policy": "any", "payload": {"name": "W"}}' \
		'{"type": "step", "after": ["y"], "after_policy": "any", "payload": {"name": "V"}}' | jq_ enqueue --batch 2>&1)
	ids=($(echo "$out" | grep -E '^[0-9]+$'))
	x=${ids[0]} y=${ids[1]} z=${ids[2]} w=${ids[3]} v=${ids[4]}
	wait_for_sql 30 "SELECT COUNT(DISTINCT job_id) FROM job_runs WHERE job_id IN ($y, $z, $w, $v)" 4
	ok $? "$m every dependent of the dead job ended"
	is "$(where "$x")" failed "$m X is dead-lettered"
	like "$(run_of "$y")" "^cancelled\\|cancelled by dependency $x \\(dead\\) at $stamp UTC\$" "$m Y is cancelled, naming X"
	like "$(run_of "$z")" "^cancelled\\|cancelled by dependency $y \\(cancelled\\) at $stamp UTC\$" "$m Z, down the graph, naming Y"
	is "$(starts Y),$(starts Z)" "0,0" "$m neither ran"
	# Whether a claim or the expiry sweep ended them, their rows name
	# the attempts made: none.
	is "$(sql "SELECT GROUP_CONCAT(attempt ORDER BY job_id) FROM job_runs WHERE job_id IN ($y, $z)")" "0,0" \
		"$m their run rows say attempt 0"
	is "$(sql "SELECT outcome FROM job_runs WHERE job_id = $w")" done "$m W (after_policy any) ran"
	is "$(sql "SELECT outcome FROM job_runs WHERE job_id = $v")" done "$m V (any, after the cancelled Y) ran"
	like "$(jq_ show "$y")" "cancelled" "$m show says Y is cancelled"

	# --after of a job that is already done: ready at once; of a dead one:
	# cancelled at once; of an unknown one: refused.
	e=$(jq_ enqueue --after "$a" step '{"name": "E"}')
	is "$(sql "SELECT COUNT(*) FROM jobs WHERE id = $e AND waiting_on > 0")" 0 "$m --after a done job: not waiting"
	wait_for_sql 30 "SELECT COUNT(*) FROM job_runs WHERE job_id = $e AND outcome = 'done'" 1
	ok $? "$m and it runs"
	f=$(jq_ enqueue --after "$a,$x" step '{"name": "F"}' 2>"$T/f.err")
	like "$(run_of "$f")" "^cancelled\\|cancelled by dependency $x \\(dead\\)" "$m --after a dead job: cancelled at once"
	is "$(cat "$T/f.err")" "jobq: enqueue: job $f was cancelled at once by dependency $x (dead)" "$m and enqueue says so on stderr, with the id on stdout"
	# The same in a --batch graph: the line is named, and the summary
	# counts it; a dry run says it would be.
	printf '\n{"type": "step", "after": [%s]}\n' "$x" >"$T/cx.jsonl"
	out=$(jq_ enqueue --batch --dry-run <"$T/cx.jsonl" 2>&1)
	like "$out" "line 2: would be cancelled at once by dependency $x \\(dead\\)" \
		"$m --batch --dry-run: says which line would be cancelled at once"
	out=$(jq_ enqueue --batch <"$T/cx.jsonl" 2>"$T/cx.err")
	f3=$(printf '%s\n' "$out" | sed -n 1p)
	is "$(cat "$T/cx.err")" "jobq: enqueue: line 2: job $f3 was cancelled at once by dependency $x (dead)" \
		"$m --batch: a line cancelled at once is named on stderr"
	like "$out" "enqueued 1 job in one transaction, 1 cancelled at once\$" "$m and the summary counts it"
	like "$(run_of "$f3")" "^cancelled\\|cancelled by dependency $x \\(dead\\)" "$m and it is"
	g=$(jq_ enqueue --after-any "$x" step '{"name": "G"}')
	wait_for_sql 30 "SELECT COUNT(*) FROM job_runs WHERE job_id = $g AND outcome = 'done'" 1
	ok $? "$m --after-any a dead job: runs"
	# After a job that runs now and one due in an hour: once the first
	# is done, show lists only what it still waits for.
	a2=$(jq_ enqueue step '{"name": "A2"}')
	b2=$(jq_ enqueue --delay 1h step '{"name": "B2"}')
	d2=$(jq_ enqueue --after "$a2,$b2" step '{"name": "D2"}')
	wait_for_sql 30 "SELECT COUNT(*) FROM job_runs WHERE job_id = $a2 AND outcome = 'done'" 1
	like "$(jq_ show "$d2")" "waits for +$b2 \\(delayed\\)"$'\n' \
		"$m show: waits for the delayed job only, not the done one it waited for"
	jq_ cancel "$b2" "$d2" >/dev/null
	# Retrying the dead X re-opens what its death cancelled, down the
	# graph (sql/024-parked.sql): Y and F wait for X again, Z for Y.
	wait_for_sql 30 "SELECT COUNT(*) FROM jobq_parked WHERE id IN ($y, $z, $f)" 3
	ok $? "$m Y, Z and F are parked"
	is "$(sql "SELECT GROUP_CONCAT(CONCAT(id, '<', parked_by) ORDER BY id) FROM jobq_parked")" "$y<$x,$z<$y,$f<$x,$f3<$x" \
		"$m Y, F and the batch's job under X, Z under Y"
	out=$(jq_ failed retry --payload '{"name": "X2", "sleep": 0.5}' "$x" 2>&1)
	is "$?" 0 "$m X is retried (edited to succeed)"
	wait_for_sql 30 "SELECT COUNT(*) FROM job_runs WHERE job_id IN ($y, $z, $f) AND outcome = 'done'" 3
	ok $? "$m Y, Z and F ran after the retry"
	is "$(starts Y),$(starts Z),$(starts F)" "1,1,1" "$m each once"
	before "$(t end X2)" "$(t start Y)" && before "$(t end Y)" "$(t start Z)" && before "$(t end X2)" "$(t start F)"
	ok $? "$m in the graph's order"
	is "$(sql "SELECT GROUP_CONCAT(outcome ORDER BY id) FROM job_runs WHERE job_id = $z")" "cancelled,done" "$m Z's history: cancelled, then done"
	is "$(sql "SELECT COUNT(*) FROM jobq_parked")/$(sql "SELECT COUNT(*) FROM jobq_parked_deps")" "0/0" "$m nothing is left parked"

	# Two dead dependencies: retrying the first keeps the job cancelled,
	# parked under the second; retrying that one re-opens it.  Forgetting
	# a dead job drops what it parked.
	out=$(printf '%s\n' \
		'{"type": "step", "ref": "p", "payload": {"name": "P1", "exit": 65}}' \
		'{"type": "step", "ref": "q", "payload": {"name": "P2", "exit": 65, "sleep": 1}}' \
		'{"type": "step", "after": ["p", "q"], "payload": {"name": "Q"}}' \
		'{"type": "step", "ref": "r", "payload": {"name": "R1", "exit": 65}}' \
		'{"type": "step", "after": ["r"], "payload": {"name": "S"}}' | jq_ enqueue --batch 2>&1)
	ids=($(echo "$out" | grep -E '^[0-9]+$'))
	p1=${ids[0]} p2=${ids[1]} q=${ids[2]} r1=${ids[3]} s1=${ids[4]}
	wait_for_sql 30 "SELECT COUNT(*) FROM failed_jobs WHERE id IN ($p1, $p2, $r1)" 3
	wait_for_sql 30 "SELECT COUNT(DISTINCT job_id) FROM job_runs WHERE job_id IN ($q, $s1)" 2
	like "$(run_of "$q")" "cancelled by dependency $p1 \\(dead\\)" "$m Q is cancelled by the first death"
	jq_ failed retry --payload '{"name": "P1b"}' "$p1" >/dev/null
	is "$(sql "SELECT CONCAT(id, '<', parked_by) FROM jobq_parked WHERE id = $q")" "$q<$p2" "$m retrying P1: Q stays parked, under P2"
	is "$(sql "SELECT COUNT(*) FROM jobs WHERE id = $q")" 0 "$m and stays cancelled"
	wait_for_sql 30 "SELECT COUNT(*) FROM job_runs WHERE job_id = $p1 AND outcome = 'done'" 1
	jq_ failed retry --payload '{"name": "P2b"}' "$p2" >/dev/null
	wait_for_sql 30 "SELECT COUNT(*) FROM job_runs WHERE job_id = $q AND outcome = 'done'" 1
	ok $? "$m retrying P2 re-opens Q, which runs"
	before "$(t end P2b)" "$(t start Q)"
	ok $? "$m after P2"
	jq_ failed forget "$r1" >/dev/null
	is "$(sql "SELECT COUNT(*) FROM jobq_parked")" 0 "$m forgetting R1 drops S's copy"
	# A claim ended S; its run names when, as a sweep's run does.
	like "$(run_of "$s1")" "^cancelled\\|cancelled by dependency $r1 \\(dead\\) at $stamp UTC\$" "$m S stays cancelled"
	# A forgotten dead job is known by its last run: it ended dead.
	f2=$(jq_ enqueue --after "$r1" step '{"name": "F2"}' 2>/dev/null)
	like "$?/$(run_of "$f2")" "^0/cancelled\\|cancelled by dependency $r1 \\(dead\\)" "$m --after a forgotten dead job: cancelled at once"
	is "$(sql "SELECT COUNT(*) FROM jobq_parked WHERE id = '$f2'")" 0 \
		"$m and not parked under it: a forgotten job is never retried"
	! jq_ show "$f2" | grep -q "re-opens"
	ok $? "$m show promises no re-open of it"
	! jq_ show "$r1" | grep -q "re-opens"
	ok $? "$m nor of the forgotten job"
	# Two dead dependencies, the second forgotten: retrying the first
	# leaves the job cancelled for good, parked under neither (no retry
	# of a forgotten job can come).
	out=$(printf '%s\n' \
		'{"type": "step", "ref": "p", "payload": {"name": "P3", "exit": 65}}' \
		'{"type": "step", "ref": "q", "payload": {"name": "P4", "exit": 65, "sleep": 1}}' \
		'{"type": "step", "after": ["p", "q"], "payload": {"name": "Q2"}}' | jq_ enqueue --batch 2>&1)
	ids=($(echo "$out" | grep -E '^[0-9]+$'))
	p3=${ids[0]} p4=${ids[1]} q2=${ids[2]}
	wait_for_sql 30 "SELECT COUNT(*) FROM failed_jobs WHERE id IN ($p3, $p4)" 2
	wait_for_sql 30 "SELECT COUNT(*) FROM job_runs WHERE job_id = $q2" 1
	jq_ failed forget "$p4" >/dev/null
	jq_ failed retry --payload '{"name": "P3b"}' "$p3" >/dev/null
	is "$(sql "SELECT COUNT(*) FROM jobq_parked WHERE id = $q2")/$(sql "SELECT COUNT(*) FROM jobs WHERE id = $q2")" "0/0" \
		"$m retrying P3 with P4 forgotten: Q2 stays cancelled, parked under none"
	! jq_ show "$q2" | grep -q "re-opens"
	ok $? "$m show promises no re-open of Q2"
	g2=$(jq_ enqueue --after-any "$r1" step '{"name": "G2"}' 2>&1)
	wait_for_sql 30 "SELECT COUNT(*) FROM job_runs WHERE job_id = $g2 AND outcome = 'done'" 1
	ok $? "$m --after-any a forgotten dead job: runs"

	# A job of policy any still waiting for another counted the dead
	# job's end once: retrying that one, and its new end, count nothing
	# for it again (the release only takes down what the end is owed).
	x3=$(jq_ enqueue step '{"name": "X3", "exit": 65}')
	z3=$(jq_ enqueue --delay 1h step '{"name": "Z3"}')
	k3=$(jq_ enqueue --after-any "$x3,$z3" step '{"name": "K3"}')
	d3=$(jq_ enqueue --after "$x3" step '{"name": "D3"}')
	wait_for_sql 30 "SELECT COUNT(*) FROM jobq_parked WHERE id = $d3" 1
	ok $? "$m X3 died: D3 is cancelled (parked)"
	is "$(sql "SELECT waiting_on FROM jobs WHERE id = $k3")" 1 "$m K3 (any) waits for Z3 alone"
	jq_ failed retry --payload '{"name": "X3b", "sleep": 1}' "$x3" >/dev/null
	e3=$(jq_ enqueue --after "$x3" step '{"name": "E3"}')
	wait_for_sql 30 "SELECT COUNT(*) FROM job_runs WHERE job_id IN ($d3, $e3) AND outcome = 'done'" 2
	ok $? "$m retrying X3 re-opens D3; D3 and E3, enqueued after X3 as it ran again, run"
	is "$(sql "SELECT CONCAT_WS('|', waiting_on, (SELECT COUNT(*) FROM job_runs WHERE job_id = $k3)) FROM jobs WHERE id = $k3")" \
		"1|0" "$m K3 still waits for Z3, and has not run"
	jq_ cancel "$z3" >/dev/null
	wait_for_sql 30 "SELECT COUNT(*) FROM job_runs WHERE job_id = $k3 AND outcome = 'done'" 1
	ok $? "$m Z3 cancelled: K3 runs"
	is "$(starts K3)" 1 "$m once"

	out=$(jq_ enqueue --after 999999999 step '{"name": "H"}' 2>&1)
	is "$?" 65 "$m --after an unknown job exits 65"
	like "$out" "job 999999999 is not known" "$m and says which"
	is "$(id_of H)" "" "$m and writes nothing"

	# Bad graphs: nothing is written, the line is named.
	n0=$(sql "SELECT COUNT(*) FROM jobs")
	out=$(printf '%s\n' \
		'{"type": "step", "ref": "p", "payload": {"name": "P"}}' \
		'{"type": "step", "ref": "q", "after": ["r"], "payload": {"name": "Q"}}' \
		'{"type": "step", "ref": "r", "after": ["p"], "payload": {"name": "R"}}' | jq_ enqueue --batch 2>&1)
	is "$?" 65 "$m a ref to a later line: exit 65"
	like "$out" "line 2: \"after\": ref 'r' is not defined on an earlier line" "$m with its line number"
	out=$(printf '%s\n' \
		'{"type": "step", "ref": "p", "payload": {"name": "P"}}' \
		'{"type": "step", "after": ["p", "nope"], "payload": {"name": "Q"}}' | jq_ enqueue --batch 2>&1)
	is "$?" 65 "$m an unknown ref: exit 65"
	like "$out" "line 2: \"after\": ref 'nope'" "$m with its line number"
	out=$(printf '%s\n' \
		'{"type": "step", "ref": "p", "payload": {"name": "P"}}' \
		'{"type": "step", "after": [999999999], "payload": {"name": "Q"}}' | jq_ enqueue --batch 2>&1)
	is "$?" 65 "$m an unknown id: exit 65"
	like "$out" "line 2: \"after\": job 999999999 is not known" "$m with its line number"
	out=$(printf '%s\n' '{"type": "step", "after": [999999999], "payload": {"name": "Q"}}' | jq_ enqueue --batch --dry-run 2>&1)
	is "$?" 65 "$m a dry run refuses an unknown id too"
	like "$out" "line 1: \"after\": job 999999999 is not known" "$m naming it and its line"
	out=$(printf '%s\n' '{"type": "step", "ref": "p", "payload": {"name": "P"}}' | jq_ enqueue --batch --batch-key g1 2>&1)
	is "$?" 64 "$m --batch-key with a graph is refused (it would not make a run again safe)"
	like "$out" "--batch-key does not apply to an input with \"after\" or \"ref\"" "$m saying why"
	out=$(printf '%s\n' '{"type": "step", "after_policy": "any", "payload": {"name": "P"}}' | jq_ enqueue --batch 2>&1)
	is "$?" 65 "$m \"after_policy\" without \"after\": exit 65"
	like "$out" "line 1: \"after_policy\": goes with a non-empty \"after\"" "$m with its line number"
	# A line refused for another reason still defines its ref: the lines
	# that wait for it are not called bad for that.
	out=$(printf '%s\n' \
		'{"type": "nosuch", "ref": "p", "payload": {"name": "P"}}' \
		'{"type": "step", "ref": "q", "after": ["p", "zz"], "payload": {"name": "Q"}}' \
		'{"type": "step", "after": ["p", "q"], "payload": {"name": "R"}}' | jq_ enqueue --batch 2>&1)
	is "$?" 65 "$m a bad line that defines a ref: exit 65"
	is "$(echo "$out" | grep -c '^jobq: enqueue: line ')/$(echo "$out" | grep -c 'line 3')" "2/0" \
		"$m its own line and the one naming an unknown ref are named, not the line waiting for both"
	like "$out" "2 bad lines" "$m and the count says 2"
	is "$(sql "SELECT COUNT(*) FROM jobs")" "$n0" "$m the bad graphs wrote nothing"
	is "$(id_of P)" "" "$m not even their good lines"

	# A waiter added while the job runs: the worker claimed it with
	# nothing waiting, so its outcome was lean (no release statements),
	# fenced by has_waiters = 0; that fence fails, and the outcome is
	# written again in full: one run row, not "lost", and W released.
	rm -f "$T/lv_open"
	v=$(jq_ enqueue step "{\"name\": \"LV\", \"gate\": \"$T/lv_open\"}")
	wait_started 10 LV
	is "$(sql "SELECT has_waiters FROM jobs WHERE id = $v")" 0 "$m a running job nothing waits for: has_waiters 0"
	w=$(jq_ enqueue --after "$v" step '{"name": "LW"}')
	is "$(sql "SELECT has_waiters FROM jobs WHERE id = $v")" 3 "$m enqueue --after it sets has_waiters (3: one waiter, of it alone)"
	touch "$T/lv_open"
	wait_for_sql 30 "SELECT COUNT(*) FROM job_runs WHERE job_id = $w AND outcome = 'done'" 1
	ok $? "$m the job that gained a waiter while it ran releases it"
	is "$(sql "SELECT GROUP_CONCAT(outcome) FROM job_runs WHERE job_id = $v")" "done" "$m one run row, done"
	before "$(t end LV)" "$(t start LW)"
	ok $? "$m W started after V ended"

	# Two plain jobs that end together: a worker writes their outcomes
	# as one bundle (one INSERT of both run rows, one DELETE), when both
	# ran on it.  One gained a waiter while it ran: its fence fails in
	# the bundle and the other's holds.  The other is done once; the
	# first is written again in full, done once, and releases its waiter.
	rm -f "$T/lp_open"
	v=$(jq_ enqueue step "{\"name\": \"LP\", \"gate\": \"$T/lp_open\"}")
	u=$(jq_ enqueue step "{\"name\": \"LQ\", \"gate\": \"$T/lp_open\"}")
	wait_started 10 LP LQ
	w=$(jq_ enqueue --after "$v" step '{"name": "LR"}')
	touch "$T/lp_open"
	wait_for_sql 30 "SELECT COUNT(*) FROM job_runs WHERE job_id = $w AND outcome = 'done'" 1
	ok $? "$m a bundled job that gained a waiter while it ran releases it"
	is "$(sql "SELECT CONCAT(GROUP_CONCAT(outcome), '/', (SELECT COUNT(*) FROM jobs WHERE id = $v)) FROM job_runs WHERE job_id = $v")" "done/0" "$m its one run row says done, its row is gone"
	# The job beside it may end after LR did (its handler exits later
	# than LP's on a slow build): its outcome is then not in the bundle.
	wait_for_sql 30 "SELECT COUNT(*) FROM job_runs WHERE job_id = $u" 1
	is "$(sql "SELECT CONCAT(GROUP_CONCAT(outcome), '/', (SELECT COUNT(*) FROM jobs WHERE id = $u)) FROM job_runs WHERE job_id = $u")" "done/0" "$m the job beside it: one run row, done, its row gone"

	# A waiter of two jobs added while the job runs: the worker claimed
	# it with one waiter, of it alone (has_waiters 3), so its outcome
	# leaves out taking down counts above 1 and releases that waiter in
	# its hand-off, fenced by has_waiters = 3.  The new waiter set 1:
	# that fence fails, the outcome is written again in full, and the new
	# waiter's count goes from 2 to 1, then to 0 when its other job ends.
	rm -f "$T/sv_open" "$T/so_open"
	out=$(printf '%s\n' \
		"{\"type\": \"step\", \"ref\": \"v\", \"payload\": {\"name\": \"SV\", \"gate\": \"$T/sv_open\"}}" \
		'{"type": "step", "after": ["v"], "payload": {"name": "SW"}}' | jq_ enqueue --batch 2>&1)
	ids=($(echo "$out" | grep -E '^[0-9]+$'))
	sv=${ids[0]} sw=${ids[1]}
	so=$(jq_ enqueue step "{\"name\": \"SO\", \"gate\": \"$T/so_open\"}")
	wait_started 10 SV SO
	is "$(sql "SELECT has_waiters FROM jobs WHERE id = $sv")" 3 "$m a job claimed with one waiter, of it alone: has_waiters 3"
	sm=$(jq_ enqueue --after "$sv,$so" step '{"name": "SM"}')
	is "$(sql "SELECT CONCAT(has_waiters, '/', (SELECT waiting_on FROM jobs WHERE id = $sm)) FROM jobs WHERE id = $sv")" "1/2" "$m a waiter of two jobs sets has_waiters 1"
	touch "$T/sv_open"
	wait_for_sql 30 "SELECT COUNT(*) FROM job_runs WHERE job_id = $sw AND outcome = 'done'" 1
	ok $? "$m the waiter of it alone ran"
	is "$(sql "SELECT GROUP_CONCAT(outcome) FROM job_runs WHERE job_id = $sv")" "done" "$m one run row of the ended job, done"
	is "$(sql "SELECT waiting_on FROM jobs WHERE id = $sm")" 1 "$m the waiter of two counts down to 1"
	touch "$T/so_open"
	wait_for_sql 30 "SELECT COUNT(*) FROM job_runs WHERE job_id = $sm AND outcome = 'done'" 1
	ok $? "$m and runs once its other job ends"

	# A second waiter of it alone added while the job runs: has_waiters
	# goes from 3 to 2, the outcome's fence (has_waiters = 3) fails, and
	# the outcome written again releases both waiters: each runs once,
	# after the job ended.
	rm -f "$T/ov_open"
	out=$(printf '%s\n' \
		"{\"type\": \"step\", \"ref\": \"v\", \"payload\": {\"name\": \"OV\", \"gate\": \"$T/ov_open\"}}" \
		'{"type": "step", "after": ["v"], "payload": {"name": "OW1"}}' | jq_ enqueue --batch 2>&1)
	ids=($(echo "$out" | grep -E '^[0-9]+$'))
	ov=${ids[0]}
	wait_started 10 OV
	is "$(sql "SELECT has_waiters FROM jobs WHERE id = $ov")" 3 "$m a running job with one waiter: has_waiters 3"
	ow2=$(jq_ enqueue --after "$ov" step '{"name": "OW2"}')
	is "$(sql "SELECT has_waiters FROM jobs WHERE id = $ov")" 2 "$m a second waiter of it alone: has_waiters 2"
	touch "$T/ov_open"
	wait_for_sql 30 "SELECT COUNT(*) FROM job_runs WHERE job_id IN (${ids[1]}, $ow2) AND outcome = 'done'" 2
	ok $? "$m both waiters ran"
	is "$(sql "SELECT GROUP_CONCAT(outcome) FROM job_runs WHERE job_id = $ov")" "done" "$m one run row of the ended job, done"
	is "$(starts OW1),$(starts OW2)" "1,1" "$m each once"
	before "$(t end OV)" "$(t start OW1)" && before "$(t end OV)" "$(t start OW2)"
	ok $? "$m both after the job ended"

	# Enqueued after a job as it ends: released exactly once, whichever
	# transaction comes first.
	for i in $(seq 1 15); do
		r=$(jq_ enqueue step "{\"name\": \"R$i\"}")
		jq_ enqueue --after "$r" step "{\"name\": \"S$i\"}" >/dev/null
	done
	wait_log 60 15 '^S[0-9]+$'
	ok $? "$m 15 jobs enqueued after a job as it ran all ran"
	is "$(awk '$1 == "start" && $2 ~ /^S[0-9]+$/' "$LOG" | sort -u -k2,2 | wc -l),$(awk '$1 == "start" && $2 ~ /^S[0-9]+$/' "$LOG" | wc -l)" "15,15" "$m each once"
	bad=0
	for i in $(seq 1 15); do before "$(t end R$i)" "$(t start S$i)" || bad=$((bad + 1)); done
	is "$bad" 0 "$m each after the job it waited for ended"

	# SIGKILL of the worker running B and C during the fan-in: D runs once.
	stop_workers
	rm -f "$LOG"
	out=$(printf '%s\n' \
		'{"type": "step", "ref": "b", "payload": {"name": "KB", "sleep": 3}}' \
		'{"type": "step", "ref": "c", "payload": {"name": "KC", "sleep": 3}}' \
		'{"type": "step", "after": ["b", "c"], "payload": {"name": "KD"}}' | jq_ enqueue --batch 2>&1)
	ids=($(echo "$out" | grep -E '^[0-9]+$'))
	kd=${ids[2]}
	start_worker --concurrency 2
	victim=$WORKER_PID
	wait_started 30 KB KC
	is "$(starts KB)$(starts KC)" 11 "$m B and C run on one worker"
	kill -9 "$victim"
	pkill -KILL -P "$victim" 2>/dev/null
	start_worker --concurrency 2
	start_worker --concurrency 2
	wait_for_sql 60 "SELECT COUNT(*) FROM job_runs WHERE job_id = $kd" 1
	ok $? "$m after the SIGKILL, B and C ran again and D ran"
	sleep 1
	is "$(starts KD)" 1 "$m D ran exactly once"
	is "$(sql "SELECT COUNT(*) FROM job_runs WHERE job_id = $kd")" 1 "$m one run of D"
	before "$(awk '$1 == "end" && $2 == "KB" { t = $4 } END { print t }' "$LOG")" "$(t start KD)" &&
		before "$(awk '$1 == "end" && $2 == "KC" { t = $4 } END { print t }' "$LOG")" "$(t start KD)"
	ok $? "$m after B's and C's runs ended"
	stop_workers
done

finish
