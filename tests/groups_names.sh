#!/bin/bash
# Group names as jobq.1 promises them (--group): no control characters,
# C1 ones (U+0080 to U+009F, which a terminal may read as the start of an
# escape sequence when `jobq group show` prints the name) included, from
# --group and from a follow-up's "group" on descriptor 3 alike: one line,
# exit 64 (a handler error for a follow-up), nothing written.  Characters
# just past them (U+00A0, U+2028) are names like any other.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
setup groups_names

# The handler writes its payload, one JSON line, to descriptor 3.
cat >"$T/fd3.sh" <<'EOS'
#!/bin/sh
cat >&3
EOS
chmod 755 "$T/fd3.sh"
write_conf <<EOC
[worker]
poll_interval = 20ms
max_attempts = 1

[queue default]

[handler step]
exec = /bin/true

[handler say]
exec = $T/fd3.sh
EOC

n0=$(sql "SELECT CONCAT(COUNT(*), '/', (SELECT COUNT(*) FROM jobq_groups)) FROM jobs")
for c in 0085 009b 0080 009f; do
	name=$(printf "a\\u${c}b")
	out=$(echo '{"type": "step"}' | jq_ enqueue --batch --group "$name" 2>&1)
	is "$?/$(echo "$out" | head -1)" "64/jobq: enqueue: --group: group name: control character at byte 1" \
		"--group with U+$c (a C1 control character): exit 64, one line"
	echo '{"type": "step"}' | jq_ enqueue --batch --dry-run --group "$name" >/dev/null 2>&1
	is "$?" 64 "a dry run refuses U+$c too"
done
is "$(sql "SELECT CONCAT(COUNT(*), '/', (SELECT COUNT(*) FROM jobq_groups)) FROM jobs")" "$n0" \
	"the refused names wrote nothing"
for c in 00a0 2028; do
	name=$(printf "a\\u${c}b")
	echo '{"type": "step"}' | jq_ enqueue --batch --group "$name" >/dev/null 2>&1
	is "$?/$(sql "SELECT COUNT(*) FROM jobq_groups WHERE name = '$name'")" "0/1" "U+$c is no control character: group made"
done

# A follow-up's "group" is checked the same way: a handler error naming
# the line, and the job does not end done (no follow-up, no group).
name=$(printf 'f\u009bx')
id=$(jq_ enqueue say "{\"enqueue\": {\"type\": \"step\", \"group\": \"$name\", \"payload\": {}}}")
timeout 60 "$JOBQ" -c "$CONF" work --stop-when-empty 2>"$T/w.log"
is "$(sql "SELECT CONCAT_WS('|', outcome, error) FROM job_runs WHERE job_id = $id")" \
	"dead|jobq: control channel line 1: enqueue: group name: control character at byte 1" \
	"a follow-up with a C1 control character in its group: a handler error, one line naming it"
is "$(sql "SELECT COUNT(*) FROM jobs")/$(sql "SELECT COUNT(*) FROM jobq_groups WHERE name LIKE 'f%'")" "0/0" \
	"no follow-up and no group were written"
finish
