#!/bin/bash
# jobq init: creates the database and schema, is idempotent, and is safe
# when several run at once.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
setup init
# The migrations are sql/NNN-*.sql: the latest version and how many.
LATEST=$(ls "$top_srcdir"/sql/[0-9][0-9][0-9]-*.sql | sed 's|.*/0*\([0-9]*\)-.*|\1|' | sort -n | tail -1)
NMIG=$(ls "$top_srcdir"/sql/[0-9][0-9][0-9]-*.sql | wc -l)

is "$(sql "SELECT MAX(version) FROM jobq_schema")" "$LATEST" "schema version $LATEST recorded"
tables=$(sql "SELECT GROUP_CONCAT(table_name ORDER BY BINARY table_name) FROM information_schema.tables WHERE table_schema = DATABASE()")
missing=
for t in failed_jobs job_runs jobq_audit jobq_login_failures jobq_schedule_runs jobq_schema jobq_sessions jobq_workers jobs; do
	[[ ",$tables," == *",$t,"* ]] || missing+="$t "
done
is "$missing" "" "all tables exist"

out=$(jq_ init)
ok $? "second init succeeds"
like "$out" "up to date \(version $LATEST\)" "second init says the schema is up to date"
is "$(sql "SELECT COUNT(*) FROM jobq_schema")" "$NMIG" "second init applied nothing"

# A fresh database, initialised by four processes at once.
sql_root "DROP DATABASE \`$DB\`"
pids=()
for i in 1 2 3 4; do
	jq_ init >"$T/init.$i.out" 2>&1 &
	pids+=($!)
done
fails=0
for p in "${pids[@]}"; do wait "$p" || fails=$((fails + 1)); done
is "$fails" "0" "four concurrent inits all succeed"
is "$(cat "$T"/init.*.out | grep -c 'schema created')" "1" "exactly one of them created the schema"
is "$(sql "SELECT COUNT(*) FROM jobq_schema")" "$NMIG" "each version was recorded once"

# The application contract: a plain INSERT with four columns is enough.
sql "INSERT INTO jobs (queue, type, payload, available_at) VALUES ('default', 'echo', '{}', UTC_TIMESTAMP())"
ok $? "INSERT INTO jobs (queue, type, payload, available_at) works"
is "$(sql "SELECT CONCAT(priority, ' ', attempts, ' ', created_at IS NOT NULL, ' ', lease_token IS NULL) FROM jobs")" \
	"0 0 1 1" "the other columns got their defaults"

# The reservation index exists as designed.
is "$(sql "SELECT GROUP_CONCAT(column_name ORDER BY seq_in_index) FROM information_schema.statistics WHERE table_schema = DATABASE() AND table_name = 'jobs' AND index_name = 'jobs_reserve'")" \
	"queue,priority,due_at" "jobs_reserve index is (queue, priority, due_at)"
is "$(sql "SELECT GROUP_CONCAT(column_name ORDER BY seq_in_index) FROM information_schema.statistics WHERE table_schema = DATABASE() AND table_name = 'jobs' AND index_name = 'jobs_due'")" \
	"queue,due_at,priority,waiting_on" "jobs_due index is (queue, due_at, priority, waiting_on)"
is "$(sql "SELECT GROUP_CONCAT(column_name ORDER BY seq_in_index) FROM information_schema.statistics WHERE table_schema = DATABASE() AND table_name = 'jobs' AND index_name = 'jobs_lease'")" \
	"lease_token,lease_expires_at,queue,type" "jobs_lease index is (lease_token, lease_expires_at, queue, type): held rows are counted from it alone"

# A database the configured user cannot reach: exit 69.
write_conf <<EOC
EOC
sed -i "s|^socket = .*|socket = $T/nonexistent.sock|" "$CONF"
out=$(jq_ init 2>&1)
is "$?" "69" "init against an unreachable server exits 69"
like "$out" "^jobq: connect to socket $T/nonexistent.sock: " "and says where it tried to connect"
finish
