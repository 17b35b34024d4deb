#!/bin/bash
# jobq show ID [--json]: a job in each state (ready, delayed, reserved,
# stale, failed), its runs after a worker ran it twice, an unknown id,
# and [worker] timezone shifting the printed times.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
. "$top_srcdir/tests/operator/common.sh"
setup show

conf() {
	write_conf <<EOC
[worker]
poll_interval = 20ms
$1

[queue default]
[queue mail]
[queue runq]

[handler echo]
exec = $HANDLERS/echo.sh
backoff = 100ms,200ms,7s
max_attempts = 6

[handler flaky]
exec = /bin/sh -c 'echo "out of flaky"; echo "flaky: database busy" >&2; echo "second line" >&2; exit 75'
backoff = 100ms,30s,7s
backoff_jitter = 0
max_attempts = 4
queue = runq

[handler bad]
exec = /bin/sh -c 'echo "bad: field x missing" >&2; echo "more detail" >&2; exit 65'
queue = mail
EOC
}
conf ""

# show_json ID: runs show --json ID into $T/show.json; $RC as usual.
show_json() {
	run show --json "$1"
	printf '%s' "$OUT" >"$T/show.json"
}
j() { jget "$1" <"$T/show.json"; }
# lease_left ID: seconds left on the lease, as the database says.
lease_left() {
	sql "SELECT TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), lease_expires_at) / 1000000 FROM jobs WHERE id = $1"
}
# near GOT BEFORE AFTER NAME: GOT lies between what the database said
# just before and just after (give or take 0.5 s), and has their sign.
near() {
	ok "$(awk -v a="$1" -v b="$2" -v c="$3" 'BEGIN { print (a <= b + 0.5 && a >= c - 0.5 && a * c > 0) ? 0 : 1 }')" \
		"$4 (got ${1}s, database ${2}s .. ${3}s)"
}
# dbtime ID COLUMN [TABLE]: the column as show prints it in UTC, before
# its " +00:00" offset.
dbtime() {
	sql "SELECT DATE_FORMAT($2, '%Y-%m-%d %H:%i:%s') FROM ${3:-jobs} WHERE id = $1"
}
# A time as --json prints it: ISO 8601, UTC, with its offset +00:00.
jtime() {
	sql "SELECT DATE_FORMAT($2, '%Y-%m-%dT%H:%i:%s.%f+00:00') FROM ${3:-jobs} WHERE id = $1"
}

# ---- ready ----
ready=$(jq_ enqueue --priority 3 echo '{"to": "a@example.com", "n": [1, 2]}')
show_json "$ready"
is "$RC" 0 "show --json of a ready job exits 0"
is "$(j '[d["id"], d["state"], d["queue"], d["type"], d["priority"]]')" "[$ready, \"ready\", \"default\", \"echo\", 3]" \
	"ready: id, state, queue, type, priority"
is "$(j 'd["payload"]')" '{"to": "a@example.com", "n": [1, 2]}' "ready: the payload, as JSON"
is "$(j '[d["attempts"], d["max_attempts"]]')" "[0, 6]" "ready: attempts 0 of the handler's 6"
is "$(j 'd["created_at"]')" "$(jtime "$ready" created_at)" "ready: created_at as in the database"
is "$(j 'd["available_at"]')" "$(jtime "$ready" available_at)" "ready: available_at as in the database"
is "$(j '[d["reserved_by"], d["lease_expires_at"], d["last_error"]]')" "[null, null, null]" "ready: no lease, no error"
is "$(j 'd["next_backoff_seconds"]')" "0.1" "ready: the next failure (attempt 1) would wait 100ms"
is "$(j 'd["runs"]')" "[]" "ready: no runs"
run show "$ready"
is "$RC" 0 "show (text) exits 0"
is "$(printf '%s\n' "$OUT" | head -1)" "job $ready: ready" "text: first line 'job N: ready'"
like "$OUT" $'\n  queue +default\n' "text: queue"
like "$OUT" $'\n  type +echo\n' "text: type"
like "$OUT" $'\n  priority +3\n' "text: priority"
like "$OUT" $'\n  attempts +0 of 6\n' "text: attempts 0 of 6"
like "$OUT" "created +$(dbtime "$ready" created_at) \\+00:00" "text: created, in UTC"
like "$OUT" "available +$(dbtime "$ready" available_at) \\+00:00" "text: available, in UTC"
like "$OUT" "next backoff 100ms \(if attempt 1 fails\)" "text: next backoff"
like "$OUT" '"to":[[:space:]]+"a@example.com"' "text: the payload"
like "$OUT" "runs: none yet" "text: no runs yet"

