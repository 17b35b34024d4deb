#!/bin/bash
# Rough edges of the CLI: `jobq help`, failed list paging (--limit,
# keyset --after/--before, the footer), ISO 8601 Z times in --json.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
setup rough

# ---- jobq help ----
out=$("$JOBQ" help)
ok $? "jobq help exits 0"
like "$out" "Commands:.*failed.*help" "and lists the commands, help among them"
is "$("$JOBQ" help init)" "$("$JOBQ" init --help)" "jobq help init is init --help"
is "$("$JOBQ" help help)" "$("$JOBQ" help)" "jobq help help (help is listed as a command) is the list"
is "$("$JOBQ" help --help)" "$("$JOBQ" help)" "and so is jobq help --help"
out=$("$JOBQ" help nosuch 2>&1)
is "$?" "64" "jobq help nosuch exits 64"
like "$out" "unknown command 'nosuch'" "naming it"
out=$("$JOBQ" help enqueue extra 2>&1)
is "$?" "64" "jobq help enqueue extra exits 64"
like "$out" "one command at a time, not 'extra' too" "naming the word too many"

# ---- failed list: pages of 50, newest first ----
# 120 dead-lettered jobs, one a second apart: job 1 is the oldest.
sql "INSERT INTO failed_jobs (id, queue, type, payload, exception, failed_at)
     SELECT n, 'default', 'echo', '{}', CONCAT('boom ', n, '\nsecond line'),
            UTC_TIMESTAMP(6) - INTERVAL (1000 - n) SECOND
     FROM (SELECT a.i * 10 + b.i + 1 AS n FROM
           (SELECT 0 i UNION SELECT 1 UNION SELECT 2 UNION SELECT 3 UNION SELECT 4 UNION SELECT 5
            UNION SELECT 6 UNION SELECT 7 UNION SELECT 8 UNION SELECT 9 UNION SELECT 10 UNION SELECT 11) a,
           (SELECT 0 i UNION SELECT 1 UNION SELECT 2 UNION SELECT 3 UNION SELECT 4 UNION SELECT 5
            UNION SELECT 6 UNION SELECT 7 UNION SELECT 8 UNION SELECT 9) b) t"
is "$(sql "SELECT COUNT(*) FROM failed_jobs")" "120" "120 dead-lettered jobs"
ids() { awk '$1 ~ /^[0-9]+$/ && $2 != "failed" { print $1 }' | tr '\n' ' ' | sed 's/ $//'; }
out=$(jq_ failed)
ok $? "failed exits 0"
is "$(printf '%s\n' "$out" | ids)" "$(seq -s ' ' 120 -1 71)" "the first page: the 50 newest"
is "$(printf '%s\n' "$out" | tail -1)" "50 failed jobs shown; 70 older: jobq failed --after 71" \
	"the footer says how many more and how to see them"
out=$(jq_ failed --after 71)
is "$(printf '%s\n' "$out" | ids)" "$(seq -s ' ' 70 -1 21)" "--after 71: the next 50"
is "$(printf '%s\n' "$out" | tail -1)" \
	"50 failed jobs shown; 50 newer: jobq failed --before 70; 20 older: jobq failed --after 21" \
	"a middle page points both ways"
out=$(jq_ failed --after 21)
is "$(printf '%s\n' "$out" | ids)" "$(seq -s ' ' 20 -1 1)" "--after 21: the last 20"
is "$(printf '%s\n' "$out" | tail -1)" "20 failed jobs shown; 100 newer: jobq failed --before 20" \
	"the last page points back only"
out=$(jq_ failed --before 70)
is "$(printf '%s\n' "$out" | ids)" "$(seq -s ' ' 120 -1 71)" "--before 70: the first page again, newest first"
out=$(jq_ failed --limit 7 --before 100)
is "$(printf '%s\n' "$out" | ids)" "107 106 105 104 103 102 101" "--limit 7 --before 100: the 7 just newer"
out=$(jq_ failed --limit 0)
is "$(printf '%s\n' "$out" | ids | wc -w)" "120" "--limit 0: all of them"
is "$(printf '%s\n' "$out" | tail -1)" "120 failed jobs" "and the plain total"
out=$(jq_ failed -t nosuch 2>"$T/err")
is "$out" "0 failed jobs" "a filter that matches nothing"
like "$(cat "$T/err")" "^jobq: note: no \[handler nosuch\]" "of a type no section names: noted as a possible typo"
out=$(jq_ failed --after 999 2>&1)
is "$?" "65" "--after an unknown job exits 65"
like "$out" "no failed job 999" "naming it"
out=$(jq_ failed --after 5 --before 9 2>&1)
is "$?" "64" "--after with --before is a usage error"
out=$(jq_ failed retry --after 5 2>&1)
is "$?" "64" "--after goes with list only"
like "$(jq_ failed --limit 3 | sed -n 2p)" "^120 .* boom 120 *$" "the list shows the first line of the error only"

