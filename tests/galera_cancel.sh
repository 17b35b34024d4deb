#!/bin/bash
# Bulk cancels (one transaction a chunk, cancel.c) and the dashboard's
# workflow enqueue on a 3-node Galera cluster, where a node's row locks
# are its own and a conflict is found at certification:
#   (1) two `jobq cancel --queue Q --yes` through two nodes at once, on
#       delayed jobs of which some are in a group and some are waited
#       for: both exit 0 and silent (a certification failure, 1213, is
#       rerun), each job is cancelled once (one final run row), the
#       cancelled counts of the two add up, the group's callback comes
#       once, the jobs that waited end cancelled naming theirs;
#   (2) a bulk cancel through node 1 racing workers through nodes 2 and
#       3 on a group's jobs: each job ends once, done or cancelled, and
#       the one callback counts them so;
#   (3) one unique key sent to POST /api/enqueue of two dashboards on
#       two nodes at once: one job, each answer names it.
. "$top_srcdir/tests/galera_lib.sh"
. "$top_srcdir/tests/operator/common.sh"
. "$top_srcdir/tests/serve_lib.sh"
galera_setup galera_cancel 25040

for i in 1 2 3; do
	gconf "$T/n$i.ini" "$(ring $i)" <<EOC
[worker]
poll_interval = 20ms
reserve_ttl = 10s

[queue q]
[queue d]
[queue cb]

[handler nap]
exec = /bin/sleep 0.05
queue = q

[handler after]
exec = /bin/true
queue = d

[handler cb]
exec = /bin/true
queue = cb

[user ada]
password_hash = $PWHASH
role = admin

[serve]
overview_cache = 0
api_rate = off
EOC
done
"$JOBQ" -c "$T/n1.ini" init >/dev/null
ok $? "jobq init on the cluster"

# one_final: the nap jobs whose final run rows are not exactly one
one_final() {
	gsql 1 "SELECT COUNT(*) FROM (SELECT job_id FROM job_runs WHERE type = 'nap' GROUP BY job_id
		HAVING SUM(outcome IN ('done', 'dead', 'cancelled', 'expired')) <> 1) x"
}
empty() {
	gsql 1 "DELETE FROM jobs; DELETE FROM job_runs; DELETE FROM jobq_groups; DELETE FROM jobq_deps; DELETE FROM jobq_audit"
}
# deps_ok: the jobs that waited for a nap job that ended, not as it ended
deps_bad() {
	gsql 1 "SELECT COUNT(*) FROM jobs j JOIN jobq_deps d ON d.job_id = j.id
		JOIN job_runs r ON r.job_id = d.after_id AND r.outcome IN ('done', 'cancelled')
		WHERE j.type = 'after' AND NOT (
		(r.outcome = 'done' OR j.after_any = 1) AND j.waiting_on = 0 AND j.cancel_by IS NULL
		OR r.outcome = 'cancelled' AND j.after_any = 0 AND j.cancel_by = CONCAT('dependency ', d.after_id, ' (cancelled)'))"
}
# setup_jobs N DELAY: N nap jobs in group gc (callback cb), every 5th
# waited for by one job of policy all and one of any.
setup_jobs() {
	local n=$1 delay=$2 first i
	for ((i = 0; i < n; i++)); do echo "{\"type\": \"nap\", \"payload\": {}$delay}"; done |
		"$JOBQ" -c "$T/n1.ini" enqueue --batch --group gc --on-complete cb >/dev/null
	first=$(gsql 1 "SELECT MIN(id) FROM jobs WHERE type = 'nap'")
	for ((i = 0; i < n; i += 5)); do
		ids=$(gsql 1 "SELECT id FROM jobs WHERE type = 'nap' ORDER BY id LIMIT $i, 1")
		"$JOBQ" -c "$T/n2.ini" enqueue --after "$ids" after '{}' >/dev/null
		"$JOBQ" -c "$T/n3.ini" enqueue --after-any "$ids" after '{}' >/dev/null
	done
}

# ---- (1) two bulk cancels through two nodes at once ----
N=250
for round in 1 2 3; do
	empty
	setup_jobs $N ', "delay": "1h"'
	bad=0
	both cancel --queue q --yes
	is "$bad" 0 "(1.$round) two bulk cancels of $N jobs through two nodes at once: both exit 0, silent"
	c1=$(sed -n 's/^\([0-9]*\) jobs\? cancelled.*/\1/p' "$T/o1")
	c2=$(sed -n 's/^\([0-9]*\) jobs\? cancelled.*/\1/p' "$T/o2")
	# with the N/5 jobs of policy all that waited for them, ended with
	# them and counted in the total (cancel.c, final_cascade)
	is "$((c1 + c2))" "$((N + N / 5))" "(1.$round) they say they cancelled $c1 and $c2: $N and the $((N / 5)) that waited for them in all"
	is "$(gsql 2 "SELECT COUNT(*) FROM jobs WHERE queue = 'q'")" 0 "(1.$round) none is left"
	is "$(gsql 2 "SELECT COUNT(*) FROM job_runs WHERE type = 'nap' AND outcome = 'cancelled'")/$(one_final)" "$N/0" \
		"(1.$round) each cancelled once"
	is "$(gsql 3 "SELECT COUNT(*) FROM jobs WHERE type = 'cb'")" 1 "(1.$round) one callback"
	like "$(gsql 3 "SELECT payload FROM jobs WHERE type = 'cb'")" "\"total\": $N, \"done\": 0, \"dead\": 0, \"cancelled\": $N," \
		"(1.$round) counting every job cancelled"
	is "$(deps_bad)" 0 "(1.$round) the jobs that waited: cancelled naming theirs, or (any) ready"
