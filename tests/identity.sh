#!/bin/bash
# What a handler runs as, and what the worker's log looks like to a log
# shipper: user/group switching when the worker runs as root, and
# --log-format json (one JSON object per line, parsed here).
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
setup identity

write_conf <<EOC
[worker]
poll_interval = 20ms
[queue default]
[handler whoami]
exec = /bin/sh -c 'id -u; id -g; echo "\$HOME \$USER"'
user = nobody
group = nogroup
[handler plain]
exec = /bin/sh -c 'id -u'
EOC

if [ "$(id -u)" = 0 ] && getent passwd nobody >/dev/null && getent group nogroup >/dev/null; then
	id=$(jq_ enqueue whoami '{}')
	timeout 60 "$JOBQ" -c "$CONF" work --once 2>"$T/w.log"
	out=$(sql "SELECT output FROM job_runs WHERE job_id = $id")
	nobody_uid=$(getent passwd nobody | cut -d: -f3)
	nogroup_gid=$(getent group nogroup | cut -d: -f3)
	is "${out%%\\n*}" "$nobody_uid" "the handler runs as user nobody"
	like "$out" "^$nobody_uid.n$nogroup_gid" "and as group nogroup"
	like "$out" "$(getent passwd nobody | cut -d: -f6) nobody" "HOME and USER are the run user's"
	id=$(jq_ enqueue plain '{}')
	timeout 60 "$JOBQ" -c "$CONF" work --once 2>>"$T/w.log"
	is "$(sql "SELECT output FROM job_runs WHERE job_id = $id")" '0\n' "a handler without user runs as the worker (root)"
else
	for i in 1 2 3 4; do echo "ok $((TAP_N + i)) # SKIP not root, or no nobody/nogroup"; done
	TAP_N=$((TAP_N + 4))
fi

# --log-format json: every line a JSON object; outcome lines carry the
# fields of the text format.
jq_ enqueue plain '{}' >/dev/null
jq_ enqueue nosuchtype '{}' >/dev/null 2>&1 || sql "INSERT INTO jobs (queue, type, payload) VALUES ('default', 'nosuchtype', '{}')"
timeout 60 "$JOBQ" -c "$CONF" work --stop-when-empty --log-format json 2>"$T/json.log"
ok $? "work --log-format json runs"
python3 - "$T/json.log" >"$T/json.check" 2>&1 <<'PY'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
objs = [json.loads(l) for l in lines]
print("lines", len(lines))
print("all have time level msg", all({"time", "level", "msg"} <= o.keys() for o in objs))
jobs = [o for o in objs if o["msg"] == "job"]
print("outcomes", sorted(o["outcome"] for o in jobs))
print("job fields", all({"job", "type", "queue", "attempt", "outcome", "ms", "exit"} <= o.keys() for o in jobs))
print("job id is a number", all(isinstance(o["job"], (int, float)) for o in jobs))
print("started", [o["msg"] for o in objs][0], "stopped", [o["msg"] for o in objs][-1])
PY
ok $? "every log line parses as JSON"
check=$(cat "$T/json.check")
like "$check" "all have time level msg True" "each has time, level and msg"
like "$check" "outcomes \['dead', 'done'\]" "one done and one dead (unknown type) outcome line"
like "$check" "job fields True" "outcome lines carry job, type, queue, attempt, outcome, ms, exit"
like "$check" "job id is a number True" "the job id is a JSON number"
like "$check" "started worker started stopped worker stopped" "the first line says started, the last stopped"
finish
