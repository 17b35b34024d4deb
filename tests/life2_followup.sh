#!/bin/bash
# A follow-up written on descriptor 3 with an "expires_at" already past
# by the database's clock would only expire as it is enqueued (`jobq
# enqueue --expires-at` and a batch line refuse such a time): it makes
# the control channel bad, as any bad follow-up does.  Nothing of the
# channel is applied, the attempt is a handler error (retried, or here,
# max_attempts 1, dead-lettered), and the error names the line, the time
# and the database's time.  So does one whose expiry is not after its due
# time ("delay"): it would never run.  An expires_at ahead is taken as
# before.  In both handler modes.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
setup life2_followup

cat >"$T/fexp.py" <<'EOP'
#!/usr/bin/env python3
# A persistent handler: one follow-up whose expires_at is the payload's.
import jobq_handler


def handle(payload, job):
    jobq_handler.enqueue("echo", {"child": True}, expires_at=payload["at"], delay=payload.get("delay"))


jobq_handler.serve(handle)
EOP
cat >"$T/fexp_exec.py" <<'EOP'
#!/usr/bin/env python3
# The same in exec mode, written on descriptor 3 by hand.
import json, os, sys

p = json.load(sys.stdin)
line = {"enqueue": {"type": "echo", "payload": {"child": True}, "expires_at": p["at"]}}
if "delay" in p:
    line["enqueue"]["delay"] = p["delay"]
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
	past=$(jq_ enqueue fexp '{"at": "2020-01-02T03:04:05Z"}')
	ahead=$(jq_ enqueue fexp '{"at": "2099-01-02T03:04:05Z"}')
	soon=$(sql "SELECT DATE_FORMAT(UTC_TIMESTAMP() + INTERVAL 1 HOUR, '%Y-%m-%dT%H:%i:%sZ')")
	early=$(jq_ enqueue fexp "{\"at\": \"$soon\", \"delay\": \"2h\"}")
	timeout 60 "$JOBQ" -c "$CONF" work --stop-when-empty --queue default 2>"$T/w.$mode.log"
	is "$(where "$past")" failed "[$mode] a follow-up expiring in the past: the parent is a handler error (max_attempts 1: dead)"
	like "$(sql "SELECT reason FROM failed_jobs WHERE id = $past")" \
		"control channel line 1: enqueue: \"expires_at\": 2020-01-02 03:04:05(\.0+)? UTC is in the past \(the database's time: 20[0-9-]+ [0-9:]+\); the job would expire as it is enqueued" \
		"[$mode] the reason names the line, the time and the database's time"
	is "$(sql "SELECT COUNT(*) FROM jobs WHERE type = 'echo' AND expires_at < '2030-01-01'")" 0 \
		"[$mode] and no follow-up of it was enqueued"
	is "$(where "$early")" failed "[$mode] a follow-up expiring before it is due: the parent is a handler error"
	like "$(sql "SELECT reason FROM failed_jobs WHERE id = $early")" \
		"control channel line 1: enqueue: the job would expire \($(echo "${soon%Z}" | tr T ' ')\.0+ UTC\) before it is due \(.* UTC\) and never run" \
		"[$mode] the reason names the line and both times"
	is "$(where "$ahead")" gone "[$mode] a follow-up expiring ahead: the parent is done"
	is "$(sql "SELECT LEFT(expires_at, 19) FROM jobs WHERE type = 'echo'")" "2099-01-02 03:04:05" \
		"[$mode] and its follow-up waits with that expiry"
done
finish
