# lib.sh -- shared by the integration tests (bash).  Each test gets its own
# database on the private MariaDB server (contrib/jobq-testdb) and its own
# folder; both are removed at exit, as are the workers it started.
#
#   . "$top_srcdir/tests/lib.sh"; setup NAME
#   ok COND_EXIT_STATUS NAME / is GOT WANT NAME / like GOT REGEX NAME
#   sql "SELECT ..."   run SQL on the test database, tab-separated, no header
#   empty_tables       empty jobs, failed_jobs, job_runs and jobq_workers
#   jq_ ARGS           run jobq with the test configuration (alias: jobq_)
#   finish             print the plan and exit
#
# JOBQ_VALGRIND=1 runs every jobq of the test under valgrind (memcheck,
# errors and definite leaks fail; `make check-valgrind`): see
# valgrind_wrap.  TIME_SCALE multiplies the upper bounds of timing
# assertions (1; 5 under valgrind, whose start alone takes seconds).
set -u

: "${top_srcdir:=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
: "${JOBQ:=$top_builddir/src/jobq}"
: "${JOBQ_TESTDB:=$top_builddir/tests/db}"
TESTDB_SCRIPT=$top_srcdir/contrib/jobq-testdb
MARIADB_CLIENT=$(command -v mariadb || command -v mysql)
# Each private server's socket, as `jobq-testdb socket` gives it, found
# once (in the test's own shell: setup, db2_use) so that db_client need
# not run that script.
declare -A DB_SOCKETS=()

# db_client DIR ARGS...: the mariadb client as root on DIR's server, as
# `jobq-testdb client DIR` runs it but without starting a shell script
# first.  The tests' polls query ten times a second; the script's start
# was 40% of each query's cost, on CPU the jobq under test needs.
db_client() {
	local dir=$1
	shift
	[ -n "${DB_SOCKETS[$dir]:-}" ] || DB_SOCKETS[$dir]=$("$TESTDB_SCRIPT" socket "$dir")
	"$MARIADB_CLIENT" --no-defaults --socket="${DB_SOCKETS[$dir]}" -uroot "$@"
}
HANDLERS=$top_srcdir/handlers
TIME_SCALE=1
[ -z "${JOBQ_VALGRIND:-}" ] || TIME_SCALE=5
# A sanitizer build links its runtimes in (configure.ac): its jobq has
# ASan's entry point, where ldd shows no libasan.
SANITIZED=0
grep -q __asan_init "$JOBQ" 2>/dev/null && SANITIZED=1
# A sanitizer build pays ~0.05 s more for every jobq it starts.  A test
# that repeats a step for volume (the same path many times over, not a
# new one) asks `volume N` for its count: N, or a quarter of it in a
# sanitizer build, so that both builds take every path and the suite
# keeps inside its time.
volume() {
	if [ "$SANITIZED" = 1 ]; then echo $((($1 + 3) / 4)); else echo "$1"; fi
}
# one_build normal|sanitized WHY: CI (contrib/test-all) runs the suite in a
# normal and a sanitizer build side by side, and the whole run must fit
# its time.  A script whose worth does not depend on the build runs in
# one of them only: the scale, timing and cluster tests, and those of
# what the package installs and the docs say, in the normal build (their
# C paths run under the sanitizers in the smaller tests),
# the ones that check behaviour alone under the sanitizers (where a
# memory error is caught too).  JOBQ_EVERY_BUILD=1 runs it in both.
one_build() {
	[ -z "${JOBQ_EVERY_BUILD:-}" ] || return 0
	case $1 in
	normal) [ "$SANITIZED" = 0 ] ||
		skip_all "runs in the normal build only: $2 (JOBQ_EVERY_BUILD=1 runs it here)" ;;
	sanitized) [ "$SANITIZED" = 1 ] ||
		skip_all "runs in the sanitizer build only: $2 (JOBQ_EVERY_BUILD=1 runs it here)" ;;
	esac
}
TAP_N=0
TAP_FAILED=0
BG_PIDS=()

ok() {
	local status=$1
	shift
	TAP_N=$((TAP_N + 1))
	if [ "$status" = 0 ]; then
		echo "ok $TAP_N - $*"
	else
		echo "not ok $TAP_N - $*"
		TAP_FAILED=$((TAP_FAILED + 1))
	fi
}

