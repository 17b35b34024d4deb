#!/bin/bash
# Bad input is refused by what the input and the INI show, not by the
# database: with the server unreachable (a socket that does not exist)
# each case below exits 64 (usage) or 65 (data) with one line naming
# the problem, never 69 "database unavailable"; with the server up it
# exits the same and changes nothing.  (A usage error adds its one
# "Try 'jobq CMD --help'." line.)
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
setup cli_dbdown

HASH=$("$JOBQ" passwd --stdin <<<'an ini password' | sed 's/^password_hash = //')
write_conf <<EOC
[queue default]

[handler echo]
exec = $HANDLERS/echo.sh

[user inibob]
password_hash = $HASH

[schedule nightly]
cron = 0 3 * * *
type = echo
EOC
chmod 600 "$CONF"
DOWN=$T/down.ini
sed "s|^socket = .*|socket = $T/no-server.sock|" "$CONF" >"$DOWN"
chmod 600 "$DOWN"

# A dead-lettered job for the failed cases: a bad payload must be
# refused before the job is looked at.
ID=$(jq_ enqueue echo '{}')
sql "INSERT INTO failed_jobs (id, queue, type, payload, attempts, exception)
	SELECT id, queue, type, payload, 1, 'x' FROM jobs WHERE id = $ID; DELETE FROM jobs WHERE id = $ID"

state() { sql "CHECKSUM TABLE $(sql "SELECT GROUP_CONCAT(table_name) FROM information_schema.tables
	WHERE table_schema = DATABASE()")" | md5sum; }
BEFORE=$(state)

# bad NAME WANT REGEX STDIN ARGS...: `jobq ARGS` with STDIN exits WANT
# with REGEX on its first line, against the stopped server and the live
# one alike.
bad() {
	local name=$1 want=$2 msg=$3 input=$4 conf lines
	shift 4
	printf '%s' "$input" >"$T/in"
	for conf in "$DOWN" "$CONF"; do
		run "$JOBQ" -c "$conf" "$@" <"$T/in"
		[ "$conf" = "$DOWN" ] && where=down || where=up
		is "$RC" "$want" "$name ($where): exits $want"
		like "$(head -n 1 "$T/err")" "^jobq:? .*$msg" "$name ($where): the first line names the problem"
		lines=1
		[ "$want" = 64 ] && lines=2
		is "$NERR" "$lines" "$name ($where): $lines line(s) on stderr"
		[ "$lines" = 1 ] || like "$(tail -n 1 "$T/err")" "^Try 'jobq " "$name ($where): then where to read"
		is "$OUT" "" "$name ($where): nothing on stdout"
	done
}

S=(schedule add s1 --cron '* * * * *' --type echo)
bad "user add, short password" 65 "user add: the password is too short" short user add ann --stdin
bad "user add, no password" 65 "user add: no password on standard input" "" user add ann --stdin
bad "user passwd, short password" 65 "user passwd: the password is too short" short user passwd ann --stdin
bad "user add of a jobq.ini user" 65 "user add: user inibob is in .*: change it there" 'long enough' \
	user add inibob --stdin
bad "user role of a jobq.ini user" 65 "user role: user inibob is in " "" user role inibob admin
bad "user remove of a jobq.ini user" 65 "user remove: user inibob is in " "" user remove inibob
bad "schedule add, bad cron" 65 "schedule add s1: --cron: " "" schedule add s1 --cron 'x y' --type echo
bad "schedule add, cron that never fires" 65 "--cron: .*never fire" "" schedule add s1 --cron '0 0 31 2 *' --type echo
bad "schedule add, bad zone" 65 "--timezone: unknown time zone" "" "${S[@]}" --timezone Nowhere/Zone
bad "schedule add, unknown type" 65 "--type: unknown job type 'nosuch'" "" schedule add s1 --cron '* * * * *' \
	--type nosuch
bad "schedule add, unknown queue" 65 "--queue: unknown queue 'nosuchq'" "" "${S[@]}" --queue nosuchq
bad "schedule add, bad catch-up" 65 "--catch-up: " "" "${S[@]}" --catch-up 'latest 5x'
bad "schedule add, bad alert-after" 65 "--alert-after: bad duration" "" "${S[@]}" --alert-after 5x
bad "schedule add, bad priority" 65 "--priority: " "" "${S[@]}" --priority 99999
bad "schedule add, bad payload" 65 "--payload: not valid JSON" "" "${S[@]}" --payload '{bad'
bad "schedule add, bad overlap" 65 "--overlap: expected skip or allow" "" "${S[@]}" --overlap maybe
bad "schedule add, no cron" 65 "schedule add s1: has no cron" "" schedule add s1 --type echo
bad "schedule edit, bad cron" 65 "schedule edit s1: --cron: " "" schedule edit s1 --cron 'x'
bad "schedule edit, bad zone" 65 "schedule edit s1: --timezone: " "" schedule edit s1 --timezone Nowhere/Zone
bad "schedule edit of an INI schedule" 65 "schedule edit: 'nightly' is defined in .*; edit it there" "" \
	schedule edit nightly --cron '5 3 * * *'
bad "pause of an unknown queue" 65 "pause: unknown queue 'nosuchq' \(no \[queue nosuchq\] section" "" \
	pause nosuchq
bad "resume of a name no queue can have" 65 "resume: unknown queue 'no such'" "" resume 'no such'
bad "work, unknown queue" 65 "unknown queue 'nosuchq'" "" work -q nosuchq --once
bad "work, bad log format" 64 "work: --log-format: expected text or json" "" work --log-format xml --once
bad "failed retry, payload not JSON" 65 "failed retry $ID: payload is not valid JSON" "" \
	failed retry --payload '{bad' "$ID"
bad "failed retry, payload file not JSON" 65 "failed retry $ID: payload is not valid JSON" '[1,' \
	failed retry --payload-file - "$ID"
bad "failed retry, a bad id on stdin" 64 "failed: stdin: 'abc' is not a job id" "$ID abc" failed retry -
bad "failed forget, no ids on stdin" 64 "failed: no job IDs on stdin" "" failed forget --yes -
bad "group show, a name no group can have" 65 "group: no group 'g ' \(group name: 'g ' ends with a space" "" \
	group show 'g '
bad "group show, an empty name" 65 "group: no group ''" "" group show ''
# already judged locally: kept so
bad "enqueue, unknown type" 65 "enqueue: unknown job type 'nosuch'" "" enqueue nosuch '{}'
bad "enqueue, payload not JSON" 65 "enqueue: payload is not valid JSON" "" enqueue echo '{bad'
bad "cancel, not an id" 64 "cancel: 'abc' is not a job id" "" cancel abc
bad "prune, no --older-than" 64 "prune: --older-than DURATION is required" "" prune --yes

is "$(state)" "$BEFORE" "no table changed"
is "$(where "$ID")" "failed" "the dead-lettered job stays"

# What only the database can tell still needs it: a queue that may be
# paused though no [queue] lists it any more, a user of the table.
run "$JOBQ" -c "$DOWN" resume oldq
is "$RC" 69 "resume of a queue the INI no longer lists asks the database (69 when it is down)"
run "$JOBQ" -c "$DOWN" user passwd ann --stdin <<<'long enough'
is "$RC" 69 "user passwd with a good password asks the database for the user (69 when it is down)"

finish
