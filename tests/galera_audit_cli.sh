#!/bin/bash
# Commands that change one shared row, run through two Galera nodes at
# once: `jobq schedule disable/enable` (a row of jobq_schedule_state,
# which every node's scheduler tick writes too) and `jobq release-stale`
# (the stale jobs' rows, which claims on every node take too).  jobq's
# sessions turn off the server's own rerun of an autocommit statement
# (wsrep_retry_autocommit = 0), so the one that loses certification got
# error 1213 and exit 69.  They rerun: every command exits 0, and each
# stale job is released once.
. "$top_srcdir/tests/galera_lib.sh"
galera_setup galera_audit_cli 24960 2

for i in 1 2; do
	gconf "$T/n$i.ini" "$([ $i = 1 ] && echo "$H1,$H2" || echo "$H2,$H1")" <<EOC
[queue default]

[handler echo]
exec = $HANDLERS/echo.sh

[schedule every5]
cron = */5 * * * *
type = echo
payload = {}
EOC
done
"$JOBQ" -c "$T/n1.ini" init >/dev/null
ok $? "jobq init on the cluster"

R=25
bad=0
for ((k = 0; k < R; k++)); do
	both schedule disable every5
	both schedule enable every5
done
is "$bad" 0 "$R rounds of schedule disable, then enable, through both nodes at once: every command exits 0, silent"
is "$(gsql 2 "SELECT enabled FROM jobq_schedule_state WHERE name = 'every5'")" 1 "the schedule ends enabled"

bad=0
released=0
for ((k = 0; k < R; k++)); do
	gsql 1 "INSERT INTO jobs (queue, type, payload, available_at, reserved_at, lease_token, lease_expires_at)
		VALUES ('default', 'echo', '{}', UTC_TIMESTAMP(), UTC_TIMESTAMP(), 'a$k', UTC_TIMESTAMP() - INTERVAL 1 HOUR),
		('default', 'echo', '{}', UTC_TIMESTAMP(), UTC_TIMESTAMP(), 'b$k', UTC_TIMESTAMP() - INTERVAL 1 HOUR)"
	both release-stale
	n=$(cat "$T/o1" "$T/o2" | sed -n 's/^released \([0-9]*\) stale jobs\{0,1\}$/\1/p' | paste -sd+ | bc)
	released=$((released + ${n:-0}))
done
is "$bad" 0 "$R rounds of release-stale through both nodes at once: every command exits 0, silent"
is "$released" $((2 * R)) "between them they released each of the $((2 * R)) stale jobs once"
is "$(gsql 2 "SELECT COUNT(*) FROM jobs WHERE lease_token IS NOT NULL")" 0 "no stale lease is left"
finish