# ---- delayed ----
delayed=$(jq_ enqueue --queue mail --delay 1h --max-attempts 2 echo '{}')
show_json "$delayed"
is "$(j '[d["state"], d["queue"], d["max_attempts"]]')" '["delayed", "mail", 2]' "delayed: state, queue, the job's own max_attempts"
is "$(j '3590 <= d["available_in_seconds"] <= 3600')" true "delayed: available in about an hour"
is "$(j 'd["available_at"]')" "$(jtime "$delayed" available_at)" "delayed: available_at as in the database"
run show "$delayed"
like "$OUT" "available .* \+00:00 \(in (59m[0-9]*s|1h)\)" "text: available in about 1h"

# ---- reserved and stale (leases made with SQL) ----
# A lease of 10 minutes: a loaded machine may take a minute to get here.
reserved=$(jq_ enqueue echo '{"r": 1}')
sql "UPDATE jobs SET attempts = 2, reserved_by = 'hostA:4242:abcd', reserved_at = UTC_TIMESTAMP(6) - INTERVAL 5 SECOND,
     lease_token = REPEAT('a', 32), lease_expires_at = UTC_TIMESTAMP(6) + INTERVAL 600 SECOND WHERE id = $reserved"
l0=$(lease_left "$reserved")
show_json "$reserved"
l1=$(lease_left "$reserved")
is "$(j '[d["state"], d["reserved_by"], d["attempts"]]')" '["reserved", "hostA:4242:abcd", 2]' "reserved: state, reserved_by, attempts"
is "$(j 'd["reserved_at"]')" "$(jtime "$reserved" reserved_at)" "reserved: reserved_at as in the database"
is "$(j 'd["lease_expires_at"]')" "$(jtime "$reserved" lease_expires_at)" "reserved: lease_expires_at as in the database"
near "$(j 'd["lease_left_seconds"]')" "$l0" "$l1" "reserved: lease_left_seconds as the database says"
is "$(j 'd["next_backoff_seconds"]')" "0.2" "reserved: if this (2nd) attempt fails, 200ms"
run show "$reserved"
like "$OUT" "reserved by +hostA:4242:abcd at $(dbtime "$reserved" reserved_at) \\+00:00" "text: reserved by, at"
like "$OUT" "lease +expires in ([0-9]+m)?[0-9]+s\\b.* $(dbtime "$reserved" lease_expires_at) \\+00:00" "text: lease expires in ..."

stale=$(jq_ enqueue echo '{"s": 1}')
sql "UPDATE jobs SET attempts = 1, reserved_by = 'hostB:1:dead', reserved_at = UTC_TIMESTAMP(6) - INTERVAL 2 MINUTE,
     lease_token = REPEAT('b', 32), lease_expires_at = UTC_TIMESTAMP(6) - INTERVAL 30 SECOND WHERE id = $stale"
l0=$(lease_left "$stale")
show_json "$stale"
l1=$(lease_left "$stale")
is "$(j '[d["state"], d["reserved_by"]]')" '["stale", "hostB:1:dead"]' "stale: state and the dead worker"
near "$(j 'd["lease_left_seconds"]')" "$l0" "$l1" "stale: negative lease_left_seconds, as the database says"
run show "$stale"
like "$OUT" "lease +expired [0-9]+s ago\\b.* $(dbtime "$stale" lease_expires_at) \\+00:00" "text: lease expired ... ago"

