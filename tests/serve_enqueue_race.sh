#!/bin/bash
# POST /api/enqueue's workflow fields where they meet other writers at
# the same moment:
#   (a) one unique key sent at once through the API twice and through
#       `jobq enqueue --unique-key`: exactly one job; each API answer is
#       that job (enqueued) or a refusal naming it, and the CLI prints it;
#   (b) a group joined by API requests while workers (exec and
#       persistent) finish its jobs: exactly one callback, whose counts
#       are the group's jobs and how they ended; a request that came
#       after it completed is 409 and wrote nothing;
#   (c) a job enqueued "after" a job that ends (done, or cancelled by
#       `jobq cancel`) at that moment: released or cancelled naming it,
#       never left waiting.
. "$top_srcdir/tests/lib.sh"
one_build normal "races between real processes"
. "$top_srcdir/tests/operator/common.sh"
. "$top_srcdir/tests/serve_lib.sh"
setup serve_enqueue_race
TH=$top_srcdir/tests/handlers

conf() { # conf MODE: the handlers in exec or persistent mode
	local extra=""
	[ "$1" = persistent ] && extra="mode = persistent
env.PYTHONPATH = $HANDLERS"
	write_conf <<EOC
[worker]
poll_interval = 20ms
reserve_ttl = 5s

[queue default]
[queue g]
[queue d]
[queue cb]

[handler echo]
exec = /bin/true

[handler nap]
exec = $TH/nap.py $1
queue = g
$extra

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
}
# apost FILE BODY: POST /api/enqueue, the status then the body into FILE
# (for requests sent side by side).
apost() {
	curl -s -b "$T/jar" -H "X-CSRF-Token: $CSRF" -H 'Content-Type: application/json' \
		-w '\n%{http_code}\n' --data-binary "$2" "$URL/api/enqueue" >"$1"
}
conf exec
serve_start
login ada "$T/jar"

# ---- (a) one key, three writers at once ----
R=$(volume 30)
bad=0
for i in $(seq 1 "$R"); do
	apost "$T/a1" "{\"type\": \"echo\", \"payload\": \"{}\", \"unique_key\": \"k$i\"}" &
	p1=$!
	apost "$T/a2" "{\"type\": \"echo\", \"payload\": \"{}\", \"unique_key\": \"k$i\"}" &
	p2=$!
	c=$(jq_ enqueue --unique-key "k$i" echo '{}' 2>/dev/null)
	wait $p1 $p2
	h=$(sql "SELECT GROUP_CONCAT(id) FROM jobs WHERE unique_key = 'k$i'")
	for f in a1 a2; do
		got=$(head -1 "$T/$f" | jget 'd.get("first_id") or d.get("holder_id")')
		[ "$(sed -n 2p "$T/$f")" = 200 ] && [ "$got" = "$h" ] || { bad=$((bad + 1)); diag "key k$i: job(s) $h, $f: $(cat "$T/$f")"; }
	done
	[ "$c" = "$h" ] || { bad=$((bad + 1)); diag "key k$i: job(s) $h, the CLI printed '$c'"; }
done
is "$bad" 0 "(a) $R keys, each sent by two API requests and jobq enqueue at once: one job, named by all three"
is "$(sql "SELECT COUNT(*) FROM jobs WHERE unique_key LIKE 'k%'")" "$R" "(a) one job per key"
is "$(sql "SELECT COUNT(*) FROM jobq_audit WHERE action = 'enqueue' AND job_id IN (SELECT id FROM jobs WHERE unique_key LIKE 'k%')")" \
	"$(sql "SELECT COUNT(*) FROM jobs j WHERE unique_key LIKE 'k%' AND EXISTS (SELECT 1 FROM jobq_audit a WHERE a.job_id = j.id)")" \
	"(a) no job has two audit rows"
serve_stop

