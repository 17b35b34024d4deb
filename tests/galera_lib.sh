# galera_lib.sh -- for the Galera tests (bash): a private cluster of
# three nodes per test (contrib/jobq-testcluster), stopped at exit.
#
#   . "$top_srcdir/tests/galera_lib.sh"; galera_setup NAME PORT [NODES]
#   gsql I "SELECT ..."   SQL on node I, the test's database, no header,
#                         reads causal (they see every commit made before)
#   gconf FILE HOSTS      a configuration for the host list HOSTS (the
#                         test's [worker], queue and handlers come on stdin)
#   H1 H2 H3              the nodes' "127.0.0.1:PORT"
#
# The test is skipped, with the reason printed, when this machine cannot
# run a cluster (no galera-4, no rsync, no mariadbd).  Each test names its
# own PORT (node I uses PORT+10*(I-1) .. +3), so tests run side by side
# under make -j; the cluster lives under /tmp (a short path: the nodes'
# unix sockets must fit sun_path) and, run as root, belongs to the mysql
# user, which must be able to reach it.
. "$top_srcdir/tests/lib.sh"
one_build normal "a cluster test"
CLUSTER_SCRIPT=$top_srcdir/contrib/jobq-testcluster

galera_cleanup() {
	local p
	[ "$BASHPID" = "$$" ] || return 0
	for p in "${BG_PIDS[@]}"; do
		kill -KILL "$p" 2>/dev/null
		pkill -KILL -P "$p" 2>/dev/null
	done
	wait 2>/dev/null
	"$CLUSTER_SCRIPT" stop "$CLUSTER" >/dev/null 2>&1
	if [ -z "${KEEP_TMP:-}" ]; then
		rm -rf "$T" "$CLUSTER"
	fi
}

galera_setup() {
	local name=$1 port=$(($2 + ${JOBQ_TEST_PORT_OFFSET:-0})) nodes=${3:-3} why
	why=$("$CLUSTER_SCRIPT" missing /tmp/jobq-missing-probe.$$ 2>&1)
	rmdir /tmp/jobq-missing-probe.$$ 2>/dev/null
	[ -z "$why" ] || skip_all "cannot run a Galera cluster here: $why"
	DB="g_${name//[^a-zA-Z0-9]/_}"
	T=$top_builddir/tests/tmp/$name.$$
	rm -rf "$T"
	mkdir -p "$T"
	CONF=$T/jobq.ini
	CLUSTER=$(mktemp -d /tmp/jobq-galera.XXXXXX)
	chmod 755 "$CLUSTER"
	trap galera_cleanup EXIT
	"$CLUSTER_SCRIPT" start "$CLUSTER" "$nodes" "$port" >"$T/cluster.log" 2>&1 || {
		cat "$T/cluster.log"
		echo "Bail out! cannot start the Galera cluster"
		exit 99
	}
	H1=127.0.0.1:$port
	H2=127.0.0.1:$((port + 10))
	H3=127.0.0.1:$((port + 20))
}

# Reads are causal (wsrep_sync_wait = 1): a node applies what the cluster
# committed elsewhere a little later, and a test's read on node 2 right
# after a write through node 1 must see it.
gsql_raw() {
	local i=$1
	shift
	"$CLUSTER_SCRIPT" client "$CLUSTER" "$i" -N -B "$DB" -e \
		"SET time_zone = '+00:00', SESSION wsrep_sync_wait = 1; $*"
}

# gsql I SQL: gsql_raw, mended as jobq mends its own statements.  A node
# whose cached copy of jobs lost its triggers to a statement aborted as
# they loaded (the server defect of src/db_error.c, which a test's own
# races can set off) fails every later statement on jobs, error 1064
# "... has an error in its body", until the copy is flushed: the test's
# statements then flush it and run again (up to twice).  The statement
# that failed did nothing (the copy fails as the table opens); the
# strings the tests send here are one statement, reads, or deletes, so
# running the whole string again changes nothing twice.
gsql() {
	local i=$1 err out rc k
	shift
	err=$(mktemp "$T/gsql.XXXXXX")
	for k in 1 2 3; do
		out=$(gsql_raw "$i" "$*" 2>"$err")
		rc=$?
		[ "$rc" != 0 ] && grep -q "has an error in its body" "$err" && [ "$k" -lt 3 ] || break
		gsql_raw "$i" "SET SESSION lock_wait_timeout = 10; FLUSH LOCAL TABLES jobs, failed_jobs" 2>/dev/null
	done
	cat "$err" >&2
	rm -f "$err"
	[ -z "$out" ] || printf '%s\n' "$out"
	return "$rc"
}

# ring I: the three nodes' host list starting at node I, then in order
# round (node 2: n2,n3,n1): each node's workers fail over to the next.
ring() {
	case $1 in
	1) echo "$H1,$H2,$H3" ;;
	2) echo "$H2,$H3,$H1" ;;
	3) echo "$H3,$H1,$H2" ;;
	esac
}

gconf() {
	local file=$1 hosts=$2
	{
		cat <<EOC
[database]
host = $hosts
user = root
database = $DB

EOC
		cat
	} >"$file"
}

# start_worker_conf FILE ARGS: as start_worker, with configuration FILE.
start_worker_conf() {
	local n=${#BG_PIDS[@]} conf=$1
	shift
	"$JOBQ" -c "$conf" work "$@" 2>"$T/worker.$n.log" &
	WORKER_PID=$!
	BG_PIDS+=("$WORKER_PID")
}

# both CMD...: jobq CMD through node 1 ($T/n1.ini) and node 2 ($T/n2.ini)
# at once; counts in bad a pair where either failed or wrote to stderr
# (the first one shown), and keeps both outputs in $T/o1 and $T/o2.
both() {
	local a b r1 r2
	"$JOBQ" -c "$T/n1.ini" "$@" >"$T/o1" 2>"$T/e1" &
	a=$!
	"$JOBQ" -c "$T/n2.ini" "$@" >"$T/o2" 2>"$T/e2" &
	b=$!
	wait $a
	r1=$?
	wait $b
	r2=$?
	if [ "$r1:$r2" != 0:0 ] || [ -s "$T/e1" ] || [ -s "$T/e2" ]; then
		bad=$((bad + 1))
		[ "$bad" -gt 1 ] || diag "$*: exits $r1 $r2: $(cat "$T/e1" "$T/e2")"
	fi
}
