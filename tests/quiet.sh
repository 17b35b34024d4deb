#!/bin/bash
# Log levels: --quiet (global or on work) and log_level = in [worker] keep
# a cron run on an empty queue silent; -v adds detail; warnings still show.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
setup quiet

# The crontab line, on an empty queue: nothing on stdout or stderr.
out=$(jq_ work --max-time 55 --stop-when-empty --quiet 2>&1)
ok $? "work --quiet on an empty queue exits 0"
is "$out" "" "and prints nothing"
out=$("$JOBQ" --quiet -c "$CONF" work --max-time 55 --stop-when-empty 2>&1)
is "$out" "" "--quiet as a global option prints nothing either"

# Without --quiet the same run says it started and stopped.
out=$(jq_ work --max-time 55 --stop-when-empty 2>&1)
like "$out" "worker started" "without --quiet the worker logs its start"

# A job that fails is still reported under --quiet: cron mails it.
cat >>"$CONF" <<EOC
[handler fail]
exec = /bin/false
max_attempts = 1
EOC
jq_ enqueue fail '{}' >/dev/null
out=$(jq_ work --stop-when-empty --quiet 2>&1)
like "$out" "warn +job .*outcome=dead" "a dead-lettered job is logged under --quiet"
is "$(echo "$out" | grep -c 'info')" "0" "and no info line is"

# A run that reaches --max-time with a backlog hands back the jobs it
# had reserved ahead, unstarted: that is no failure, and under --quiet
# it mails nobody (each was a warning line, every minute of a backlog).
cat >>"$CONF" <<EOC
[handler nap]
exec = /bin/sleep 0.05
EOC
for i in $(seq 400); do echo '{"type": "nap"}'; done | jq_ enqueue --batch >/dev/null
out=$(jq_ work --max-time 1 --stop-when-empty --quiet 2>&1)
is "$?/$out" "0/" "work --max-time 1 --quiet over a backlog: exit 0, nothing printed"
is "$(sql "SELECT COUNT(*) FROM jobs WHERE lease_token IS NOT NULL")" 0 "... and no job is left reserved"
out=$(jq_ work --max-time 1 --stop-when-empty 2>&1)
like "$(grep -m1 'outcome=interrupted' <<<"$out")" "info +job .*exit=\"not started\"" \
	"without --quiet a job handed back unstarted is an info line"
ok "$(grep -cE 'attempt=[0-9]+/0 ' <<<"$out")" "... naming its attempts out of the handler's limit, not of 0"
sql "DELETE FROM jobs WHERE type = 'nap'"

# log_level = warn in [worker] does the same; -v on the command line wins.
sed -i 's/^poll_interval = 20ms$/poll_interval = 20ms\nlog_level = warn/' "$CONF"
out=$(jq_ work --stop-when-empty 2>&1)
is "$out" "" "log_level = warn in [worker] silences a run on an empty queue"
out=$(jq_ work --stop-when-empty -v 2>&1)
like "$out" "worker started" "-v on the command line beats log_level = warn"
out=$("$JOBQ" -v -c "$CONF" work --stop-when-empty 2>&1)
like "$out" "worker started" "-v as a global option beats it too"

# -v also logs each handler's start, so the order jobs were taken in shows.
sed -i 's/^log_level = warn$/log_level = info/' "$CONF"
jq_ enqueue echo '{}' >/dev/null
out=$(jq_ work --stop-when-empty -v 2>&1)
like "$out" "job started.*job=[0-9]+ .*type=echo .*pid=[0-9]+" "-v logs a line when a handler starts"
like "$(echo "$out" | grep -n 'job started\|outcome=done' | head -1)" "job started" "before the line of its outcome"
out=$(jq_ enqueue echo '{}' >/dev/null; jq_ work --stop-when-empty 2>&1)
is "$(echo "$out" | grep -c 'job started')" "0" "without -v there is no start line"
sed -i 's/^log_level = info$/log_level = warn/' "$CONF"

# A bad level is a config error naming the line.
sed -i 's/^log_level = warn$/log_level = loud/' "$CONF"
out=$(jq_ work --stop-when-empty 2>&1)
is "$?" "78" "log_level = loud exits 78"
like "$out" "jobq.ini:[0-9]+: log_level: expected debug, info, warn or error, not 'loud'" "naming the line and the value"
finish
