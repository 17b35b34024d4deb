#!/bin/bash
# Unique jobs (issue 13, item 4): `jobq enqueue --unique-key KEY` refuses
# a second job with KEY while the first is queued or running, or, with
# --unique-for, until the window has passed; exit 0, the holder's id
# printed, a note on stderr.  The database decides: four processes that
# race with the same key leave one row.  Plain INSERTs that set
# unique_key are refused by the same index.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
setup flow_unique

write_conf <<EOC
[worker]
poll_interval = 20ms

[queue default]

[handler echo]
exec = /bin/true

[handler flaky]
exec = /bin/sh -c 'exit 75'
backoff = 60,60

[handler broken]
exec = /bin/sh -c 'exit 65'
EOC

# ---- the race: 4 processes x N enqueues of one key ----
N=$(volume 400)
for p in 1 2 3 4; do
	(
		for i in $(seq $N); do
			jq_ enqueue --unique-key order:42 echo "{\"p\": $p, \"i\": $i}" 2>/dev/null
			echo "rc=$?"
		done >"$T/race.$p"
	) &
done
wait
is "$(sql "SELECT COUNT(*) FROM jobs WHERE unique_key = 'order:42'")" 1 "4 x $N concurrent enqueues of one key: one row"
is "$(sql "SELECT COUNT(*) FROM jobs")" 1 "and no other row"
id=$(sql "SELECT id FROM jobs WHERE unique_key = 'order:42'")
is "$(cat "$T"/race.* | grep -c '^rc=0$')" $((4 * N)) "every enqueue exited 0"
is "$(cat "$T"/race.* | grep -v '^rc=' | sort -u)" "$id" "every enqueue printed the one job's id"

out=$(jq_ enqueue --unique-key order:42 echo '{}' 2>"$T/err")
st=$?
is "$st/$out" "0/$id" "a refused enqueue exits 0 and prints the holder's id"
like "$(cat "$T/err")" "^jobq: enqueue: unique key 'order:42' is taken by job $id \(queued or running\); nothing enqueued$" \
	"and says so on stderr"
other=$(jq_ enqueue --unique-key order:43 echo '{}')
like "$other" '^[0-9]+$' "another key is its own job"
[ "$other" != "$id" ]
ok $? "with its own id"
like "$(jq_ show "$id")" $'\n  unique key   order:42\n' "jobq show prints the unique key"
is "$(jq_ show --json "$other" | /usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)["unique_key"])')" \
	order:43 "... and so does show --json"

# ---- done releases the key, in the outcome's transaction ----
jq_ work --stop-when-empty --quiet
is "$(sql "SELECT COUNT(*) FROM jobs")" 0 "the worker ran both jobs"
new=$(jq_ enqueue --unique-key order:42 echo '{}' 2>"$T/err")
[ -n "$new" ] && [ "$new" -gt "$id" ]
ok $? "once its job is done the key is free: a new job ($new)"
is "$(cat "$T/err")" "" "with no note"

# ---- a job waiting out a retry keeps its key; a dead one releases it ----
empty_tables
id=$(jq_ enqueue --unique-key k:flaky flaky '{}')
jq_ work --stop-when-empty --quiet
is "$(sql "SELECT attempts, lease_token IS NULL FROM jobs WHERE id = $id")" "1	1" "the flaky job waits out its backoff"
is "$(jq_ enqueue --unique-key k:flaky flaky '{}' 2>/dev/null)" "$id" "and still holds its key"
id=$(jq_ enqueue --unique-key k:broken broken '{}')
jq_ work --stop-when-empty --quiet
is "$(sql "SELECT COUNT(*) FROM failed_jobs WHERE id = $id")" 1 "the broken job is dead-lettered"
new=$(jq_ enqueue --unique-key k:broken broken '{}' 2>/dev/null)
[ -n "$new" ] && [ "$new" != "$id" ]
ok $? "and its key is free again"

