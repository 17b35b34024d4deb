#!/bin/bash
# jobq status: counts per queue and state (DESIGN.md 5b), in text and
# JSON, --queue, an unknown queue.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
. "$top_srcdir/tests/operator/common.sh"
setup status

write_conf <<EOC
[worker]
poll_interval = 20ms
heartbeat = 200ms

[queue default]
[queue mail]
[queue idle]

[handler echo]
exec = $HANDLERS/echo.sh
EOC

FID=1000000
# jobs Q N STATE: N jobs of queue Q in STATE, made with SQL.
jobs() {
	local q=$1 n=$2 state=$3 i avail lease=NULL expires=NULL
	case $state in
	ready) avail="UTC_TIMESTAMP(6) - INTERVAL 30 SECOND" ;;
	delayed) avail="UTC_TIMESTAMP(6) + INTERVAL 1 HOUR" ;;
	reserved) avail="UTC_TIMESTAMP(6) - INTERVAL 1 MINUTE" lease="MD5(RAND())" expires="UTC_TIMESTAMP(6) + INTERVAL 10 MINUTE" ;;
	stale) avail="UTC_TIMESTAMP(6) - INTERVAL 1 MINUTE" lease="MD5(RAND())" expires="UTC_TIMESTAMP(6) - INTERVAL 10 SECOND" ;;
	esac
	for ((i = 0; i < n; i++)); do
		if [ "$state" = failed ]; then
			sql "INSERT INTO failed_jobs (id, queue, type, payload, exception) VALUES ($((FID += 1)), '$q', 'echo', '{}', 'boom')"
		else
			sql "INSERT INTO jobs (queue, type, payload, available_at, reserved_by, lease_token, lease_expires_at)
			     VALUES ('$q', 'echo', '{}', $avail, IF($lease IS NULL, NULL, 'w1'), $lease, $expires)"
		fi
	done
}
jobs default 3 ready
jobs default 2 delayed
jobs default 4 reserved
jobs default 1 stale
jobs default 2 failed
jobs mail 1 ready
jobs mail 5 delayed
jobs mail 2 failed
jobs legacy 2 ready
# The oldest ready job of default waited two minutes.
sql "UPDATE jobs SET available_at = UTC_TIMESTAMP(6) - INTERVAL 120 SECOND WHERE queue = 'default' AND lease_token IS NULL AND available_at < UTC_TIMESTAMP() ORDER BY id LIMIT 1"

# ---- text ----
run status
is "$RC" 0 "status exits 0"
row() { printf '%s\n' "$OUT" | awk -v q="$1" '$1 == q { print $2, $3, $4, $5, $6 }'; }
is "$(row default)" "3 2 4 1 2" "default: ready delayed reserved stale failed"
is "$(row mail)" "1 5 0 0 2" "mail: ready delayed reserved stale failed"
is "$(row idle)" "0 0 0 0 0" "a configured queue without jobs is listed with zeros"
is "$(row legacy)" "2 0 0 0 0" "a queue the tables hold jobs for but the config lacks is listed too"
like "$(printf '%s\n' "$OUT" | awk '$1 == "default"')" " 2m([0-9]+s)? ago$" "default: the oldest ready job waited about 120 s (as every relative time: 2m5s ago)"
like "$(printf '%s\n' "$OUT" | awk '$1 == "idle"')" " -$" "idle: no oldest ready job"
like "$OUT" "reserve mode: skip-locked" "the reserve mode is shown (probed: skip-locked on MariaDB)"
like "$OUT" "workers alive: 0" "no worker alive yet"
is "$(printf '%s\n' "$OUT" | head -1 | awk '{ print $1, $2, $3, $4, $5, $6 }')" "QUEUE READY DELAYED RESERVED STALE FAILED" "the header names the states"

# ---- JSON ----
run status --json
is "$RC" 0 "status --json exits 0"
printf '%s' "$OUT" >"$T/status.json"
j() { jget "$1" <"$T/status.json"; }
is "$(j 'd["queues"]["default"]["ready"], d["queues"]["default"]["delayed"], d["queues"]["default"]["reserved"], d["queues"]["default"]["stale"], d["queues"]["default"]["failed"]')" \
	"[3, 2, 4, 1, 2]" "JSON default: ready delayed reserved stale failed"
is "$(j '[d["queues"]["mail"][k] for k in ("ready", "delayed", "reserved", "stale", "failed")]')" \
	"[1, 5, 0, 0, 2]" "JSON mail counts"
is "$(j '[d["queues"]["legacy"][k] for k in ("ready", "delayed", "reserved", "stale", "failed")]')" \
	"[2, 0, 0, 0, 0]" "JSON legacy counts"
is "$(j 'sorted(d["queues"])')" '["default", "idle", "legacy", "mail"]' "JSON lists exactly these queues"
is "$(j '120 <= d["queues"]["default"]["oldest_ready_seconds"] <= 160')" true "JSON oldest_ready_seconds about 120"
is "$(j 'sorted(d["queues"]["idle"])')" '["delayed", "description", "failed", "oldest_ready_seconds", "paused", "ready", "reserved", "stale", "waiting"]' "each queue has all nine keys (paused: jobq pause, flow_pause.sh; waiting: deps.sh; description: config_audit.sh)"
is "$(j 'd["reserve_mode"]')" "skip-locked" "JSON reserve_mode"
is "$(j 'd["workers"]')" 0 "JSON workers: 0"