# ---- --json: the same page; times are ISO 8601 UTC with +00:00 ----
jq_ failed --json >"$T/out.json" 2>"$T/err"
is "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$T/out.json")" "50" \
	"--json: a page of 50"
is "$(cat "$T/err")" "jobq: failed: 70 more: --after 71 for the next page, --limit 0 for all" \
	"and stderr says there is more"
got=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[0]["failed_at"])' "$T/out.json")
is "$got" "$(sql "SELECT DATE_FORMAT(failed_at, '%Y-%m-%dT%H:%i:%s.%f+00:00') FROM failed_jobs WHERE id = 120")" \
	"--json failed_at is ISO 8601 with its offset"
jq_ show --json 120 >"$T/show.json"
like "$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["failed_at"], d["created_at"], d["timezone"])' "$T/show.json")" \
	"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+\\+00:00 [0-9-]+T[0-9:.]+\\+00:00 UTC$" "show --json: times with +00:00, timezone UTC"
out=$(jq_ status --json)
is "$(printf '%s' "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["queues"]["default"]["oldest_ready_seconds"])')" \
	"None" "status --json: oldest_ready_seconds is null when nothing is ready"

# ---- show: the last 20 runs, --runs N, --all-runs; a hand retry said ----
# Job 120 (dead-lettered above) ran 30 times: attempts 1..25, the last
# dead, then, after a `failed retry`, 1..5 again.
sql "INSERT INTO job_runs (job_id, queue, type, attempt, worker, started_at, duration_ms, outcome, exit_status)
     SELECT 120, 'default', 'echo', IF(n <= 25, n, n - 25), 'h:1:x', UTC_TIMESTAMP(6) - INTERVAL (100 - n) SECOND,
            n, IF(n = 25, 'dead', 'retry'), 'exit 1'
     FROM (SELECT a.i * 10 + b.i + 1 AS n FROM
           (SELECT 0 i UNION SELECT 1 UNION SELECT 2) a,
           (SELECT 0 i UNION SELECT 1 UNION SELECT 2 UNION SELECT 3 UNION SELECT 4 UNION SELECT 5
            UNION SELECT 6 UNION SELECT 7 UNION SELECT 8 UNION SELECT 9) b) t ORDER BY n"
runs_ms() { awk '/^  [0-9]+ / { print $(NF-3) }' | tr '\n' ' ' | sed 's/ $//'; }
out=$(jq_ show 120)
is "$(printf '%s\n' "$out" | runs_ms)" "$(seq -s ' ' 11 30)" "show: the last 20 runs, oldest first"
like "$out" "runs \(the last 20 of 30; --runs N or --all-runs for more\):" "and says there are more"
is "$(printf '%s\n' "$out" | grep -c 'retried by hand')" "1" "the restart of attempts at 1 is marked once"
like "$out" $'  25 [^\n]*\n  -- retried by hand \(jobq failed retry\)[^\n]*\n  1 ' "between attempt 25 and attempt 1"
is "$(jq_ show --runs 3 120 | runs_ms)" "28 29 30" "--runs 3: the last three"
is "$(jq_ show --all-runs 120 | runs_ms | wc -w)" "30" "--all-runs: all 30"
# Options that contradict each other are refused, not settled by order.
for args in "show --runs 1 --all-runs 120" "cancel --no-wait --wait 5s 120" "work --once --max 3"; do
	# shellcheck disable=SC2086
	out=$(jq_ $args 2>&1)
	is "$?" 64 "$args: exit 64"
	like "$out" "not both" "$args: saying which two"
done
like "$(jq_ show --all-runs 120)" $'\nruns:\n' "and no 'last N of' note"
jq_ show --json --runs 4 120 >"$T/show.json"
is "$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["runs_total"], [r["duration_ms"] for r in d["runs"]])' "$T/show.json")" \
	"30 [27, 28, 29, 30]" "--json: the last runs and runs_total"
out=$(jq_ show --runs 0 120 2>&1)
is "$?" "64" "--runs 0 is a usage error"