# ---- runs: a worker runs a failing job twice ----
flaky=$(jq_ enqueue flaky '{"f": 1}')
jq_ work --queue runq --max 2 2>"$T/work1.log"
ok $? "a worker ran the flaky job twice (--max 2)"
is "$(count job_runs "job_id = $flaky")" 2 "two runs recorded"
show_json "$flaky"
is "$(j '[d["state"], d["attempts"], d["max_attempts"]]')" '["delayed", 2, 4]' "after two retries: delayed, attempts 2 of 4"
like "$(j 'd["last_error"]')" "flaky: database busy" "last_error holds the handler's stderr"
is "$(j 'd["next_backoff_seconds"]')" 7 "next backoff: the 3rd entry of the list (7s)"
is "$(j '[(r["attempt"], r["outcome"], r["exit_status"]) for r in d["runs"]]')" \
	'[[1, "retry", "exit 75"], [2, "retry", "exit 75"]]' "runs: attempt, outcome, exit status"
like "$(j 'd["runs"][0]["error"]')" "flaky: database busy" "a run keeps its error"
like "$(j 'd["runs"][1]["worker"]')" "^[^:]+:[0-9]+:" "a run names its worker"
is "$(j 'd["runs"][0]["started_at"]')" "$(sql "SELECT DATE_FORMAT(started_at, '%Y-%m-%dT%H:%i:%s.%f+00:00') FROM job_runs WHERE job_id = $flaky ORDER BY id LIMIT 1")" \
	"a run's started_at as in the database"
run show "$flaky"
like "$OUT" "attempts +2 of 4" "text: attempts 2 of 4"
like "$OUT" "next backoff 7s \(if attempt 3 fails\)" "text: next backoff 7s"
like "$OUT" $'last error:\n.*flaky: database busy' "text: last error"
is "$(printf '%s\n' "$OUT" | sed -n '/^runs:/,$p' | awk '$1 ~ /^[0-9]+$/ { print $1, $(NF-2), $NF }' | tr '\n' ';')" \
	"1 retry 75;2 retry 75;" "text: one row per run (attempt, outcome, exit)"

# The last attempt: no backoff.
sql "UPDATE jobs SET attempts = 3 WHERE id = $flaky"
show_json "$flaky"
is "$(j 'd["next_backoff_seconds"]')" null "attempt 4 of 4 next: no backoff"
run show "$flaky"
like "$OUT" "next backoff none: attempt 4 is its last" "text: says the next attempt is the last"

# ---- dead-lettered ----
bad=$(jq_ enqueue bad '{"x": null}')
jq_ work --queue mail --max 1 2>"$T/work2.log"
is "$(count failed_jobs "id = $bad")" 1 "the bad job is dead-lettered"
show_json "$bad"
is "$RC" 0 "show of a dead-lettered job exits 0"
is "$(j '[d["state"], d["type"], d["attempts"], d["exit_status"]]')" '["failed", "bad", 1, "exit 65"]' "failed: state, type, attempts, exit status"
is "$(j 'd["error"]')" $'bad: field x missing\nmore detail' "failed: the whole error"
like "$(j 'd["reason"]')" "65" "failed: a reason naming the exit"
is "$(j 'd["failed_at"]')" "$(jtime "$bad" failed_at failed_jobs)" "failed: failed_at as in the database"
is "$(j 'd["created_at"]')" "$(jtime "$bad" created_at failed_jobs)" "failed: created_at kept"
is "$(j 'd["payload"]')" '{"x": null}' "failed: payload"
is "$(j '[(r["attempt"], r["outcome"]) for r in d["runs"]]')" '[[1, "dead"]]' "failed: its run"
is "$(j 'd["next_backoff_seconds"]')" null "failed: no next backoff"
run show "$bad"
is "$(printf '%s\n' "$OUT" | head -1)" "job $bad: failed" "text: job N: failed"
like "$OUT" $'error:\n  bad: field x missing\n  more detail' "text: the error, indented"
like "$OUT" "failed +$(dbtime "$bad" failed_at failed_jobs) \\+00:00" "text: failed at"

# ---- unknown id, usage ----
run show 999999
is "$RC" 65 "unknown id: exit 65"
like "$ERR" "no job 999999" "unknown id: 'no job N'"
is "$(lines "$ERR")" 1 "unknown id: one line"
is "$OUT" "" "unknown id: nothing on stdout"
run show abc
is "$RC" 64 "a non-numeric id is a usage error"
run show
is "$RC" 64 "no id is a usage error"