is() {
	local got=$1 want=$2
	shift 2
	if [ "$got" = "$want" ]; then
		ok 0 "$*"
	else
		ok 1 "$*"
		echo "#   got:  '$got'"
		echo "#   want: '$want'"
	fi
}

like() {
	local got=$1 re=$2
	shift 2
	if [[ $got =~ $re ]]; then
		ok 0 "$*"
	else
		ok 1 "$*"
		echo "#   got:  '$got'"
		echo "#   want: /$re/"
	fi
}

diag() { echo "# $*"; }

# run CMD...: runs CMD with its output in files; sets RC, OUT, ERR and
# NERR (the number of stderr lines).  A test may define its own.
run() {
	"$@" >"$T/out" 2>"$T/err"
	RC=$?
	OUT=$(cat "$T/out")
	ERR=$(cat "$T/err")
	NERR=$(grep -c '' "$T/err")
}

# The literal string $1 as an extended regular expression.
re() { printf '%s' "$1" | sed 's/[][\.*^$+?(){}|]/\\&/g'; }

# shielded ID CMD...: runs CMD (a drain that kills a job ID waits for)
# while job ID looks reserved, under a lease no worker holds, lifted
# afterwards.  A job's end other than done ends the jobs that wait for it
# in its own transaction, down the graph, but passes over reserved ones
# (as a cancel and the sweep do), so ID is left marked for cancelling,
# parked, still in jobs, for a claim or a sweep to end: the state that a
# graph larger than a cascade's 500 jobs leaves, which the races of
# re-opening start from.
shielded() {
	local id=$1
	shift
	sql "UPDATE jobs SET lease_token = REPEAT('s', 32), lease_expires_at = UTC_TIMESTAMP(6) + INTERVAL 1 HOUR WHERE id = $id"
	"$@"
	sql "UPDATE jobs SET lease_token = NULL, lease_expires_at = NULL WHERE id = $id"
}

# conf_refused FILE LINE REGEX NAME: `jobq check` on $T/FILE.ini exits 78
# with exactly one line "FILE:LINE: message" matching REGEX, and nothing
# on stdout.
conf_refused() {
	local f=$T/$1.ini line=$2 msg=$3 name=$4
	run "$JOBQ" -c "$f" check
	is "$RC" "78" "$name: exits 78"
	is "$NERR" "1" "$name: exactly one line on stderr"
	like "$ERR" "^$(re "$f"):$line: $msg" "$name: FILE:$line: and a message naming the problem"
	is "$OUT" "" "$name: nothing on stdout"
}

skip_all() {
	echo "1..0 # SKIP $*"
	exit 0
}

finish() {
	[ -z "${JOBQ_VALGRIND:-}" ] || [ ! -d "${T:-}/valgrind" ] || valgrind_check
	echo "1..$TAP_N"
	[ "$TAP_FAILED" = 0 ]
	exit $?
}

# Starts the shared private server if the suite's first test did not
# (a test run on its own); the flock keeps parallel tests from racing.
ensure_server() {
	mkdir -p "$JOBQ_TESTDB"
	(
		flock 9
		# 9>&-: the server must not inherit (and hold) the lock
		"$TESTDB_SCRIPT" status "$JOBQ_TESTDB" || "$TESTDB_SCRIPT" start "$JOBQ_TESTDB" 9>&-
	) 9>"$JOBQ_TESTDB.lock"
}

sql() {
	db_client "$JOBQ_TESTDB" -N -B "$DB" -e "SET time_zone = '+00:00'; $*"
}

# Empties the job tables and the worker registry between the parts of
# a test (each test's database is its own).
empty_tables() {
	sql "DELETE FROM jobs; DELETE FROM failed_jobs; DELETE FROM job_runs; DELETE FROM jobq_workers"
}

# Delay in ms the job's retry was given after attempt $2: available_at
# minus the moment the handler ended (reservation time + run time), all
# in the database's clock.
retry_delay() {
	sql "SELECT ROUND((TIMESTAMPDIFF(MICROSECOND, r.started_at, j.available_at) - r.duration_ms * 1000) / 1000)
		FROM jobs j JOIN job_runs r ON r.job_id = j.id AND r.attempt = $2 WHERE j.id = $1"
}