# ---- failed forget: ids on stdin, --all with filters ----
sql "UPDATE failed_jobs SET type = 'other' WHERE id BETWEEN 101 AND 110"
seq 1 40 >"$T/ids"
out=$(jq_ failed forget - <"$T/ids" 2>&1)
is "$?" "64" "forget - without --yes (no terminal) is refused"
is "$(sql "SELECT COUNT(*) FROM failed_jobs")" "120" "and nothing is deleted"
out=$(jq_ failed forget --yes - <"$T/ids" 2>&1)
ok $? "forget --yes - reads the ids from stdin"
is "$out" "forgot 40 jobs" "and says how many"
is "$(sql "SELECT MIN(id), COUNT(*) FROM failed_jobs")" "41	80" "those 40 are gone"
printf '41 42\n43\n\n999\n' | jq_ failed forget --yes - >/dev/null 2>"$T/err"
is "$?" "65" "an unknown id among them: exit 65"
is "$(sql "SELECT COUNT(*) FROM failed_jobs WHERE id IN (41, 42, 43)")" "3" "and nothing is deleted"
out=$(printf 'x1\n' | jq_ failed forget --yes - 2>&1)
is "$?" "64" "a token that is no id: exit 64"
out=$(jq_ failed forget --all --type other --dry-run)
is "$out" "would forget 10 jobs" "forget --all --type --dry-run counts"
out=$(jq_ failed forget --all --type other 2>&1)
is "$?" "64" "forget --all without --yes (no terminal) is refused"
out=$(jq_ failed forget --all --type other --yes 2>&1)
is "$out" $'jobq: note: no [handler other] in '"$CONF"$' (a type only old jobs may have, or a typo?)\nforgot 10 jobs' \
	"forget --all --type other --yes: forgot 10, with a note that the type is not configured"
is "$(sql "SELECT COUNT(*) FROM failed_jobs WHERE type = 'other'")/$(sql "SELECT COUNT(*) FROM failed_jobs")" "0/70" \
	"only those 10"
out=$(jq_ failed retry --all --type nosuch 2>&1)
like "$out" "note: no \[handler nosuch\].*"$'\n'"retried 0 jobs" "retry --all --type nosuch notes the unknown type"
out=$(jq_ failed retry --type echo 5 2>&1)
is "$?" "64" "--type without --all is a usage error for retry"

# ---- workers: columns never run together ----
sql "INSERT INTO jobq_workers (id, host, pid, queues, concurrency, heartbeat_ms, started_at, last_seen_at)
     VALUES ('oldhost:777:dead', 'oldhost', 777, 'mail', 2, 10000,
             UTC_TIMESTAMP(6) - INTERVAL 30000 SECOND, UTC_TIMESTAMP(6) - INTERVAL 10900 SECOND)"
out=$(jq_ workers)
line=$(printf '%s\n' "$out" | grep '^oldhost:777:dead')
like "$line" "^oldhost:777:dead +gone +2  5h18m[0-9]*s? +3h1m[0-9]+s ago +0 +0 +0  mail " \
	"a gone worker's line: uptime and 'seen ... ago' in columns of their own"
is "$(printf '%s\n' "$out" | head -1 | awk '{ print $4, $5 }')" "UPTIME SEEN" "the header names them"

# ---- show: payloads without tabs, short durations in tenths ----
id=$(jq_ enqueue --delay 5s echo '{"a": {"b": "x\ty"}}')
out=$(jq_ show "$id")
is "$(printf '%s' "$out" | tr -cd '\t' | wc -c)" "0" "show prints no tab characters"
like "$out" $'\n  +"a": \\{\n  +"b": "x\\\\ty"' "the payload is indented with blanks, a tab in a string stays \\t"
like "$out" "available .*in [0-9]\.[0-9]s\)?" "a delay under 10s reads like 4.9s, not 4s993ms"

# ---- the demo shows commands as they can be pasted ----
# shellcheck source=/dev/null
. <(sed -n '/^shquote()/,/^}/p' "$top_srcdir/contrib/demo")
args=(enqueue echo '{"event": "signup", "n": 1}' "it's" '$HOME' 'a\b' --delay 5s '' 'x*')
eval "got=($(shquote "${args[@]}"))"
is "$(printf '[%s]' "${got[@]}")" "$(printf '[%s]' "${args[@]}")" "demo: a shown command, pasted into a shell, gives the same words"
is "$(shquote enqueue echo --delay 5s)" "enqueue echo --delay 5s" "plain words stay unquoted"
finish
