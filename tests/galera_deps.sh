#!/bin/bash
# Dependencies on a Galera cluster written through two nodes (issue 23):
# a job enqueued --after X through node 1 puts X's row in its write set,
# also when X is waited for already (has_waiters unchanged), so that a
# transaction ending X on node 2 that began before the new job's rows
# arrived cannot commit beside it: it fails (a deadlock, which the
# worker reruns, then seeing the new waiter), and the new job never waits
# for good.  Through both paths: `jobq enqueue --after` and a follow-up
# on descriptor 3 that waits for X.
. "$top_srcdir/tests/galera_lib.sh"
galera_setup galera_deps 24840 2

for via in enqueue follow; do
	gconf "$T/n1.ini" "$H1" <<EOC
[worker]
poll_interval = 20ms

[queue default]

[handler step]
exec = $top_srcdir/tests/handlers/deps_log.py $T/log
env.PYTHONPATH = $HANDLERS
EOC
	[ $via = follow ] || "$JOBQ" -c "$T/n1.ini" init >/dev/null
	gsql 1 "DELETE FROM jobs; DELETE FROM jobq_deps"
	# X, already waited for by W (has_waiters 3, then another makes it 2 or 1).
	x=$("$JOBQ" -c "$T/n1.ini" enqueue --delay 1h step '{"name": "X"}')
	w=$("$JOBQ" -c "$T/n1.ini" enqueue --after "$x" step '{"name": "W"}')
	w2=$("$JOBQ" -c "$T/n1.ini" enqueue --after "$x,$w" step '{"name": "W2"}')
	is "$(gsql 2 "SELECT has_waiters FROM jobs WHERE id = $x")" 1 "[$via] X is waited for already (has_waiters 1)"
	# On node 2, a transaction that ends X, begun first: it has taken X's
	# row, and the new job's rows have not reached it.
	"$CLUSTER_SCRIPT" client "$CLUSTER" 2 -N -B -n "$DB" -e \
		"SET SESSION wsrep_sync_wait = 0; BEGIN; DELETE FROM jobs WHERE id = $x; SELECT 'deleted'; DO SLEEP(4); COMMIT; SELECT 'committed'" \
		>"$T/end.out" 2>"$T/end.err" &
	ender=$!
	for ((i = 0; i < 100; i++)); do grep -q deleted "$T/end.out" && break; sleep 0.1; done
	if [ $via = enqueue ]; then
		f=$("$JOBQ" -c "$T/n1.ini" enqueue --after "$x" step '{"name": "F"}')
		rc=$?
	else
		p=$("$JOBQ" -c "$T/n1.ini" enqueue step "{\"name\": \"P\", \"follow\": [{\"type\": \"step\", \"after\": [$x], \"payload\": {\"name\": \"F\"}}]}")
		timeout 60 "$JOBQ" -c "$T/n1.ini" work --stop-when-empty 2>"$T/work.log"
		rc=$?
		f=$(gsql 1 "SELECT id FROM jobs WHERE JSON_VALUE(payload, '\$.name') = 'F'")
	fi
	is "$rc" 0 "[$via] the job that waits for X is enqueued through node 1 meanwhile"
	wait $ender
	is "$(grep -c committed "$T/end.out")" 0 "[$via] the transaction that ended X on node 2 cannot commit beside it"
	like "$(cat "$T/end.err")" "Deadlock" "[$via] it fails as a deadlock, which a worker reruns"
	is "$(gsql 2 "SELECT CONCAT((SELECT COUNT(*) FROM jobs WHERE id = $x), ' ', (SELECT waiting_on FROM jobs WHERE id = $f))")" "1 1" \
		"[$via] X is still there, and the new job waits for it"
	is "$(gsql 2 "SELECT COUNT(*) FROM jobq_deps WHERE after_id = $x AND job_id = $f")" 1 \
		"[$via] linked to it, so that X's end, rerun, releases it"
	is "$(gsql 2 "SELECT has_waiters FROM jobs WHERE id = $x")" 1 "[$via] X's has_waiters is as it was"
done
finish
