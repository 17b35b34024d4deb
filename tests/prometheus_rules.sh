#!/bin/bash
# contrib/prometheus as shipped: `promtool check config` and `promtool
# check rules` accept it, `promtool test rules` fires every alert rule on
# a series made for it (and no rule is left without a test), and the
# Grafana dashboard is JSON whose every panel has a query.  Needs no
# database.
. "$top_srcdir/tests/lib.sh"
one_build normal "what the package installs"
command -v promtool >/dev/null || skip_all "no promtool (apt-get install prometheus)"
P=$top_srcdir/contrib/prometheus

out=$(promtool check config "$P/prometheus.yml" 2>&1)
ok $? "promtool check config prometheus.yml"
[ $? = 0 ] || diag "$out"
out=$(promtool check rules "$P/jobq-rules.yml" 2>&1)
ok $? "promtool check rules jobq-rules.yml"
[ $? = 0 ] || diag "$out"
out=$(cd "$P" && promtool test rules jobq-rules.test.yml 2>&1)
ok $? "promtool test rules: every alert fires on its series"
[ $? = 0 ] || diag "$out"
rules=$(grep -o '^ *- alert: [A-Za-z]*' "$P/jobq-rules.yml" | sed 's/.*alert: //' | sort -u)
tested=$(grep -o 'alertname: [A-Za-z]*' "$P/jobq-rules.test.yml" | sed 's/alertname: //' | sort -u)
is "$tested" "$rules" "each alert rule has a test ($(echo $rules | wc -w) rules)"
for a in JobqQueueFallingBehind JobqDeadLetterGrowing JobqNoWorkerForQueue JobqScheduleLate \
	JobqScheduleMissedFire JobqStaleLeases; do
	like "$rules" "$a" "an alert for what the operator must hear: $a"
done
n=$(python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
print(sum(1 for p in d["panels"] for t in p.get("targets", []) if t.get("expr")))' "$P/jobq-dashboard.json" 2>&1)
like "$n" '^[1-9][0-9]*$' "the Grafana dashboard is JSON with $n queries (tests/prometheus_e2e.sh runs them)"
finish
