# Shared by the kill-matrix tests (kill_matrix.sh, kill_ends.sh): the
# handlers' log, and the "after" point's lock on every job row, under
# which the workers' outcome writes wait until they are killed.
# Sourced after lib.sh; C is the cell's directory (its log: $C/log).

# wait_log SECS RE WANT: waits up to SECS seconds for
# `grep -c -E RE $C/log` to reach WANT.
wait_log() {
	local secs=$1 re=$2 want=$3 i=0
	while [ "$(grep -c -E "$re" "$C/log")" -lt "$want" ]; do
		i=$((i + 1))
		[ $i -le $((secs * 10)) ] || { waited_out "$1" "wait_log $*"; return 1; }
		sleep 0.1
	done
}

# lock_jobs: another session locks every job row for up to 60 s (its
# statement then is DO SLEEP(60)); sets LOCKER.
lock_jobs() {
	sql "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED; BEGIN;
		SELECT id FROM jobs FOR UPDATE; DO SLEEP(60); COMMIT" >/dev/null 2>&1 &
	LOCKER=$!
	BG_PIDS+=("$LOCKER")
	wait_for_sql 30 "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE DB = '$DB' AND INFO LIKE 'DO SLEEP(60)%'" 1
}

# unlock_jobs_killing [SQL]: kills every other connection to the test's
# database (but the locker's, and those SQL, a further condition on the
# processlist's row, spares: the writes under way never happen), then
# the locker's, which lets the rows go.
unlock_jobs_killing() {
	local id
	for id in $(sql "SELECT ID FROM information_schema.PROCESSLIST WHERE DB = '$DB'
		AND ID <> CONNECTION_ID() AND COALESCE(INFO, '') NOT LIKE 'DO SLEEP(60)%' ${1:+AND $1}"); do
		sql "KILL $id" 2>/dev/null
	done
	sql "KILL $(sql "SELECT ID FROM information_schema.PROCESSLIST WHERE INFO LIKE 'DO SLEEP(60)%'")"
	wait "$LOCKER" 2>/dev/null
}