# Where job $1 is: "queue", "failed" or "gone".
where() {
	sql "SELECT CASE WHEN EXISTS (SELECT 1 FROM jobs WHERE id = $1) THEN 'queue'
		WHEN EXISTS (SELECT 1 FROM failed_jobs WHERE id = $1) THEN 'failed' ELSE 'gone' END"
}

# Replaces the test database with one at schema version 1, as the first
# release of jobq left it, for upgrade tests.
schema_v1() {
	sql_root "DROP DATABASE \`$DB\`; CREATE DATABASE \`$DB\`"
	sql "CREATE TABLE jobq_schema (version INT UNSIGNED NOT NULL PRIMARY KEY, name VARCHAR(255) NOT NULL,
		applied_at DATETIME(6) NOT NULL DEFAULT (UTC_TIMESTAMP(6)))"
	"$TESTDB_SCRIPT" client "$JOBQ_TESTDB" "$DB" <"$top_srcdir/sql/001-schema.sql"
	sql "INSERT INTO jobq_schema (version, name) VALUES (1, '001-schema.sql')"
}

# A second private server of the test's own, in $T/db2, for tests that
# stop, restart or reconfigure a server (the shared one stays as it is):
# db2_use names it and stops it at exit; the test starts it with the
# options it needs; sql2 and wait_for_sql2 work as sql and wait_for_sql.
db2_use() {
	DB2=$T/db2
	DB_SOCKETS[$DB2]=$("$TESTDB_SCRIPT" socket "$DB2")
	trap 'stop_db2; cleanup' EXIT
}

stop_db2() { "$TESTDB_SCRIPT" stop "$DB2" >/dev/null 2>&1; }

sql2() {
	db_client "$DB2" -N -B "$DB" -e "SET time_zone = '+00:00'; $*"
}

wait_for_sql2() {
	local secs=$1 query=$2 want=$3 i=0
	while [ "$(sql2 "$query" 2>/dev/null)" != "$want" ]; do
		i=$((i + 1))
		[ $i -le $((secs * 10)) ] || return 1
		sleep 0.1
	done
}

sql_root() {
	db_client "$JOBQ_TESTDB" -N -B -e "$*"
}

jq_() {
	"$JOBQ" -c "$CONF" "$@"
}

# delayed_expiring SECS ARGS...: enqueues a job (jq_ enqueue --delay 1h
# ARGS) that expires SECS seconds from now, before it is due, for the
# tests of the expiry sweep: no way in takes a job that would never run,
# so its expiry is moved in SQL, as an application could.  Prints its id.
delayed_expiring() {
	local secs=$1 id
	shift
	id=$(jq_ enqueue --delay 1h --expires-in 2h "$@") || return 1
	sql "UPDATE jobs SET expires_at = UTC_TIMESTAMP(6) + INTERVAL $secs SECOND WHERE id = $id"
	echo "$id"
}

# Writes the test configuration: the [database] section for this test's
# database, then whatever the test passes on stdin.
write_conf() {
	{
		cat <<EOC
[database]
socket = $SOCKET
user = root
database = $DB

EOC
		cat
	} >"$CONF"
}

