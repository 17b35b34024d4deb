#!/bin/bash
# A follow-up written on descriptor 3 with an "expires_at" already past
# by the database's clock would only expire as it is enqueued (`jobq
# enqueue --expires-at` and a batch line refuse such a time): it makes
# the control channel bad, as any bad follow-up does.  Nothing of the
# channel is applied, the attempt is a handler error (retried, or here,
# max_attempts 1, dead-lettered), and the error names the line, the time
# and the database's time.  So does one whose expiry is not after its due
# time ("delay"), or an "at" with an "expires_in" that ends before it
# (held against the database's clock as `jobq enqueue --at --expires-in`
# is): it would never run.  An expiry ahead of the due time is taken as
# before.  In both handler modes.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
setup life2_followup

cat >"$T/fexp.py" <<'EOP'
#!/usr/bin/env python3
# A persistent handler: one follow-up with the payload's fields ("f"),
# tagged with the payload's "tag".
import jobq_handler


def handle(payload, job):
    jobq_handler.enqueue("echo", {"child": payload["tag"]}, **payload["f"])


jobq_handler.serve(handle)
EOP
cat >"$T/fexp_exec.py" <<'EOP'
#!/usr/bin/env python3
# The same in exec mode, written on descriptor 3 by hand.
import json, os, sys

p = json.load(sys.stdin)
line = {"enqueue": dict(p["f"], type="echo", payload={"child": p["tag"]})}
os.write(3, (json.dumps(line) + "\n").encode())
EOP
chmod +x "$T/fexp.py" "$T/fexp_exec.py"

for mode in exec persistent; do
	empty_tables
	if [ "$mode" = exec ]; then
		handler="exec = $T/fexp_exec.py"
	else
		handler="exec = $T/fexp.py
mode = persistent
env.PYTHONPATH = $HANDLERS"
	fi
	write_conf <<EOC
[worker]
poll_interval = 20ms

[queue default]
[queue later]

[handler echo]
exec = $HANDLERS/echo.sh
queue = later

[handler fexp]
$handler
max_attempts = 1
EOC
	past=$(jq_ enqueue fexp '{"tag": "past", "f": {"expires_at": "2020-01-02T03:04:05Z"}}')
	ahead=$(jq_ enqueue fexp '{"tag": "ahead", "f": {"expires_at": "2099-01-02T03:04:05Z"}}')
	soon=$(sql "SELECT DATE_FORMAT(UTC_TIMESTAMP() + INTERVAL 1 HOUR, '%Y-%m-%dT%H:%i:%sZ')")
	early=$(jq_ enqueue fexp "{\"tag\": \"early\", \"f\": {\"expires_at\": \"$soon\", \"delay\": \"2h\"}}")
	# due in 1 hour, expiring 30 minutes after the follow-up is written
	at_in=$(jq_ enqueue fexp "{\"tag\": \"at_in\", \"f\": {\"at\": \"$soon\", \"expires_in\": \"30m\"}}")
	at_in_ok=$(jq_ enqueue fexp "{\"tag\": \"at_in_ok\", \"f\": {\"at\": \"$soon\", \"expires_in\": \"2h\"}}")
	timeout 60 "$JOBQ" -c "$CONF" work --stop-when-empty --queue default 2>"$T/w.$mode.log"
	is "$(where "$past")" failed "[$mode] a follow-up expiring in the past: the parent is a handler error (max_attempts 1: dead)"
	like "$(sql "SELECT reason FROM failed_jobs WHERE id = $past")" \
		"control channel line 1: enqueue: \"expires_at\": 2020-01-02 03:04:05(\.0+)? UTC is in the past \(the database's time: 20[0-9-]+ [0-9:]+\); the job would expire as it is enqueued" \
		"[$mode] the reason names the line, the time and the database's time"
	is "$(sql "SELECT COUNT(*) FROM jobs WHERE type = 'echo' AND payload LIKE '%\"past\"%'")" 0 \
		"[$mode] and no follow-up of it was enqueued"
	is "$(where "$early")" failed "[$mode] a follow-up expiring before it is due: the parent is a handler error"
	like "$(sql "SELECT reason FROM failed_jobs WHERE id = $early")" \
		"control channel line 1: enqueue: the job would expire \($(echo "${soon%Z}" | tr T ' ')\.0+ UTC\) before it is due \(.* UTC\) and never run" \
		"[$mode] the reason names the line and both times"
	is "$(where "$at_in")" failed "[$mode] a follow-up at a time after its expires_in ends: the parent is a handler error"
	like "$(sql "SELECT reason FROM failed_jobs WHERE id = $at_in")" \
		"control channel line 1: enqueue: the job would expire \(20[0-9-]+ [0-9:.]+ UTC\) before it is due \($(echo "${soon%Z}" | tr T ' ')(\.0+)? UTC\) and never run" \
		"[$mode] the reason names the line and both times"
	is "$(sql "SELECT COUNT(*) FROM jobs WHERE type = 'echo' AND payload LIKE '%at_in\"%'")" 0 \
		"[$mode] and no follow-up of it was enqueued"
	is "$(where "$ahead")" gone "[$mode] a follow-up expiring ahead: the parent is done"
	is "$(sql "SELECT LEFT(expires_at, 19) FROM jobs WHERE type = 'echo' AND payload LIKE '%\"ahead\"%'")" \
		"2099-01-02 03:04:05" "[$mode] and its follow-up waits with that expiry"
	is "$(where "$at_in_ok")/$(sql "SELECT COUNT(*) FROM jobs WHERE type = 'echo' AND payload LIKE '%at_in_ok%'
		AND expires_at > available_at")" "gone/1" \
		"[$mode] a follow-up at a time before its expires_in ends: the parent is done, its follow-up waits"
done
finish