# ---- --unique-for: the key outlives its job until the window passes ----
empty_tables
id=$(jq_ enqueue --unique-key w:1 --unique-for 3s echo '{}')
jq_ work --stop-when-empty --quiet
is "$(sql "SELECT COUNT(*) FROM jobs")" 0 "the windowed job is done"
out=$(jq_ enqueue --unique-key w:1 --unique-for 3s echo '{}' 2>"$T/err")
is "$?/$out" "0/$id" "within the window the key is still taken"
like "$(cat "$T/err")" "taken by job $id \(its --unique-for window is still open\)" "and the note names the window"
out=$(jq_ enqueue --unique-key w:1 echo '{}' 2>/dev/null)
[ "$out" = "$id" ]
ok $? "a job without a window is refused while the window is open too (issue 19, item 8)"
sql "DELETE FROM jobs"
sleep 3.2
new=$(jq_ enqueue --unique-key w:1 --unique-for 3s echo '{}' 2>"$T/err")
[ -n "$new" ] && [ "$new" != "$id" ] && [ ! -s "$T/err" ]
ok $? "after the window a new job takes the key"
is "$(sql "SELECT job_id FROM jobq_unique WHERE unique_key = 'w:1'")" "$new" "jobq_unique names the new holder"

# ---- plain SQL ----
empty_tables
sql "INSERT INTO jobs (queue, type, payload, available_at, unique_key) VALUES ('default', 'echo', '{}', UTC_TIMESTAMP(), 'sql:1')"
ok $? "a plain INSERT may set unique_key"
sql "INSERT INTO jobs (queue, type, payload, available_at, unique_key) VALUES ('default', 'echo', '{}', UTC_TIMESTAMP(), 'sql:1')" 2>"$T/err"
[ $? != 0 ]
ok $? "a second plain INSERT with the key is refused"
like "$(cat "$T/err")" "Duplicate entry 'sql:1'" "by the unique index"
sql "INSERT INTO jobs (queue, type, payload, available_at) VALUES ('default', 'echo', '{}', UTC_TIMESTAMP()), ('default', 'echo', '{}', UTC_TIMESTAMP())"
is "$(sql "SELECT COUNT(*) FROM jobs")" 3 "jobs without a key never clash"
sqlid=$(sql "SELECT id FROM jobs WHERE unique_key = 'sql:1'")
is "$(jq_ enqueue --unique-key sql:1 echo '{}' 2>/dev/null)" "$sqlid" "jobq enqueue sees a key set by SQL"

# ---- usage ----
jq_ enqueue --unique-for 1h echo '{}' 2>"$T/err"
is "$?" 64 "--unique-for without --unique-key is a usage error"
like "$(cat "$T/err")" "^jobq: enqueue: --unique-for goes with --unique-key" "and says so"
echo '{"type": "echo"}' | jq_ enqueue --batch --unique-key x 2>/dev/null
is "$?" 64 "--unique-key with --batch is a usage error"
jq_ enqueue --unique-key "$(printf 'a%.0s' $(seq 256))" echo '{}' 2>/dev/null
is "$?" 64 "a key over 255 bytes is a usage error"
jq_ enqueue --unique-key "$(printf 'a\tb')" echo '{}' 2>/dev/null
is "$?" 64 "a key with a control character is a usage error"
is "$(sql "SELECT COUNT(*) FROM jobs")" 3 "none of them wrote anything"

# ---- upgrade: a version 1 database with a job gains the column ----
schema_v1
sql "INSERT INTO jobs (queue, type, payload, available_at) VALUES ('default', 'echo', '{}', UTC_TIMESTAMP())"
jq_ init >/dev/null
ok $? "jobq init upgrades a version 1 schema through 008"
[ "$(sql "SELECT MAX(version) FROM jobq_schema")" -ge 8 ]
ok $? "to version 8 or later"
is "$(sql "SELECT COUNT(*), COUNT(unique_key) FROM jobs")" "1	0" "the old job is kept, without a key"
for f in "$top_srcdir"/sql/008-*.sql; do
	"$TESTDB_SCRIPT" client "$JOBQ_TESTDB" "$DB" <"$f"
	ok $? "${f##*/} runs again by hand without error (idempotent)"
done
id=$(jq_ enqueue --unique-key up:1 echo '{}')
is "$(jq_ enqueue --unique-key up:1 echo '{}' 2>/dev/null)" "$id" "unique keys work on the upgraded schema"

finish
