#!/bin/bash
# Lost answers to `jobq failed retry|forget` (the operator's promise:
# nothing applied twice, nothing called done that was not).  A retry or
# forget whose COMMIT's answer never arrives is settled against the dead
# row it was for: the same death still there, it was not taken and is
# done again; a later death (the job was retried, ran and died again
# meanwhile), the retry took and is not done twice; the row gone, a
# retry took only if the job went back to the queue since.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
. "$top_srcdir/tests/operator/common.sh"
setup replylost_failed
PX=$T/px
replylost_start "$PX"

body="[worker]
poll_interval = 20ms
[queue default]
[handler bad]
exec = /bin/sh -c 'echo boom >&2; exit 65'
[handler step]
exec = /bin/true"
printf '%s\n' "$body" | write_conf
cp "$CONF" "$T/direct.ini"
printf '%s\n' "$body" | SOCKET=$T/p.sock write_conf
dead() { # dead ID TYPE: a dead-lettered job
	sql "INSERT INTO failed_jobs (id, queue, type, payload, attempts, exception, exit_status, reason)
		VALUES ($1, 'default', '$2', '{}', 1, 'x', 'exit 65', 'permanent exit status')"
}
runs() { sql "SELECT COUNT(*) FROM job_runs WHERE job_id = $1"; }
wait_dead_again() { # until job $1 is dead-lettered with a run, or 10 s
	local i
	for ((i = 0; i < 100; i++)); do
		[ "$(where "$1")/$(runs "$1")" = "failed/1" ] && return 0
		sleep 0.1
	done
	return 1
}

# (1) The retry's COMMIT answer is lost for a second, in which a worker
# runs the job and dead-letters it again: one retry, one run.
"$JOBQ" -c "$T/direct.ini" work -q default 2>"$T/w.log" &
WP=$!
BG_PIDS+=("$WP")
dead 9300 bad
printf '^COMMIT' >"$PX/drop"
run failed retry 9300
is "$(cat "$PX/dropped" 2>/dev/null | wc -l)" 1 "(1) the retry's COMMIT answer was lost"
rm -f "$PX/dropped"
is "$RC" 0 "(1) the retry says it was done: exit 0"
like "$OUT" "retried 1 job" "(1) ... retried 1 job"
wait_dead_again 9300
sleep 1 # a second retry would have run by now
is "$(where 9300)/$(runs 9300)" "failed/1" "(1) the job ran once and is dead again: not retried twice"
kill "$WP"
wait "$WP" 2>/dev/null

# (2) The retry's COMMIT is held, its session killed (rolled back), and
# another operator forgets the job meanwhile: the retry does not say it
# retried a job nobody retried.
dead 9500 step
printf '^COMMIT' >"$PX/hold"
(jq_ failed retry 9500 >"$T/o" 2>"$T/e"; echo $? >"$T/rc") &
BG_PIDS+=($!)
for ((i = 0; i < 100; i++)); do [ -e "$PX/held" ] && break; sleep 0.1; done
ok "$([ -e "$PX/held" ]; echo $?)" "(2) the retry's COMMIT is held"
tid=$(sql "SELECT trx_mysql_thread_id FROM information_schema.innodb_trx LIMIT 1")
"$JOBQ" -c "$T/direct.ini" failed forget 9500 >/dev/null 2>"$T/e2" &
FP=$!
sleep 0.5
sql_root "KILL $tid"
wait "$FP"
is "$?" 0 "(2) the other operator's forget goes through once the retry is rolled back"
rm -f "$PX/hold" "$PX/held"
for ((i = 0; i < 100; i++)); do [ -s "$T/rc" ] && break; sleep 0.1; done
is "$(cat "$T/rc")/$(where 9500)" "65/gone" "(2) the retry exits 65 and the job is gone (forgotten)"
is "$(grep -c 'retried 1' "$T/o")" 0 "(2) ... and does not say it retried it"
like "$(cat "$T/e")" "1 job left the dead-letter table meanwhile" "(2) ... it says the job had left"

# (3) An edited retry whose COMMIT answer is lost: it took, once, and
# the command says so (not "database unavailable" and a rerun that
# finds nothing).
dead 9200 step
printf '^COMMIT' >"$PX/drop"
run failed retry --payload '{"edited": 1}' 9200
is "$RC" 0 "(3) an edited retry whose COMMIT answer was lost: exit 0"
like "$OUT" "retried job 9200 with the edited payload" "(3) ... it says it retried"
is "$(sql "SELECT COUNT(*) FROM jobq_audit WHERE job_id = 9200 AND action = 'retry-edited'")" 1 \
	"(3) one audit row of the edit"
is "$(where 9200)" "queue" "(3) the job is back in the queue"

# (4) A forget whose COMMIT answer is lost: done, once.
dead 9201 step
printf '^COMMIT' >"$PX/drop"
run failed forget 9201
is "$RC/$(where 9201)" "0/gone" "(4) a forget whose COMMIT answer was lost: exit 0, forgotten"

# (5) failed clear whose DELETE's answer is lost: the job is gone, and
# the command does not say it deleted none.
dead 9210 step
printf '^DELETE' >"$PX/drop"
run failed clear --yes
is "$RC/$(where 9210)" "69/gone" "(5) failed clear whose DELETE answer was lost: exit 69, the job deleted"
like "$ERR" "may have been deleted too; look" "(5) ... and it says the last chunk may have been deleted"

finish
