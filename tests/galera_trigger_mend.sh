#!/bin/bash
# The Galera defect galera_schedule.sh met right after init, made on
# purpose.  On a Galera node, a statement killed while the server loads
# the triggers of jobs (KILL QUERY here; in the schedule test the abort of
# a tick's transaction that lost to another node's) leaves a copy of jobs
# in the node's table cache whose triggers count as unparsable: every
# statement later handed that copy fails with error 1064 "... has an error
# in its body" ("Query was empty", or a syntax error anywhere in the
# body).  jobq flushes the copy and reruns.  One node is enough: the kill,
# not replication, cuts the load short.
. "$top_srcdir/tests/galera_lib.sh"
galera_setup galera_trigger_mend 24800 1

gconf "$T/n1.ini" "$H1" <<EOC
[queue default]

[handler echo]
exec = $HANDLERS/echo.sh
EOC
"$JOBQ" -c "$T/n1.ini" init >/dev/null

client() { "$CLUSTER_SCRIPT" client "$CLUSTER" 1 --force "$@"; }
plain_insert() {
	gsql_raw 1 "INSERT INTO jobs (queue, type, payload) VALUES ('default', 'echo', '{}')" 2>&1
}

# One try: a client reopens jobs (a copy of its own, triggers loaded
# afresh) and inserts, again and again, while another kills its
# statements as fast as it can; some kills land while the triggers load.
for k in $(seq 1 300); do
	echo "FLUSH LOCAL TABLES jobs; INSERT INTO jobs (queue, type, payload) VALUES ('default', 'echo', '{}');"
done >"$T/victim.sql"
poisoned=0
for try in $(seq 1 40); do
	client "$DB" <"$T/victim.sql" >/dev/null 2>&1 &
	victim=$!
	id=""
	for k in $(seq 1 50); do
		id=$("$CLUSTER_SCRIPT" client "$CLUSTER" 1 -N -B -e \
			"SELECT id FROM information_schema.processlist WHERE db = '$DB' LIMIT 1")
		[ -n "$id" ] && break
		sleep 0.01
	done
	if [ -n "$id" ]; then
		for k in $(seq 1 500); do echo "KILL QUERY $id;"; done >"$T/kill.sql"
		while kill -0 "$victim" 2>/dev/null; do client <"$T/kill.sql" >/dev/null 2>&1; done
	fi
	wait "$victim"
	if plain_insert | grep -q "has an error in its body"; then
		poisoned=$try
		break
	fi
done
[ "$poisoned" != 0 ] || skip_all "40 tries left no broken copy of jobs in the table cache"
diag "a broken copy of jobs after $poisoned tries"

like "$(plain_insert)" "has an error in its body" \
	"the node keeps the broken copy: a plain INSERT still fails with 1064"
out=$("$JOBQ" -c "$T/n1.ini" enqueue echo '{"n": 1}' 2>&1)
is "$?" 0 "jobq enqueue on that node succeeds (it flushed the copy and reran)"
like "$out" "^[0-9]+$" "... and prints only the job's id"
is "$(plain_insert)" "" "afterwards a plain INSERT works again: the copy was flushed"
is "$(gsql 1 "SELECT (SELECT COUNT(*) FROM jobs) = (SELECT COALESCE(SUM(jobs), 0) FROM jobq_counts)")" 1 \
	"the trigger-kept counts still match the rows"
finish