# Starts `jobq work ARGS` in the background, stderr to $T/worker.N.log;
# sets WORKER_PID.
start_worker() {
	local n=${#BG_PIDS[@]}
	"$JOBQ" -c "$CONF" work "$@" 2>"$T/worker.$n.log" &
	WORKER_PID=$!
	BG_PIDS+=("$WORKER_PID")
}

# Stops every background process the test started (start_worker's
# workers among them) with SIGTERM, waits up to 30 s for each, and
# forgets those that ended.  One still running is kept (and named, with
# what it waits in), so that the test's exit kills it: forgotten, it
# would hold the test's output open, and the harness with it, for as
# long as it runs.
stop_workers() {
	local p left=()
	for p in "${BG_PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
	for p in "${BG_PIDS[@]}"; do
		wait_exit 30 "$p" >/dev/null 2>&1
		[ $? != 124 ] && continue
		left+=("$p")
		diag "process $p did not stop within 30 s of SIGTERM: state $(ps -o stat= -p "$p"), in $(cat "/proc/$p/wchan" 2>/dev/null):" \
			"$(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)"
	done
	BG_PIDS=("${left[@]}")
}

# Notes in the log that a wait of $1 seconds ran out, with the line of
# the test that waited and what for ($2): a wait whose end goes
# unchecked can cost a test its time, and its point, unseen.
waited_out() {
	diag "waited $1 s in vain at line ${BASH_LINENO[1]}: $2"
}

# replylost_start DIR [LISTEN [TARGET]]: starts tests/replylost.py, the
# proxy that loses answers (its orders are the files DIR/drop, DIR/hold,
# DIR/rewrite and DIR/cut; see the script), between LISTEN (default unix:$T/p.sock)
# and TARGET (default the test server, unix:$SOCKET; "silent": a host
# that never greets), stopped at exit; waits up to 30 s for it to
# listen (the socket, or DIR/port for a tcp: LISTEN).
replylost_start() {
	local dir=$1 listen=${2:-unix:$T/p.sock} target=${3:-unix:$SOCKET} i
	mkdir -p "$dir"
	python3 "$top_srcdir/tests/replylost.py" "$listen" "$target" "$dir" &
	BG_PIDS+=($!)
	for ((i = 0; i < 300; i++)); do
		case $listen in
		unix:*) [ -S "${listen#unix:}" ] && return 0 ;;
		*) [ -s "$dir/port" ] && return 0 ;;
		esac
		sleep 0.1
	done
	return 1
}

# alerts_setup: $T/alert.sh FILE, an on_alert program that appends each
# alert it is given (one JSON object) to FILE as a line (and its
# ALERT_TAG to FILE.env), and A, the file $T/alerts, empty.  alert_count EVENT KIND [NAME]: the lines so far;
# wait_alerts SECS N EVENT KIND [NAME]: waits for N of them.
alerts_setup() {
	cat >"$T/alert.sh" <<'EOS'
#!/bin/sh
line=$(cat)
printf '%s\n' "$line" >>"$1"
printf '%s\n' "${ALERT_TAG:-unset}" >>"$1.env"
EOS
	chmod +x "$T/alert.sh"
	A=$T/alerts
	: >"$A"
	: >"$A.env"
}
alert_count() {
	grep -c "\"event\":\"$1\",.*\"kind\":\"$2\"${3:+,\"name\":\"$3\"}" "$A"
}
wait_alerts() {
	local secs=$1 n=$2 i=0
	shift 2
	while [ "$(alert_count "$@")" -lt "$n" ]; do
		i=$((i + 1))
		[ $i -le $((secs * 10)) ] || { waited_out "$secs" "wait_alerts $n $*"; return 1; }
		sleep 0.1
	done
}

# Waits up to $1 seconds for SQL $2 to print $3.
wait_for_sql() {
	local secs=$1 query=$2 want=$3 i=0
	while [ "$(sql "$query")" != "$want" ]; do
		i=$((i + 1))
		[ $i -le $((secs * 10)) ] || { waited_out "$secs" "$(tr -s '\n\t ' ' ' <<<"$query")"; return 1; }
		sleep 0.1
	done
}