# reserve_mode = update is reported as configured.
cp "$CONF" "$T/saved.ini"
sed -i 's/^heartbeat = 200ms$/heartbeat = 200ms\nreserve_mode = update/' "$CONF"
run status --json
is "$(printf '%s' "$OUT" | jget 'd["reserve_mode"]')" "update" "reserve_mode = update is reported"
cp "$T/saved.ini" "$CONF"

# ---- --queue ----
run status --queue mail --json
is "$RC" 0 "status --queue mail exits 0"
is "$(printf '%s' "$OUT" | jget 'sorted(d["queues"])')" '["mail"]' "--queue mail: only mail"
is "$(printf '%s' "$OUT" | jget '[d["queues"]["mail"][k] for k in ("ready", "delayed", "reserved", "stale", "failed")]')" \
	"[1, 5, 0, 0, 2]" "--queue mail: its counts"
run status -q default
is "$(printf '%s\n' "$OUT" | awk 'NR > 1 && $2 ~ /^[0-9]+$/ { print $1 }' | tr '\n' ' ')" "default " "-q default (text): only default"
is "$(row default)" "3 2 4 1 2" "-q default (text): its counts"
run work --queue nosuch --once
is "$RC" 65 "work --queue of an unknown queue: exit 65, as status and enqueue"
like "$ERR" "unknown queue 'nosuch'" "work: named on stderr"
run status --queue nosuch
is "$RC" 65 "unknown queue: exit 65"
like "$ERR" "unknown queue 'nosuch'" "unknown queue: named on stderr"
is "$(lines "$ERR")" 1 "unknown queue: one line"
is "$OUT" "" "unknown queue: nothing on stdout"
# A queue only an application's INSERT wrote: listed, so counted alone too
sql "INSERT INTO jobs (queue, type, payload) VALUES ('sql_only', 'x', '{}')"
run status --queue sql_only --json
is "$RC/$(printf '%s' "$OUT" | jget '[d["queues"]["sql_only"][k] for k in ("ready", "delayed")]')" "0/[1, 0]" \
	"--queue of a queue only plain SQL wrote: counted, exit 0"
sql "DELETE FROM jobs WHERE queue = 'sql_only'"
run status extra
is "$RC" 64 "an extra argument is a usage error (64)"

# ---- a queue named with 64 characters (plain SQL may write one): the
# queue column widens, the counts stay under their headings ----
long=$(printf 'q%.0s' $(seq 64))
sql "INSERT INTO jobs (queue, type, payload) VALUES ('$long', 'echo', '{}')"
run status
is "$(printf '%s\n' "$OUT" | awk -v q="$long" '$1 == "QUEUE" || $1 == "default" || $1 == q {
	match($0, /^[^ ]+ +[^ ]+/); print RLENGTH }' | sort -u | wc -l)/$(printf '%s\n' "$OUT" | grep -c "^$long ")" 1/1 \
	"a 64-character queue name: READY's count ends under its heading on every row"
sql "DELETE FROM jobs WHERE queue = '$long'"

# ---- a worker: counted alive, and the counts move ----
sql "DELETE FROM jobs WHERE lease_token IS NOT NULL"
start_worker --queue default
wait_for_sql 10 "SELECT COUNT(*) FROM jobs WHERE queue = 'default' AND available_at <= UTC_TIMESTAMP(6)" 0
ok $? "the worker drains default's ready jobs"
wait_for_sql 5 "SELECT COUNT(*) FROM jobq_workers" 1
run status --json
is "$(printf '%s' "$OUT" | jget 'd["workers"]')" 1 "JSON workers: 1 while a worker runs"
is "$(printf '%s' "$OUT" | jget '[d["queues"]["default"][k] for k in ("ready", "delayed", "reserved", "stale", "failed")]')" \
	"[0, 2, 0, 0, 2]" "default after the worker: only delayed and failed remain"
is "$(printf '%s' "$OUT" | jget 'd["queues"]["default"]["oldest_ready_seconds"]')" null "no ready job: oldest_ready_seconds is null"
kill -TERM "$WORKER_PID"
wait_exit 10 "$WORKER_PID"
is "$?" 0 "the worker stops on SIGTERM"
run status
like "$OUT" "workers alive: 0" "after it stopped: no worker alive"

# ---- jobq workers' runs by type: a 64-character type widens its column ----
sql "INSERT INTO job_runs (job_id, queue, type, attempt, worker, started_at, duration_ms, outcome, exit_status)
     VALUES (9999999, 'default', '$long', 1, 'w1', UTC_TIMESTAMP(6), 5, 'done', 'exit 0')"
run workers
is "$(printf '%s\n' "$OUT" | awk -v t="$long" '$1 == "TYPE" || $1 == "echo" || $1 == t {
	match($0, /^[^ ]+ +[^ ]+/); print RLENGTH }' | sort -u | wc -l)/$(printf '%s\n' "$OUT" | grep -c "^$long ")" 1/1 \
	"workers: a 64-character type: RUNS's count ends under its heading on every row"
finish
