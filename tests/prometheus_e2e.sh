#!/bin/bash
# A real Prometheus server (the distribution's prometheus) scrapes two
# `jobq work` processes (--metrics-listen) and `jobq serve` every 250 ms;
# after a known set of jobs its HTTP API gives the right figures:
# sum(rate(jobq_runs_total[1m])) is the jobs over the minute, the sums
# across both workers are exact, histogram_quantile(0.95) of run time
# lands in the bucket of the jobs' real run time, and every query of the
# Grafana dashboard and every alert rule of contrib/prometheus load and
# evaluate.  promtool check metrics is clean on all three endpoints.
. "$top_srcdir/tests/lib.sh"
one_build normal "a timing test: real scrapes, rates over wall-clock time"
command -v prometheus >/dev/null && command -v promtool >/dev/null ||
	skip_all "no prometheus (apt-get install prometheus)"
. "$top_srcdir/tests/operator/common.sh"
. "$top_srcdir/tests/serve_lib.sh"
setup prometheus_e2e
TH=$top_srcdir/tests/handlers

write_conf <<EOC
[worker]
poll_interval = 20ms

[queue default]
[queue slow]

[handler fast]
exec = $TH/exitwith.sh
max_attempts = 1

[handler nap]
exec = $TH/sleeper.sh 0.3
queue = slow

[user admin]
password_hash = $PWHASH
role = admin
EOC

# free_port: a port nobody listens on now.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
murl() {
	local i m
	for i in $(seq 1 100); do
		m=$(grep -o '/metrics served on http://[^ ]*' "$T/worker.$1.log" | tail -1)
		[ -n "$m" ] && break
		sleep 0.1
	done
	echo "${m#/metrics served on http://}"
}
start_worker -j 2 --metrics-listen 127.0.0.1:0
W0=$(murl 0)
start_worker -j 2 --metrics-listen 127.0.0.1:0
W1=$(murl 1)
serve_start
S=${URL#http://}
like "$W0 $W1 $S" '^127\.0\.0\.1:[0-9]+ 127\.0\.0\.1:[0-9]+ 127\.0\.0\.1:[0-9]+$' "two workers and jobq serve listen"

PP=$(free_port)
mkdir -p "$T/prom"
cp "$top_srcdir/contrib/prometheus/jobq-rules.yml" "$T/prom/"
cat >"$T/prom/prometheus.yml" <<EOP
global:
  scrape_interval: 250ms
  evaluation_interval: 1s
rule_files: [jobq-rules.yml]
scrape_configs:
  - job_name: jobq
    static_configs: [{targets: ["$S"]}]
  - job_name: jobq-workers
    static_configs: [{targets: ["$W0", "$W1"]}]
EOP
prometheus --config.file="$T/prom/prometheus.yml" --storage.tsdb.path="$T/prom/data" \
	--web.listen-address="127.0.0.1:$PP" --log.level=warn 2>"$T/prom.log" &
BG_PIDS+=($!)
API=http://127.0.0.1:$PP/api/v1
# while Prometheus starts:
for t in "$W0" "$W1" "$S"; do
	out=$(curl -s "http://$t/metrics" | promtool check metrics 2>&1)
	is "$?/$out" "0/" "promtool check metrics: clean on $t"
done

# q EXPR: the first value of an instant query, or the error (no
# interpreter started per query: the machine may be busy).
q() {
	local r
	r=$(curl -s --data-urlencode "query=$1" "$API/query")
	case $r in *'"status":"success"'*) ;; *) echo "error: ${r:-no answer}"; return ;; esac
	r=$(printf '%s' "$r" | grep -o '"value":\[[^]]*\]' | head -1 | sed 's/.*,"\(.*\)"\]$/\1/')
	echo "${r:-<none>}"
}
for i in $(seq 1 100); do
	[ "$(q 'count(up == 1)')" = 3 ] && break
	sleep 0.2
done
is "$(q 'count(up == 1)')" 3 "Prometheus scrapes all three targets"
diag "prometheus up after ${SECONDS}s"

# 24 fast jobs, 4 that die at once (exit 65), 8 naps of 0.3 s.
N_FAST=24 N_DEAD=4 N_NAP=8
# rows N QUEUE TYPE PAYLOAD: N rows of VALUES.
rows() { local i out=; for i in $(seq 1 "$1"); do out+="${out:+, }('$2', '$3', '$4')"; done; printf '%s' "$out"; }
sql "INSERT INTO jobs (queue, type, payload) VALUES $(rows $N_FAST default fast '{}'), $(rows $N_DEAD default fast '{"exit": 65}'),
	$(rows $N_NAP slow nap '{}')"
TOTAL=$((N_FAST + N_DEAD + N_NAP))
wait_for_sql 30 "SELECT COUNT(*) FROM job_runs" "$TOTAL" || diag "runs: $(sql "SELECT COUNT(*) FROM job_runs")"
for i in $(seq 1 100); do
	[ "$(q 'sum(jobq_runs_total)')" = "$TOTAL" ] && break
	sleep 0.2
