#!/bin/bash
# The commands given what an operator gets wrong, found by the
# command-line audit: each case is one line on stderr naming the option
# or input, the exit status jobq(1) documents, and nothing changed in
# the database.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
setup cli_audit

# The jobq tables as rows, to compare before and after a refused command.
snapshot() {
	sql "SELECT * FROM jobs ORDER BY id; SELECT * FROM failed_jobs ORDER BY id;
	     SELECT name, cron, type FROM jobq_schedules ORDER BY name;
	     SELECT * FROM jobq_schedule_state ORDER BY name"
}

# refused STATUS REGEX NAME CMD...: CMD exits STATUS with REGEX on the
# first line of stderr and leaves the tables as they were.
refused() {
	local status=$1 msg=$2 name=$3 before
	shift 3
	before=$(snapshot)
	run "$@"
	is "$RC" "$status" "$name: exits $status"
	like "$(head -n 1 <<<"$ERR")" "$msg" "$name: says what is wrong"
	is "$(snapshot)" "$before" "$name: changes nothing"
}

# ---- schedule add/edit: a cron that never fires, options by their names ----
refused 65 "^jobq: schedule add s1: --cron: '0 0 31 2 \\*' names no date that exists" \
	"schedule add of a cron that never fires" jq_ schedule add s1 --cron '0 0 31 2 *' --type echo
run jq_ check
is "$RC" "0" "... so that check has no schedule to call a configuration error"
jq_ schedule add s2 --cron '0 0 29 2 *' --type echo >/dev/null
is "$(sql "SELECT cron FROM jobq_schedules WHERE name = 's2'")" "0 0 29 2 *" "29 February exists: added"
refused 65 "^jobq: schedule edit s2: --cron: '0 0 30 2 \\*' names no date that exists" \
	"schedule edit to a cron that never fires" jq_ schedule edit s2 --cron '0 0 30 2 *'
refused 65 "^jobq: schedule add s3: --catch-up: expected none, latest" \
	"a bad --catch-up is named --catch-up" jq_ schedule add s3 --cron '* * * * *' --type echo --catch-up soon
refused 65 "^jobq: schedule edit s2: --alert-after: bad duration 'x'" \
	"a bad --alert-after is named --alert-after" jq_ schedule edit s2 --alert-after x
refused 65 "^jobq: schedule add s3: --type: unknown job type 'nosuch'" \
	"other options keep their names" jq_ schedule add s3 --cron '* * * * *' --type nosuch
refused 64 "^jobq schedule edit: unrecognized option '--bogus'" \
	"an unknown option of schedule edit names the command as typed" jq_ schedule edit s2 --bogus
is "$(tail -n 1 <<<"$ERR")" "Try 'jobq schedule --help'." "... and points to its help"
refused 64 "^jobq schedule add: option '--cron' requires an argument" \
	"a missing argument of schedule add too" jq_ schedule add s4 --cron

# ---- cron: no fire time past what a time can be (9999-12-31) ----
is "$(jq_ cron '0 0 1 1 *' --from 9999-12-31T23:59:00Z -n 2 | tail -n 1)" never "cron: none in the year 10000"
is "$(jq_ cron '59 23 31 12 *' --from 9999-12-31T23:00:00Z -n 2 | tail -n 2 | tr '\n' ' ')" "9999-12-31T23:59:00+00:00 never " \
	"cron: the last one there is, then never"

# ---- cancel by a queue only the tables know (plain SQL wrote it) ----
refused 65 "^jobq: cancel: unknown queue 'appq' \\(no \\[queue appq\\] section in .*, and no job matches\\)" \
	"cancel -q of a queue no job is in and no section names" jq_ cancel -q appq --yes
sql "INSERT INTO jobs (queue, type, payload, available_at) VALUES ('appq', 'echo', '{}', UTC_TIMESTAMP(6) + INTERVAL 1 HOUR)"
run jq_ cancel -q appq --yes
is "$RC $(sql "SELECT COUNT(*) FROM jobs WHERE queue = 'appq'")" "0 0" "with a job in it, as jobq status counts it: cancelled"

# ---- a queue named twice on the command line, as in [worker] queues ----
refused 64 "^jobq: work: -q: 'default' is listed twice" "work -q default,default" jq_ work -q default,default --once