# ---- timezone = +02:00: every printed time two hours ahead of UTC ----
conf "timezone = +02:00"
l0=$(lease_left "$reserved")
plus2() {
	sql "SELECT DATE_FORMAT($2 + INTERVAL 2 HOUR, '%Y-%m-%d %H:%i:%s') FROM ${3:-jobs} WHERE id = $1"
}
show_json "$reserved"
l1=$(lease_left "$reserved")
# --json is for programs: its times stay UTC, ISO 8601 with +00:00.
is "$(j 'd["created_at"]')" "$(jtime "$reserved" created_at)" "+02:00 --json: created_at stays UTC (+00:00)"
is "$(j 'd["available_at"]')" "$(jtime "$reserved" available_at)" "+02:00 --json: available_at stays UTC"
is "$(j 'd["reserved_at"]')" "$(jtime "$reserved" reserved_at)" "+02:00 --json: reserved_at stays UTC"
is "$(j 'd["lease_expires_at"]')" "$(jtime "$reserved" lease_expires_at)" "+02:00 --json: lease_expires_at stays UTC"
is "$(j 'd["timezone"]')" "UTC" "+02:00 --json: the JSON says its times are UTC"
near "$(j 'd["lease_left_seconds"]')" "$l0" "$l1" "+02:00: relative times unchanged (lease left as the database says)"
run show "$reserved"
like "$OUT" "created +$(plus2 "$reserved" created_at) \+02:00" "+02:00 text: created, labelled +02:00"
show_json "$bad"
is "$(j 'd["failed_at"]')" "$(jtime "$bad" failed_at failed_jobs)" "+02:00 --json: failed_at (dead-letter) stays UTC"
show_json "$flaky"
is "$(j 'd["runs"][0]["started_at"]')" "$(sql "SELECT DATE_FORMAT(started_at, '%Y-%m-%dT%H:%i:%s.%f+00:00') FROM job_runs WHERE job_id = $flaky ORDER BY id LIMIT 1")" \
	"+02:00 --json: a run's started_at stays UTC"

# ---- jobs that left both tables, as their runs keep them ----
# runrow JOB ATTEMPT WORKER OUTCOME: a run row as a worker writes it.
runrow() {
	sql "INSERT INTO job_runs (job_id, queue, type, attempt, worker, started_at, duration_ms, outcome, exit_status,
	       enqueued_at, payload)
	     VALUES ($1, 'default', 'echo', $2, '$3', UTC_TIMESTAMP(6), 5, '$4', 'exit 0', UTC_TIMESTAMP(6), '{}')"
}
# Done at its second attempt; then the worker of the first, whose lease
# had passed, writes its "lost" row late: that row ends nothing.
runrow 777000 1 w1:1 interrupted
runrow 777000 2 w2:2 done
runrow 777000 1 w1:1 lost
show_json 777000
is "$(j '[d["state"], d["attempts"], d["priority"], d["max_attempts"], d["next_backoff_seconds"]]')" \
	'["done", 2, null, null, null]' \
	"done, then a late lost row: done at attempt 2; no priority, limit or backoff its runs do not keep"
run show --runs 1 777000
like "$OUT" "^job 777000: done " "show --runs 1 (the window holds the lost row only): still done"
run cancel 777000
is "$RC/$OUT" "1/job 777000: had already ended as done" "cancel says it ended done, not lost"
# Dead, retried from the dead letter, done: marked once; a run given
# back (interrupted) then cancelled is not a retry by hand.
runrow 777001 1 w1:1 dead
runrow 777001 1 w2:2 done
run show 777001
is "$(printf '%s\n' "$OUT" | grep -c 'retried by hand')" 1 "a run after a dead one is marked retried by hand"
runrow 777002 1 w1:1 interrupted
runrow 777002 1 w2:2 cancelled
run show 777002
is "$(printf '%s\n' "$OUT" | grep -c 'retried by hand')" 0 "a run given back, then cancelled: no retry by hand"
finish
