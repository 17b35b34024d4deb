#!/bin/bash
# Retrying a dead dependency re-opens what its death cancelled (park.c)
# -- where that meets other things at the same moment, each moment
# forced (a row lock held in a client session, the proxy holding a
# worker's statement back, kill -9), not hoped for:
#   - two: another dependency of the job comes back from the dead letter
#     (a second `failed retry`) while the retry weighs the job (ended.c):
#     the job waits again, not parked under a job in the queue;
#   - enqueue: a job enqueued --after a job being retried waits for it,
#     not cancelled as if it were still dead;
#   - forget: the cancelled job ends while the forget of its dead
#     dependency drops what is parked: its waiter is not left parked
#     under a copy that is gone;
#   - killed: the worker that claimed the cancelled job to finalize it is
#     killed -9; the job re-opened in place starts at attempt 1.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
setup reopen_race
LOG=$T/log

cat >"$T/step.sh" <<'EOF'
#!/bin/sh
p=$(cat)
echo "start $JOBQ_JOB_ID $p attempt $JOBQ_ATTEMPT" >>"$LOG"
case $p in
*once*) [ -e "$T/seen.$JOBQ_JOB_ID" ] || { touch "$T/seen.$JOBQ_JOB_ID"; exit 1; } ;;
esac
exit 0
EOF
sed -i "s|\$LOG|$LOG|; s|\$T/|$T/|g" "$T/step.sh"
chmod 755 "$T/step.sh"

conf() {
	write_conf <<EOC
[worker]
poll_interval = 20ms
reserve_ttl = 2s
heartbeat = 500ms

[queue default]
[queue side]

[handler step]
exec = $T/step.sh
max_attempts = 1
EOC
}
# $T/px.ini: the same through the proxy that holds statements back.
SOCKET=$T/p.sock conf
mv "$CONF" "$T/px.ini"
conf
PX=$T/px
replylost_start "$PX"
drain() { jq_ work -q default --stop-when-empty 2>>"$T/worker.log"; }
ran() { grep -c "^start $1 " "$LOG" 2>/dev/null || true; }
reset() { sql "DELETE FROM jobs; DELETE FROM failed_jobs; DELETE FROM job_runs; DELETE FROM jobq_deps; DELETE FROM jobq_parked; DELETE FROM jobq_parked_deps"; rm -f "$LOG" "$T"/seen.*; }

# hold ID SECS: a client session locks job ID's row for SECS seconds, in
# the background; returns once the lock is taken.
hold() {
	sql "START TRANSACTION; SELECT id FROM jobs WHERE id = $1 FOR UPDATE; DO SLEEP($2); COMMIT" >/dev/null &
	HOLDER=$!
	wait_for_sql 10 "SELECT COUNT(*) FROM information_schema.innodb_trx WHERE trx_query LIKE 'DO SLEEP%'" 1
}
# blocked: waits until a statement waits for a row lock.
blocked() {
	wait_for_sql 10 "SELECT COUNT(*) FROM information_schema.innodb_trx WHERE trx_state = 'LOCK WAIT'" 1
}

# ---- two dead dependencies retried at once ----
# P waits for D, E and F.  D died first: P is parked under D, ended
# cancelled by D's outcome.
# E died too.  F waits in the side queue.  The retry of D weighs P: it
# locks D, E and F in jobs, in id order, and waits at F (held); the
# retry of E comes meanwhile.  Read in that order alone, E was in
# neither table when the retry of E committed between the reads, and its
# last run said "dead": P was parked under E, back in the queue, for
# good.  Whichever retry takes E's dead row first, P waits for D, E and F.
reset
d=$(jq_ enqueue step '{"n": "once"}')
e=$(jq_ enqueue step '{"n": "once"}')
f=$(jq_ enqueue -q side step '{"n": "F"}')
p=$(jq_ enqueue -q side --after "$d,$e,$f" step '{"n": "P"}')
drain
is "$(sql "SELECT COUNT(*) FROM failed_jobs WHERE id IN ($d, $e)")" 2 "two: D and E are dead"
is "$(sql "SELECT CONCAT(id, '<', parked_by) FROM jobq_parked")" "$p<$d" "two: P is parked under D"
hold "$f" 3
jq_ failed retry "$d" >"$T/retry_d.out" 2>&1 &
rd=$!
blocked
ok $? "two: the retry of D waits for F's lock"
jq_ failed retry "$e" >"$T/retry_e.out" 2>&1 &
re=$!
wait "$rd"
is "$?" 0 "two: the retry of D succeeds once F's lock is free"
wait "$re"
is "$?" 0 "two: so does the retry of E"
wait "$HOLDER"
is "$(sql "SELECT COUNT(*) FROM jobs WHERE id IN ($d, $e)")" 2 "two: D and E are back in the queue"
is "$(sql "SELECT CONCAT_WS(',', cancel_by IS NULL, waiting_on) FROM jobs WHERE id = $p")" "1,3" \
	"two: P waits again, for D, E and F"
