#!/bin/bash
# Enqueue from every node at once, with `jobq enqueue --batch` and with an
# application's plain INSERT, while workers on every node claim: no error
# reaches the user, every job is there once and runs once.
. "$top_srcdir/tests/galera_lib.sh"
galera_setup galera_enqueue 24680

B=$(volume 1000) # jobs per batch enqueue (a quarter under sanitizers)
I=200  # plain INSERTs per node
ran=$T/ran
: >"$ran"
for i in 1 2 3; do
	gconf "$T/n$i.ini" "$(ring $i)" <<EOC
[worker]
poll_interval = 50ms
reserve_ttl = 60s

[queue default]

[handler once]
exec = /bin/sh -c 'echo "\$(cat)" >>$ran'
EOC
done
"$JOBQ" -c "$T/n1.ini" init >/dev/null
for i in 1 2 3; do
	start_worker_conf "$T/n$i.ini" --concurrency 4
done
for i in 1 2 3; do
	seq 1 $B | awk -v n="$i" '{ printf "{\"type\": \"once\", \"payload\": {\"b\": \"%s-%d\"}}\n", n, $1 }' |
		"$JOBQ" -c "$T/n$i.ini" enqueue --batch >"$T/enq.$i.out" 2>"$T/enq.$i.err" &
	echo $! >"$T/enq.$i.pid"
	(
		for k in $(seq 1 $I); do
			echo "INSERT INTO jobs (queue, type, payload, available_at)
				VALUES ('default', 'once', '{\"i\": \"$i-$k\"}', UTC_TIMESTAMP());"
		done | "$CLUSTER_SCRIPT" client "$CLUSTER" "$i" "$DB"
	) 2>"$T/ins.$i.err" &
	echo $! >"$T/ins.$i.pid"
done
for i in 1 2 3; do
	wait "$(cat "$T/enq.$i.pid")"
	is "$?" 0 "enqueue --batch through node $i exits 0"
	is "$(cat "$T/enq.$i.err")" "" "... and prints nothing on stderr"
	wait "$(cat "$T/ins.$i.pid")"
	is "$?:$(cat "$T/ins.$i.err")" "0:" "$I plain INSERTs through node $i succeed"
done
total=$((3 * (B + I)))
wait_for_sql_g() {
	local i=0
	while [ "$(gsql 1 "SELECT COUNT(*) FROM job_runs")" -lt "$total" ]; do
		i=$((i + 1))
		[ $i -le 1800 ] || return 1
		sleep 0.1
	done
}
wait_for_sql_g
ok $? "the workers ran $total jobs"
is "$(gsql 2 "SELECT COUNT(*) FROM jobs")" 0 "nothing is left in the jobs table"
is "$(grep -c . "$ran")" "$total" "the handlers ran $total times"
is "$(grep . "$ran" | sort | uniq -d | head -3 | tr '\n' ' ')" "" "no payload ran twice (each job was stored once)"
is "$(grep -c '"b"' "$ran"):$(grep -c '"i"' "$ran")" "$((3 * B)):$((3 * I))" \
	"every batch job and every INSERTed job ran"
is "$(gsql 3 "SELECT COUNT(DISTINCT job_id) FROM job_runs")" "$total" "one run per job id"
is "$(grep -hE '^[^ ]+ (error|warn) ' "$T"/worker.*.log | grep -vc ' lost to other workers. claims ')" 0 \
	"no worker logged an error or a warning (but for long runs of lost claims)"
# Under --enable-sanitizers a report goes to the worker's stderr.
is "$(grep -l -e 'Sanitizer' -e 'runtime error:' "$T"/worker.*.log | wc -l)" 0 \
	"no worker log holds a sanitizer report"
finish