# ---- input that cannot be read is not an empty input (exit 66) ----
mkdir -p "$T/adir"
refused 66 "^jobq: enqueue: reading the payload from stdin: Is a directory \\(nothing was written\\)" \
	"enqueue with stdin a folder" bash -c '"$@" <"$0"' "$T/adir" "$JOBQ" -c "$CONF" enqueue echo
is "$NERR" "1" "... in one line"
refused 66 "^jobq: enqueue: reading the input: Is a directory \\(nothing was written\\)" \
	"enqueue --batch with stdin a folder" bash -c '"$@" <"$0"' "$T/adir" "$JOBQ" -c "$CONF" enqueue --batch
refused 66 "^jobq: failed: reading job IDs from stdin: Is a directory; nothing done" \
	"failed retry - with stdin a folder" bash -c '"$@" <"$0"' "$T/adir" "$JOBQ" -c "$CONF" failed retry -
refused 66 "^jobq: failed retry: read $T/adir: Is a directory; nothing done" \
	"failed retry --payload-file naming a folder" jq_ failed retry --payload-file "$T/adir" 1

# ---- check: options that would be accepted and then ignored ----
refused 64 "^jobq: check: --batch goes with --explain" "check --batch without --explain" jq_ check --batch 5
refused 64 "^jobq: check: --json goes with --explain" "check --json without --explain" jq_ check --json
sql "INSERT INTO jobq_counts (queue, shard, jobs) VALUES ('default', 0, 5)
	ON DUPLICATE KEY UPDATE jobs = jobs + 5"
before=$(sql "SELECT SUM(jobs) FROM jobq_counts")
run jq_ check --explain --repair-counts
is "$RC" "64" "check --explain --repair-counts exits 64 (it repaired nothing)"
like "$ERR" "^jobq: check: --repair-counts and --explain: one at a time" "... and says why"
is "$(sql "SELECT SUM(jobs) FROM jobq_counts")" "$before" "... and changes nothing"
run jq_ check --repair-counts
is "$RC" "0" "check --repair-counts alone repairs"
is "$(sql "SELECT SUM(jobs) FROM jobq_counts")" "$(sql "SELECT COUNT(*) FROM jobs")" "... the counts"
run jq_ check --explain --batch 3 --json
is "$RC" "0" "check --explain --batch 3 --json still works"
like "$OUT" '"batch":[[:space:]]*3' "... with the batch asked for"

# ---- serve --listen is checked as [serve] listen is: a usage error ----
printf 'a-long-password\n' | jq_ user add ann --stdin >/dev/null
for a in bogus 127.0.0.1:99999 127.0.0.1:; do
	run timeout 20 "$JOBQ" -c "$CONF" serve --listen "$a"
	is "$RC" "64" "serve --listen $a exits 64"
	like "$(head -n 1 <<<"$ERR")" "^jobq: serve: --listen: expected ADDR:PORT \\(port 0-65535\\), not '$a'" \
		"... naming the option and the value"
done

# ---- schedule: tick options that would be taken and then ignored ----
refused 64 "^jobq: schedule: --window goes with --list" "a tick given --window" jq_ schedule --window 5d
refused 64 "^jobq: schedule: --json goes with --list" "a tick given --json" jq_ schedule --json
refused 64 "^jobq: schedule: --quiet goes with a tick, not --run" "--run given --quiet" jq_ schedule --run s2 --quiet
refused 64 "^jobq: schedule: --list goes alone" "--list given --quiet" jq_ schedule --list --quiet
run jq_ schedule --list --window 1d
is "$RC" "0" "--list --window still works"

# ---- failed: --older-than and --json only where they mean something ----
sql "INSERT INTO failed_jobs (id, queue, type, payload, attempts, exception, failed_at) VALUES
	(900001, 'default', 'echo', '{}', 1, 'old', UTC_TIMESTAMP() - INTERVAL 2 DAY),
	(900002, 'default', 'echo', '{}', 1, 'new', UTC_TIMESTAMP())"
refused 64 "^jobq: failed: --older-than goes with clear" \
	"forget --all --older-than (would forget the new job too)" jq_ failed forget --all --older-than 1d --yes
is "$(sql "SELECT COUNT(*) FROM failed_jobs")" "2" "... both dead jobs are still there"
refused 64 "^jobq: failed: --older-than goes with clear" "retry --all --older-than" jq_ failed retry --all --older-than 1d
refused 64 "^jobq: failed: --older-than goes with clear" "list --older-than" jq_ failed list --older-than 1d
refused 64 "^jobq: failed: --json goes with list and show" "retry --json" jq_ failed retry --json --all
run jq_ failed clear --older-than 1d --yes
is "$RC/$(sql "SELECT exception FROM failed_jobs")" "0/new" "clear --older-than 1d clears only the old one"