is "$(sql "SELECT COUNT(*) FROM jobq_parked")" 0 "two: nothing is left parked (P not under E, which is in the queue)"
drain
jq_ work -q side --stop-when-empty 2>>"$T/worker.log"
is "$(ran "$d"):$(ran "$e"):$(ran "$f"):$(ran "$p")" "2:2:1:1" "two: D and E ran again, then F, then P"

# ---- enqueue --after a job being retried ----
# The enqueue locks E and G in jobs, in id order, and waits at G (held);
# E is retried meanwhile.  The new job must wait for E, in the queue
# again: not be cancelled at once as if E were still dead.
reset
e=$(jq_ enqueue step '{"n": "once"}')
drain
g=$(jq_ enqueue -q side step '{"n": "G"}')
hold "$g" 3
jq_ enqueue -q side --after "$e,$g" step '{"n": "N"}' >"$T/enq.out" 2>"$T/enq.err" &
en=$!
blocked
ok $? "enqueue: the enqueue waits for G's lock"
jq_ failed retry "$e" >"$T/retry_e.out" 2>&1 &
re=$!
wait "$en"
is "$?" 0 "enqueue: the enqueue succeeds once G's lock is free"
wait "$re"
is "$?" 0 "enqueue: so does the retry of E"
wait "$HOLDER"
n=$(cat "$T/enq.out")
is "$(sql "SELECT COUNT(*) FROM jobs WHERE id = $e")" 1 "enqueue: E is back in the queue"
is "$(sql "SELECT CONCAT_WS(',', cancel_by IS NULL, waiting_on) FROM jobs WHERE id = $n")" "1,2" \
	"enqueue: the new job waits for E and G"
is "$(sql "SELECT COUNT(*) FROM jobq_parked")" 0 "enqueue: nothing is left parked"
drain
jq_ work -q side --stop-when-empty 2>>"$T/worker.log"
is "$(ran "$e"):$(ran "$g"):$(ran "$n")" "2:1:1" "enqueue: E ran again, then G, then the new job"

# ---- forget while the cancelled job's end parks its waiters ----
# D died: P (waiting for D) is marked for cancelling and parked under D;
# W waits for P.  Forgetting D drops P's copy (its cancel is final now),
# and with it what P's end parks under P.  The forget is stopped after
# it looked for what is parked under P, before it commits (a lock on
# P's row of jobq_parked_deps); P ends meanwhile (a worker of its
# queue).  W must not be left parked under P, whose copy the forget
# dropped: W's cancel is final too, and show must not promise that a
# retry of P re-opens it.
reset
d=$(jq_ enqueue step '{"n": "once"}')
p=$(jq_ enqueue -q side --after "$d" step '{"n": "P"}')
w=$(jq_ enqueue -q side --after "$p" step '{"n": "W"}')
shielded "$p" drain
is "$(sql "SELECT CONCAT(id, '<', parked_by) FROM jobq_parked")" "$p<$d" "forget: P is parked under D"
sql "START TRANSACTION; SELECT job_id FROM jobq_parked_deps WHERE job_id = $p FOR UPDATE; DO SLEEP(4); COMMIT" >/dev/null &
HOLDER=$!
wait_for_sql 10 "SELECT COUNT(*) FROM information_schema.innodb_trx WHERE trx_query LIKE 'DO SLEEP%'" 1
jq_ failed forget "$d" >"$T/forget.out" 2>&1 &
fo=$!
blocked
ok $? "forget: the forget waits for the lock on P's parked row"
timeout 10 "$JOBQ" -c "$CONF" work -q side --stop-when-empty 2>>"$T/worker.log"
wait "$fo"
is "$?" 0 "forget: the forget succeeds once the lock is free"
wait "$HOLDER"
jq_ work -q side --stop-when-empty 2>>"$T/worker.log"
is "$(sql "SELECT COUNT(*) FROM jobs WHERE id IN ($p, $w)")" 0 "forget: P and W have ended"
is "$(sql "SELECT GROUP_CONCAT(outcome ORDER BY job_id) FROM job_runs WHERE job_id IN ($p, $w)")" "cancelled,cancelled" \
	"forget: both ended cancelled"