# sleep_killer_start / sleep_killer_stop: in the background, kills
# every connection of the test's database caught in a DO SLEEP(60) (a
# trigger's stall), again and again, each one's id a line of $T/kills,
# until stopped: the connection under a write lost each time it is tried.
sleep_killer_start() {
	rm -f "$T/stop-watch" "$T/kills"
	(
		while [ ! -e "$T/stop-watch" ]; do
			for c in $(sql_root "SELECT id FROM information_schema.processlist WHERE db = '$DB'
				AND state = 'User sleep' AND info LIKE 'DO SLEEP(60)%'"); do
				sql_root "KILL CONNECTION $c" 2>/dev/null && echo "$c" >>"$T/kills"
			done
			sleep 0.1
		done
	) &
	SLEEP_KILLER=$!
	BG_PIDS+=("$SLEEP_KILLER")
}
sleep_killer_stop() {
	touch "$T/stop-watch"
	wait "$SLEEP_KILLER"
}

# Waits up to $1 seconds for process $2 to exit; returns its status, or
# 124 when it is still running.
wait_exit() {
	local secs=$1 pid=$2 i=0
	while kill -0 "$pid" 2>/dev/null; do
		i=$((i + 1))
		[ $i -le $((secs * 10)) ] || { waited_out "$secs" "process $pid to exit"; return 124; }
		sleep 0.1
	done
	wait "$pid"
}

cleanup() {
	local p
	# A background subshell that has not exec'd yet runs EXIT traps too:
	# only the test itself cleans up.
	[ "$BASHPID" = "$$" ] || return 0
	for p in "${BG_PIDS[@]}"; do
		kill -KILL "$p" 2>/dev/null
		pkill -KILL -P "$p" 2>/dev/null
	done
	wait 2>/dev/null
	sql_root "DROP DATABASE IF EXISTS \`$DB\`" >/dev/null 2>&1
	[ -n "${KEEP_TMP:-}" ] || rm -rf "$T"
}

# JOBQ_VALGRIND: points $JOBQ at a wrapper that runs the real binary
# under valgrind, one log per process in $T/valgrind/.  Handlers are not
# traced (they are not ours).  JOBQ_VALGRIND_SUPP overrides the
# suppression file (libmariadb/OpenSSL noise).
valgrind_wrap() {
	local vg supp=${JOBQ_VALGRIND_SUPP:-$top_srcdir/tests/valgrind.supp}
	vg=$(command -v valgrind) || { echo "Bail out! JOBQ_VALGRIND is set but valgrind is not installed"; exit 99; }
	JOBQ_REAL=$JOBQ
	mkdir -p "$T/valgrind"
	cat >"$T/valgrind/jobq" <<EOW
#!/bin/sh
exec "$vg" -q --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite \\
	--show-leak-kinds=definite --num-callers=30 \\
	--suppressions="$supp" --log-file="$T/valgrind/%p.log" "$JOBQ_REAL" "\$@"
EOW
	chmod +x "$T/valgrind/jobq"
	JOBQ=$T/valgrind/jobq
}

# Stops the test's background workers gently (so valgrind gets to check
# for leaks), then adds one assertion: no valgrind log holds an error.
# A failing log is copied to tests/valgrind-failures/ (the test folder is
# removed at exit).
valgrind_check() {
	local p log bad=0 keep=$top_builddir/tests/valgrind-failures
	for p in "${BG_PIDS[@]}"; do
		kill -TERM "$p" 2>/dev/null
	done
	for p in "${BG_PIDS[@]}"; do
		wait_exit 60 "$p" >/dev/null 2>&1
	done
	for log in "$T"/valgrind/*.log; do
		[ -s "$log" ] || continue
		bad=$((bad + 1))
		mkdir -p "$keep"
		cp "$log" "$keep/${T##*/}.${log##*/}"
		diag "valgrind: $keep/${T##*/}.${log##*/}"
		sed -n '1,40s/^/#   /p' "$log"
	done
	is "$bad" 0 "valgrind: no memory errors and no definite leaks in any jobq process"
}

# setup NAME: a database and folder of our own, a default config, schema.
setup() {
	local name=$1
	ensure_server || { echo "Bail out! cannot start the private MariaDB"; exit 99; }
	SOCKET=$("$TESTDB_SCRIPT" socket "$JOBQ_TESTDB")
	DB_SOCKETS[$JOBQ_TESTDB]=$SOCKET
	DB="t_${name//[^a-zA-Z0-9]/_}_$$"
	T=$top_builddir/tests/tmp/$name.$$
	rm -rf "$T"
	mkdir -p "$T"
	CONF=$T/jobq.ini
	[ -z "${JOBQ_VALGRIND:-}" ] || valgrind_wrap
	trap cleanup EXIT
	sql_root "DROP DATABASE IF EXISTS \`$DB\`" >/dev/null
	write_conf <<EOC
[worker]
poll_interval = 20ms

[queue default]

[handler echo]
exec = $HANDLERS/echo.sh
EOC
	jq_ init >/dev/null || { echo "Bail out! jobq init failed"; exit 99; }
}