done

# ---- (2) a bulk cancel racing workers on the other nodes ----
N=200
for round in 1 2; do
	empty
	setup_jobs $N ""
	for i in 2 3; do start_worker_conf "$T/n$i.ini" --concurrency 3 --queue q; done
	for ((i = 0; i < 300; i++)); do
		[ "$(gsql 1 "SELECT COUNT(*) >= $((N / 5)) FROM job_runs WHERE type = 'nap'")" = 1 ] && break
		sleep 0.1
	done
	out=$("$JOBQ" -c "$T/n1.ini" cancel --queue q --yes 2>&1)
	is "$?" 0 "(2.$round) the bulk cancel through node 1 exits 0 ($out)"
	for ((i = 0; i < 600; i++)); do
		[ "$(gsql 1 "SELECT COUNT(*) FROM jobs WHERE queue = 'q'")" = 0 ] && break
		sleep 0.1
	done
	stop_workers
	dn=$(gsql 1 "SELECT COUNT(*) FROM job_runs WHERE type = 'nap' AND outcome = 'done'")
	cn=$(gsql 1 "SELECT COUNT(*) FROM job_runs WHERE type = 'nap' AND outcome = 'cancelled'")
	is "$((dn + cn))/$(one_final)" "$N/0" "(2.$round) $dn done, $cn cancelled: each job ended once"
	is "$(gsql 2 "SELECT COUNT(*) FROM jobs WHERE type = 'cb'")" 1 "(2.$round) one callback"
	# Every count once: a transaction an applier aborts leaves nothing
	# behind (db_exec.c sends its statements one at a time on Galera).
	like "$(gsql 2 "SELECT payload FROM jobs WHERE type = 'cb'")" \
		"\"total\": $N, \"done\": $dn, \"dead\": 0, \"cancelled\": $cn," "(2.$round) counting them so"
	is "$(deps_bad)" 0 "(2.$round) the jobs that waited: released, or cancelled naming theirs"
done
is "$(grep -hE '^[^ ]+ (error|warn) ' "$T"/worker.*.log | grep -vc ' lost to other workers. claims ')" 0 \
	"no worker logged an error or a warning"

# ---- (3) one unique key through two dashboards at once ----
CONF=$T/n1.ini serve_start
U1=$URL
CONF=$T/n2.ini serve_start
U2=$URL
for i in 1 2; do
	eval "URL=\$U$i"
	login ada "$T/jar$i"
	eval "C$i=\$CSRF"
done
bad=0
R=20
for ((k = 1; k <= R; k++)); do
	for i in 1 2; do
		eval "curl -s -b \"\$T/jar$i\" -H \"X-CSRF-Token: \$C$i\" -H 'Content-Type: application/json' \
			-w '\n%{http_code}\n' --data-binary '{\"type\": \"after\", \"payload\": \"{}\", \"unique_key\": \"u$k\"}' \
			\"\$U$i/api/enqueue\" >\"\$T/u$i\" &"
		eval "p$i=\$!"
	done
	wait "$p1" "$p2"
	h=$(gsql 3 "SELECT GROUP_CONCAT(id) FROM jobs WHERE unique_key = 'u$k'")
	for i in 1 2; do
		got=$(head -1 "$T/u$i" | jget 'd.get("first_id") or d.get("holder_id")')
		[ "$(sed -n 2p "$T/u$i")" = 200 ] && [ "$got" = "$h" ] || { bad=$((bad + 1)); diag "key u$k: job(s) $h; node $i: $(cat "$T/u$i")"; }
	done
done
is "$bad" 0 "(3) $R keys, each sent to two dashboards on two nodes at once: one job, both answers name it"

# ---- (4) one batch key through two nodes at once ----
# Its row is written by a statement outside a transaction, which a
# write on the other node can abort at certification (1213): jobq
# reruns such a statement (db_exec), and one of the two writes the jobs.
printf '%s\n' '{"type": "after", "payload": {}}' '{"type": "after", "payload": {}}' >"$T/two.jsonl"
bad=0
for ((k = 1; k <= R; k++)); do
	"$JOBQ" -c "$T/n1.ini" enqueue --batch --batch-key "bk$k" <"$T/two.jsonl" >"$T/b1" 2>&1 &
	p1=$!
	"$JOBQ" -c "$T/n2.ini" enqueue --batch --batch-key "bk$k" <"$T/two.jsonl" >"$T/b2" 2>&1 &
	p2=$!
	wait "$p1"; r1=$?
	wait "$p2"; r2=$?
	[ "$r1/$r2" = 0/0 ] || { bad=$((bad + 1)); diag "key bk$k: exit $r1/$r2: $(cat "$T/b1" "$T/b2")"; }
done
is "$bad" 0 "(4) $R batch keys, each through two nodes at once: both commands succeed"
is "$(gsql 3 "SELECT COUNT(*) FROM jobs WHERE type = 'after' AND unique_key IS NULL AND id > (SELECT COALESCE(MAX(id), 0) FROM jobs WHERE unique_key LIKE 'u%')")" \
	"$((2 * R))" "(4) ... and each batch's two jobs are written once"
finish