is "$(sql "SELECT COUNT(*) FROM jobq_parked")/$(sql "SELECT COUNT(*) FROM jobq_parked_deps")" "0/0" \
	"forget: nothing is left parked (W not under P)"
unlike_show=$(jq_ show "$w")
[[ "$unlike_show" != *"is retried from the dead letter"* ]]
ok $? "forget: show of W promises no re-open"
is "$(ran "$p"):$(ran "$w")" "0:0" "forget: neither ran"

# ---- a worker killed as it finalizes the cancelled job ----
# A worker claims P, marked for cancelling (the claim charges it an
# attempt), and is killed -9 before its outcome reaches the database
# (the proxy holds it, then the connection is cut, as when the worker's
# host dies).  Once the lease lapses, P is stale, still in jobs; the
# retry of D re-opens it in place.  A re-opened job never ran: it must
# start as attempt 1 (the handler's max_attempts is 1), not be buried
# unrun for an attempt only the dead worker's claim counted.
reset
d=$(jq_ enqueue step '{"n": "once"}')
p=$(jq_ enqueue -q side --after "$d" step '{"n": "P"}')
shielded "$p" drain
echo "FROM jobs WHERE id = $p AND lease_token" >"$PX/hold"
# A worker's first turn sweeps what is marked at once, before it claims:
# P's row is locked meanwhile, so the sweep passes over it and the
# worker's next claim takes it.
hold "$p" 3
"$JOBQ" -c "$T/px.ini" work -q side 2>>"$T/worker.log" &
wk=$!
for ((i = 0; i < 100; i++)); do [ -e "$PX/held" ] && break; sleep 0.1; done
wait "$HOLDER"
[ -e "$PX/held" ]
ok $? "killed: the worker claimed P and is about to finalize it"
kill -9 "$wk"
wait "$wk" 2>/dev/null
touch "$PX/cut"
sleep 0.3
rm -f "$PX/hold" "$PX/held" "$PX/cut"
is "$(sql "SELECT CONCAT_WS(',', cancel_by IS NOT NULL, lease_token IS NOT NULL, attempts) FROM jobs WHERE id = $p")" "1,1,1" \
	"killed: P is still in jobs, marked, under the dead worker's lease, charged an attempt"
wait_for_sql 10 "SELECT lease_expires_at <= UTC_TIMESTAMP(6) FROM jobs WHERE id = $p" 1
jq_ failed retry "$d" >/dev/null
is "$?" 0 "killed: once the lease lapsed, the retry of D succeeds"
is "$(sql "SELECT CONCAT_WS(',', cancel_by IS NULL, lease_token IS NULL, waiting_on, attempts) FROM jobs WHERE id = $p")" "1,1,1,0" \
	"killed: P waits for D again, its attempts as they were before it was claimed"
drain
jq_ work -q side --stop-when-empty 2>>"$T/worker.log"
is "$(ran "$d"):$(ran "$p")" "2:1" "killed: D ran again, then P"
like "$(grep "^start $p " "$LOG")" "attempt 1\$" "killed: P ran as attempt 1"
is "$(sql "SELECT COUNT(*) FROM failed_jobs WHERE id = $p")" 0 "killed: P is not dead-lettered"

finish