done
is "$(q 'sum(jobq_runs_total)')" "$TOTAL" "sum(jobq_runs_total) across both workers: $TOTAL"
is "$(q 'sum(jobq_runs_total{type="fast",outcome="done"})')/$(q 'sum(jobq_runs_total{type="fast",outcome="dead"})')/$(q 'sum(jobq_runs_total{type="nap",outcome="done"})')" \
	"$N_FAST/$N_DEAD/$N_NAP" "by type and outcome"
both=$(q 'count(sum by (instance) (jobq_runs_total) > 0)')
is "$both" 2 "both workers ran some of them"
diag "jobs done after ${SECONDS}s"
# rate() extrapolates each series to the query's time by up to one
# scrape interval past its last sample: against a few seconds of samples
# that is over 10% (CI saw 39.6 for 36).  With every series sampled for
# 12 s or more, it is under 3%.
for i in $(seq 1 150); do
	n=$(q 'min(count_over_time(jobq_runs_total[1m]))')
	case $n in [0-9]*) [ "${n%%.*}" -ge 48 ] && break ;; esac
	sleep 0.2
done
diag "samples per series: $n, after ${SECONDS}s"
rate=$(q 'sum(rate(jobq_runs_total[1m]))')
ok "$(python3 -c "import sys; r=float('$rate'); sys.exit(0 if abs(r * 60 - $TOTAL) <= 0.1 * $TOTAL else 1)" 2>/dev/null; echo $?)" \
	"sum(rate(jobq_runs_total[1m])) = $rate/s: the $TOTAL jobs of the last minute (within 10%: rate extrapolates)"
# The true 95th percentile of each type's run times (job_runs, as the
# workers measured them) and the bucket it falls in: histogram_quantile
# must land in that bucket (it interpolates within it).
BOUNDS="0 0.001 0.0025 0.005 0.01 0.025 0.05 0.1 0.25 0.5 1 2.5 5 10 30 60"
for type in nap fast; do
	true95=$(sql "SELECT duration_ms FROM job_runs WHERE type = '$type' ORDER BY duration_ms" |
		awk '{ v[NR] = $1 } END { k = int(NR * 0.95); if (k < NR * 0.95) k++; print v[k] / 1000 }')
	p95=$(q "histogram_quantile(0.95, sum by (le) (rate(jobq_run_duration_seconds_bucket{type=\"$type\"}[1m])))")
	ok "$(python3 -c "import sys
b = [float(x) for x in '$BOUNDS'.split()]
t, p = float('$true95'), float('$p95')
lo = max(x for x in b if x < t) if t > 0 else 0
hi = min(x for x in b if x >= t)
sys.exit(0 if lo <= p <= hi else 1)" 2>/dev/null; echo $?)" \
		"histogram_quantile(0.95) of $type's run time = $p95 s: in the bucket of the true p95 ($true95 s)"
done
is "$(q 'sum(jobq_wait_seconds_count)')" "$TOTAL" "the wait histogram counts every start"
is "$(q 'sum(jobq_claimed_jobs_total)')" "$TOTAL" "jobq_claimed_jobs_total across both: every job claimed once"
is "$(q 'sum(jobq_failed_jobs)')" "$N_DEAD" "jobq serve's gauge: $N_DEAD dead letters"
is "$(q 'sum(jobq_queue_workers{queue="slow"})')" 2 "jobq serve's gauge: 2 live workers serve slow"

diag "figures checked after ${SECONDS}s"
# Every query of the Grafana dashboard parses and evaluates here (one
# process asks them all).
out=$(python3 - "$top_srcdir/contrib/prometheus/jobq-dashboard.json" "$API/query" <<'EOP'
import json, sys, urllib.parse, urllib.request
d = json.load(open(sys.argv[1]))
n = bad = 0
for p in d["panels"]:
    for t in p.get("targets", []):
        e = t["expr"].replace("$__rate_interval", "1m").replace("$queue", ".*").replace("$type", ".*")
        n += 1
        try:
            r = json.load(urllib.request.urlopen(sys.argv[2], urllib.parse.urlencode({"query": e}).encode()))
            ok = r["status"] == "success"
        except Exception as x:
            ok = False
            print("# %s: %s: %s" % (p["title"], e, x))
        bad += not ok
print(n, bad)
EOP
)
like "$out" '(^|
)[0-9]+ 0$' "every query of the Grafana dashboard evaluates (queries, failures: ${out##*$'\n'})"
dq=$(q 'sum(rate(jobq_runs_total{outcome="done"}[1m]))')
like "$dq" '^[0-9.]+$' "the dashboard's throughput query has data ($dq/s)"
rules=$(curl -s "$API/rules" | python3 -c 'import json,sys
d = json.load(sys.stdin)
print(sum(1 for g in d["data"]["groups"] for r in g["rules"] if r.get("health") == "ok"))')
is "$rules" "$(grep -c '^ *- alert:' "$top_srcdir/contrib/prometheus/jobq-rules.yml")" "Prometheus loads and evaluates every alert rule"
finish