# ---- cancel: a filter's cancel does not wait, so --wait is refused there ----
id=$(jq_ enqueue --delay 1h echo '{}')
refused 64 "^jobq: cancel: --wait and --no-wait go with IDs, not a filter" \
	"cancel --queue --wait" jq_ cancel --queue default --wait 5m --yes
refused 64 "^jobq: cancel: --wait and --no-wait go with IDs, not a filter" \
	"cancel --type --no-wait" jq_ cancel --type echo --no-wait --yes
run jq_ cancel --no-wait "$id"
is "$RC/$OUT" "0/job $id: cancelled" "cancel --no-wait ID still works"

# ---- cancel: a bad --state is named before a filter asks for --yes ----
refused 64 "^jobq: cancel: --state: ready, delayed, waiting, reserved or stale, not 'done'" \
	"cancel --state done with no terminal and no --yes" jq_ cancel --queue default --state done
is "$NERR" "2" "... the problem and the hint, not 'pass --yes'"

# ---- a number past its bound is named with the range it must be in ----
refused 64 "^jobq: show: --runs: expected 1 to 1000000000, not '2000000000'$" \
	"show --runs 2000000000 (a positive number, over the bound)" jq_ show --runs 2000000000 1
refused 64 "^jobq: failed: --limit: expected 0 \\(all\\) to 1000000000, not '2000000000'$" \
	"failed list --limit 2000000000" jq_ failed list --limit 2000000000

# ---- enqueue --after, --after-any: the option given and the bad id named ----
refused 64 "^jobq: enqueue: --after: 'abc' is not a job id " "enqueue --after 1,abc" \
	jq_ enqueue echo '{}' --after 1,abc
refused 64 "^jobq: enqueue: --after-any: '' is not a job id " "enqueue --after-any 1,,2" \
	jq_ enqueue echo '{}' --after-any 1,,2
refused 64 "^jobq: enqueue: --after: more than 1000 job ids$" "enqueue --after with 1001 ids" \
	jq_ enqueue echo '{}' --after "$(seq -s, 1 1001)"
refused 65 "^jobq: enqueue: --after-any: job 999999 is not known " "enqueue --after-any of an unknown job" \
	jq_ enqueue echo '{}' --after-any 999999
refused 64 "^jobq: enqueue: --after-any goes with a single job without --unique-key" \
	"enqueue --after-any with --unique-key" jq_ enqueue echo '{}' --after-any 1 --unique-key k

# ---- failed retry/forget -: a bad id on stdin is named as stdin's, as given ----
refused 64 "^jobq: failed: stdin: 'abc' is not a job id$" "failed forget - with a word on stdin" \
	jq_ failed forget --yes - <<<'1 abc'
refused 64 "^jobq: failed: stdin: '1234567890123456789012345678\\.\\.\\.' is not a job id$" \
	"failed retry - with a word too long for an id: its start, not a changed word" \
	jq_ failed retry - <<<'12345678901234567890123456789012345'
refused 64 "^jobq: failed: '-' \\(read the job IDs from stdin\\) goes alone, not with IDs$" \
	"failed retry 5 - (stdin among ids)" jq_ failed retry 5 -

# ---- a job id that is no id is a usage error, database or not ----
sed "s|^socket = .*|socket = $T/no-server.sock|" "$CONF" >"$T/down.ini"
for cmd in "cancel 1 abc" "failed retry abc" "failed forget --yes 1 abc" "failed show abc" \
	"failed retry --payload {} abc" "failed retry 5 -"; do
	# shellcheck disable=SC2086
	run "$JOBQ" -c "$T/down.ini" $cmd
	is "$RC/$NERR" "64/2" "$cmd, the database down: 64, the problem and the hint (not 69)"
	like "$ERR" "^jobq: (cancel|failed): ('abc' is not a job id|'-' \\(read the job IDs from stdin\\) goes alone)" \
		"... naming the id"
done
for cmd in "failed retry" "failed show 1 2" "failed retry --payload {} 1 2" "schedule edit s2" \
	"schedule edit s2 --bogus" "schedule add s9 --cron"; do
	# shellcheck disable=SC2086
	run "$JOBQ" -c "$T/down.ini" $cmd
	is "$RC" "64" "$cmd, the database down: 64"
