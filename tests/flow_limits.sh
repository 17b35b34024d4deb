#!/bin/bash
# max_running (issue 13, item 5): never more than N jobs of a limited
# type, or of a limited queue, run at once across every worker, in both
# reservation modes, while the other types keep flowing.  The handlers
# record their own start and end times; the intervals must never overlap
# more than N deep.  --stop-when-empty workers do not leave while jobs
# wait for the limit.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
setup flow_limits

WORKERS=4
CONC=8
REPORTS=12
SLOWS=12
QUICK=300

# rec.sh FILE SECONDS: one line "START_NS END_NS" per run.
cat >"$T/rec.sh" <<'EOS'
#!/bin/sh
s=$(date +%s%N)
sleep "$2"
e=$(date +%s%N)
echo "$s $e" >>"$1"
EOS

# The deepest overlap of the intervals in FILE.
depth() {
	awk '{ print $1, 1; print $2, -1 }' "$1" | sort -k1,1n -k2,2n |
		awk '{ d += $2; if (d > m) m = d } END { print m + 0 }'
}

for mode in skip-locked update; do
	empty_tables
	: >"$T/report.$mode"
	: >"$T/slow.$mode"
	write_conf <<EOC
[worker]
poll_interval = 50ms
reserve_mode = $mode
reserve_ttl = 30s
queues = default,slow

[queue default]

[queue slow]
max_running = 3

[handler report]
workdir = $T
exec = /bin/sh rec.sh report.$mode 0.3
max_running = 2

[handler slowjob]
queue = slow
workdir = $T
exec = /bin/sh rec.sh slow.$mode 0.3

[handler quick]
exec = /bin/true
EOC
	{
		seq $REPORTS | awk '{ printf "{\"type\": \"report\", \"payload\": {\"n\": %d}}\n", $1 }'
		seq $SLOWS | awk '{ printf "{\"type\": \"slowjob\", \"payload\": {\"n\": %d}}\n", $1 }'
		seq $QUICK | awk '{ printf "{\"type\": \"quick\", \"payload\": {\"n\": %d}}\n", $1 }'
	} | jq_ enqueue --batch >/dev/null
	is "$(sql "SELECT COUNT(*) FROM jobs")" $((REPORTS + SLOWS + QUICK)) "[$mode] jobs enqueued"

	pids=()
	for i in $(seq $WORKERS); do
		start_worker --concurrency $CONC --stop-when-empty
		pids+=("$WORKER_PID")
	done
	bad=0
	for p in "${pids[@]}"; do
		wait_exit $((120 * TIME_SCALE)) "$p" || bad=$((bad + 1))
	done
	is "$bad" 0 "[$mode] $WORKERS workers x $CONC slots drained everything and exited 0"
	is "$(sql "SELECT COUNT(*) FROM jobs")" 0 "[$mode] no job is left"
	is "$(wc -l <"$T/report.$mode")" $REPORTS "[$mode] every report ran once"
	is "$(wc -l <"$T/slow.$mode")" $SLOWS "[$mode] every job of the slow queue ran once"
	is "$(depth "$T/report.$mode")" 2 "[$mode] report (max_running = 2): at most 2 at once, and 2 were used"
	is "$(depth "$T/slow.$mode")" 3 "[$mode] queue slow (max_running = 3): at most 3 at once, and 3 were used"
	is "$(sql "SELECT COUNT(*), SUM(attempt = 1), SUM(outcome = 'done') FROM job_runs")" \
		"$((REPORTS + SLOWS + QUICK))	$((REPORTS + SLOWS + QUICK))	$((REPORTS + SLOWS + QUICK))" \
		"[$mode] every job done on its first attempt: waiting for the limit costs none"
	# The quick jobs do not wait behind the limited ones: all of them
	# have started before the last report did (reports need >= 6 x 0.3 s).
	is "$(sql "SELECT (SELECT MAX(started_at) FROM job_runs WHERE type = 'quick') <
		(SELECT MAX(started_at) FROM job_runs WHERE type = 'report')")" 1 \
		"[$mode] other types keep flowing while report waits for its limit"
	problems=$(grep -hE '^[^ ]+ (error|warn) ' "$T"/worker.*.log | head -5)
	is "$problems" "" "[$mode] no worker logged an error or a warning"
done

# ---- no starvation: a backlog of a limited type ahead of the others ----
# 100 hog jobs (max_running = 1, 0.2 s each) sit at a better priority
# than 20 quick ones and fill more than the due scan reads; the quick
# ones must still run at once, not after the 20 s the hogs need.
for mode in skip-locked update; do
	empty_tables
	write_conf <<EOC
[worker]
poll_interval = 50ms
reserve_mode = $mode

[queue default]

[handler hog]
exec = /bin/sleep 0.2
max_running = 1

[handler quick]
exec = /bin/true
EOC
	{
		seq 100 | awk '{ printf "{\"type\": \"hog\", \"payload\": {\"n\": %d}, \"priority\": -5}\n", $1 }'
		seq 20 | awk '{ printf "{\"type\": \"quick\", \"payload\": {\"n\": %d}, \"priority\": 5}\n", $1 }'
	} | jq_ enqueue --batch >/dev/null
	start_worker --concurrency 4
	wait_for_sql $((10 * TIME_SCALE)) "SELECT COUNT(*) FROM job_runs WHERE type = 'quick'" 20
	ok $? "[$mode] the quick jobs ran while the hog backlog waits for its limit"
	left=$(sql "SELECT COUNT(*) FROM jobs WHERE type = 'hog'")
	[ "$left" -gt 50 ]
	ok $? "[$mode] (with $left hog jobs still queued)"
	kill -TERM "$WORKER_PID"
	wait_exit 20 "$WORKER_PID"
done

# ---- bad values are configuration errors; a bare day unit reads as
# one day, as s, m and h do ----
for line in "max_running = 0" "max_running = x" "rate = 10" "rate = 0/s" "rate = 10/y" \
	"rate = 500/d" "rate = 500/1d" "rate = 3/12h"; do
	write_conf <<EOC
[queue default]

[handler echo]
exec = /bin/true
$line
EOC
	jq_ check >/dev/null 2>"$T/err"
	st=$?
	case $line in
	*/d | */1d | */12h) is "$st $(head -1 "$T/err")" "0 " "'$line' is accepted" ;;
	*) like "$st $(head -1 "$T/err")" "^78 .*jobq.ini:10: (max_running|rate): " "'$line' is refused with its line" ;;
	esac
done
write_conf <<EOC
[worker]
max_running = 2

[queue default]
EOC
jq_ check >/dev/null 2>&1
is "$?" 78 "max_running is no [worker] key (a limit is per type or per queue)"
# Jobs held ahead would count as running and start after their rate slot.
write_conf <<EOC
[worker]
reserve_ahead = 4

[queue default]

[handler echo]
exec = /bin/true
rate = 5/s
EOC
jq_ check >/dev/null 2>"$T/err"
st=$?
like "$st $(head -1 "$T/err")" "^78 .*jobq.ini:[0-9]+: reserve_ahead: cannot hold jobs ahead with max_running or rate" \
	"reserve_ahead = 4 with a rate limit is refused"
sed -i 's/^reserve_ahead = 4$/reserve_ahead = auto/' "$CONF"
jq_ check >/dev/null 2>&1
is "$?" 0 "reserve_ahead = auto with a rate limit is accepted (it then holds none)"

finish