# ---- (b) a group joined by API requests while workers end its jobs ----
for hmode in exec persistent; do
	empty_tables
	sql "DELETE FROM jobq_groups; DELETE FROM jobq_deps; DELETE FROM jobq_audit"
	conf $hmode
	serve_start
	login ada "$T/jar"
	N=$(volume 40)
	for i in $(seq 1 "$N"); do echo '{"type": "nap", "payload": {"ms": 20}}'; done |
		jq_ enqueue --batch --group gj --on-complete cb >/dev/null
	start_worker --concurrency 3 --queue g
	start_worker --concurrency 3 --queue g
	joined=0 refused=0 other=0
	for i in $(seq 1 30); do
		apost "$T/b" '{"type": "nap", "payload": "{\"ms\": 20}", "count": 2, "group": "gj", "on_complete": "cb"}'
		case $(sed -n 2p "$T/b") in
		200) joined=$((joined + 2)) ;;
		409) refused=$((refused + 1)) ;;
		*) other=$((other + 1)); diag "$(cat "$T/b")" ;;
		esac
		sleep 0.0$((RANDOM % 5))
	done
	wait_for_sql 60 "SELECT COUNT(*) FROM jobs WHERE queue = 'g'" 0
	ok $? "[$hmode] (b) every job of the group ended ($joined joined by the API, $refused requests after it completed)"
	stop_workers
	serve_stop
	is "$other" 0 "[$hmode] (b) every request was answered 200 or 409"
	is "$(count jobs "type = 'cb'")" 1 "[$hmode] (b) exactly one callback"
	dn=$(count job_runs "type = 'nap' AND outcome = 'done'")
	is "$dn" "$((N + joined))" "[$hmode] (b) each job joined ran once"
	like "$(sql "SELECT payload FROM jobs WHERE type = 'cb'")" "\"total\": $((N + joined)), \"done\": $dn, \"dead\": 0" \
		"[$hmode] (b) the callback counts every job"
	is "$(count jobq_audit "action = 'enqueue'")" "$joined" "[$hmode] (b) an audit row per job joined"
done

# ---- (c) "after" a job that ends at that moment ----
empty_tables
sql "DELETE FROM jobq_groups; DELETE FROM jobq_deps"
conf persistent
serve_start
login ada "$T/jar"
start_worker --concurrency 2 --queue g
R=$(volume 40)
for i in $(seq 1 "$R"); do
	x=$(jq_ enqueue nap "{\"ms\": $((RANDOM % 40))}")
	cp=""
	[ $((i % 3)) = 0 ] && { jq_ cancel --no-wait "$x" >/dev/null 2>&1 & cp=$!; }
	sleep 0.0$((RANDOM % 6))
	apost "$T/c" "{\"type\": \"after\", \"payload\": \"{}\", \"after\": [$x]}"
	[ "$(sed -n 2p "$T/c")" = 200 ] || diag "after $x: $(cat "$T/c")"
	apost "$T/c" "{\"type\": \"after\", \"payload\": \"{}\", \"after\": [$x], \"after_policy\": \"any\"}"
	[ "$(sed -n 2p "$T/c")" = 200 ] || diag "after-any $x: $(cat "$T/c")"
	[ -z "$cp" ] || wait "$cp"
done
wait_for_sql 60 "SELECT COUNT(*) FROM jobs WHERE queue = 'g'" 0
ok $? "(c) every job waited for ended"
stop_workers
# A job whose dependency was cancelled is ended as cancelled: at once
# when the dependency had ended as it was enqueued, else by the next
# claim or sweep of its queue (jobq(1): no worker serves it here), and
# meanwhile it is due, carrying its cancel request.
is "$(( $(count jobs "type = 'after'") + $(count job_runs "type = 'after'") ))" "$((2 * R))" \
	"(c) every job enqueued after one is there, or ended"
is "$(count job_runs "type = 'after' AND NOT (outcome = 'cancelled' AND error LIKE 'cancelled by dependency % (cancelled)%')")" 0 \
	"(c) one that ended was cancelled naming its dependency"
is "$(sql "SELECT COUNT(*) FROM jobs WHERE type = 'after' AND available_at > UTC_TIMESTAMP(6)")" 0 \
	"(c) none is left waiting"
is "$(sql "SELECT COUNT(*) FROM jobs j JOIN jobq_deps d ON d.job_id = j.id JOIN job_runs r ON r.job_id = d.after_id
	AND r.outcome IN ('done', 'cancelled') WHERE j.type = 'after' AND NOT (
	(r.outcome = 'done' OR j.after_any = 1) AND j.cancel_by IS NULL AND j.available_at <= UTC_TIMESTAMP(6)
	OR r.outcome = 'cancelled' AND j.after_any = 0 AND j.cancel_by = CONCAT('dependency ', d.after_id, ' (cancelled)'))")" 0 \
	"(c) each is ready, or cancelled naming the job it waited for"

finish