done

# ---- user, sessions: --json and --stdin only where they are read ----
refused 64 "^jobq: user: --json goes with list" "user add --json" jq_ user add zed --json
head -c 2000 /dev/zero | tr '\0' p >"$T/long"
run jq_ user add zed --stdin <"$T/long"
is "$RC" 65 "user add with a password over the bound: 65"
like "$(head -n 1 <<<"$ERR")" "^jobq: user add: the password is too long on standard input" "... naming the command and that it is too long"
is "$(sql "SELECT COUNT(*) FROM jobq_users WHERE username = 'zed'")" 0 "... and adding no one"
run jq_ passwd --stdin </dev/null
like "$ERR" "^jobq: passwd: no password on standard input" "passwd with nothing on stdin says so"
refused 64 "^jobq: user: --stdin goes with add and passwd" "user role --stdin" jq_ user role ann admin --stdin
refused 64 "^jobq: user: --stdin goes with add and passwd" "user remove --stdin" jq_ user remove ann --stdin
refused 64 "^jobq: sessions: --json goes with the list, not end" "sessions end --json" jq_ sessions end ann --json
is "$(sql "SELECT COUNT(*) FROM jobq_audit WHERE action = 'end-sessions'")" "0" "... which wrote no audit row"

# ---- messages name the subcommand and the option that was given ----
refused 64 "^jobq: failed: --all goes with retry and forget" "failed show --all ID" jq_ failed show --all 1
refused 64 "^jobq: failed: forget --all takes no job IDs" "failed forget --all ID" jq_ failed forget --all 1

# ---- cron: a bad --from or --timezone is named as cron's ----
run "$JOBQ" cron '0 0 * * *' --from yesterday
is "$RC/$NERR" "64/2" "cron --from yesterday: exit 64 (usage), the problem and a hint"
like "$ERR" "^jobq: cron: --from: bad time 'yesterday'" "... naming the command and the option"
run "$JOBQ" cron '0 0 * * *' --timezone Mars/Base
like "$ERR" "^jobq: cron: --timezone: unknown time zone 'Mars/Base'" "cron --timezone Mars/Base: names the command"

# ---- -c '' is a usage error, not a file named '' ----
run "$JOBQ" -c '' status
is "$RC/$NERR" "64/2" "jobq -c '' status: exit 64, the problem and a hint"
like "$ERR" "^jobq: -c: an empty file name" "... naming -c"
run "$JOBQ" status -c ''
is "$RC" "64" "jobq status -c '': exit 64"
like "$ERR" "^jobq: status: -c: an empty file name" "... naming the command and -c"

# ---- unknown ids: one line that names each of them ----
refused 65 "^jobq: no failed job 999998, 999999; nothing done$" "failed retry of two unknown ids" \
	jq_ failed retry 999999 999998
is "$NERR" "1" "... in one line"
refused 65 "^jobq: cancel: no job 999999; nothing cancelled$" "cancel of an unknown id" jq_ cancel 999999
is "$NERR" "1" "... in one line"

# ---- enqueue: every message under its command; an empty stdin is named ----
refused 65 "^jobq: enqueue: payload is empty " "enqueue of an empty stdin" \
	jq_ enqueue echo </dev/null
refused 65 "^jobq: enqueue: unknown job type 'nosuch' " "enqueue of an unknown type" jq_ enqueue nosuch '{}'
refused 65 "^jobq: enqueue: line 2: " "--batch with a bad line" \
	jq_ enqueue --batch <<<'{"type": "echo"}
{"type": "echo", "payload": {bad'
like "$(tail -n 1 <<<"$ERR")" "^jobq: enqueue: 1 bad line; nothing was enqueued$" "... and its summary"

# ---- the scheduler's test hook, set to no time: a configuration error
# that names it and its value, before anything is done ----
for cmd in "schedule --quiet" "schedule --run s2" status "enqueue echo {}"; do
	# shellcheck disable=SC2086
	refused 78 "^jobq: JOBQ_SCHEDULER_NOW \\(a test hook in the environment\\): bad time 'garbage' " \
		"JOBQ_SCHEDULER_NOW=garbage, $cmd" env JOBQ_SCHEDULER_NOW=garbage "$JOBQ" -c "$CONF" $cmd
	is "$NERR" "1" "... in one line"
done

finish
