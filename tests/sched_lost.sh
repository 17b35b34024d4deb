#!/bin/bash
# Lost answers in the watchdogs: a watchdog incident whose INSERT (or its
# read-back) loses its answer is still delivered "raised" once, by the
# worker that opened it, on its next pass; and "cleared" once.
# The worker talks to the server through tests/replylost.py (see
# tests/replylost.sh).
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
setup sched_lost
PX=$T/px
mkdir -p "$PX"
python3 "$top_srcdir/tests/replylost.py" "unix:$T/p.sock" "unix:$SOCKET" "$PX" &
BG_PIDS+=($!)
for ((i = 0; i < 300; i++)); do [ -S "$T/p.sock" ] && break; sleep 0.1; done

cat >"$T/alert.sh" <<'EOS'
#!/bin/sh
line=$(cat)
printf '%s\n' "$line" >>"$1"
EOS
chmod +x "$T/alert.sh"
A=$T/alerts
touch "$A"
count() { grep -c "\"event\":\"$1\",.*\"kind\":\"$2\"" "$A"; }
wait_count() {
	local i=0
	while [ "$(count "$3" "$4")" -lt "$2" ]; do
		i=$((i + 1))
		[ $i -le $(($1 * 10)) ] || return 1
		sleep 0.1
	done
}
dropped() { wc -l <"$PX/dropped" 2>/dev/null || echo 0; }

SOCKET=$T/p.sock write_conf <<EOC
[worker]
poll_interval = 50ms
on_alert = $T/alert.sh $A

[queue default]
[queue other]
max_wait = 1s

[handler tick]
exec = /bin/true
queue = other
EOC

# ---- 1. the answer to an incident's INSERT, then to its read-back ----
n=0
for what in 'INSERT INTO jobq_alerts' 'FROM jobq_alerts WHERE id = '; do
	n=$((n + 1))
	jq_ enqueue tick '{}' >/dev/null
	printf '%s' "$what" >"$PX/drop"
	start_worker -q default
	wait_for_sql 20 "SELECT COUNT(*) FROM jobq_alerts WHERE kind = 'wait' AND open_key = 1" 1
	ok $? "$n: a job waits past max_wait: the incident is open ($what answer lost)"
	[ ! -e "$PX/drop" ]
	ok $? "... the answer was lost"
	wait_count 15 $n raised wait
	ok $? "... and raised is delivered all the same, on the worker's next pass"
	sleep 4 # another pass
	is "$(count raised wait)" $n "... once"
	is "$(grep -c 'alert raised: wait other' "$T"/worker.*.log | awk -F: '{ s += $NF } END { print s }')" $n \
		"... and logged once"
	jq_ work -q other --stop-when-empty 2>/dev/null
	wait_count 15 $n cleared wait
	ok $? "... cleared once the job ran"
	sleep 4
	is "$(count raised wait) $(count cleared wait)" "$n $n" "... each delivered once"
	kill -TERM "$WORKER_PID"
	wait_exit 20 "$WORKER_PID"
done

stop_workers
finish
