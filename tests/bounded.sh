#!/bin/bash
# bounded.sh TEST: runs the test script TEST (bash) for at most
# JOBQ_TEST_LIMIT seconds (default 600, six times the longest test
# takes), the log compiler of every .sh test.
#
# A test that hangs would otherwise hold `make check` -- and CI's whole
# run -- until CI gives up, with nothing in the log to say where.  A test
# ends for the harness when its stdout closes, so a process it started
# that never ends (a worker stuck in a call, a server it started by
# mistake) holds it as surely as the script itself.  Past the bound this
# prints what every process of the test was doing (state, the kernel
# wait it sits in, its command line), the tail of each worker log, one
# failing assertion and "Bail out!", then kills the test's process group
# and every process below it (handlers have groups of their own).
limit=${JOBQ_TEST_LIMIT:-600}
test=$1

# holders: the processes, other than this one and those above it (the
# harness's driver), that hold the write end of the pipe that is our
# stdout, the harness's reader at the other end.
pipe=$(readlink /proc/$$/fd/1)
above=" $$ "
p=$$
while p=$(ps -o ppid= -p "$p" 2>/dev/null) && p=${p// /} && [ "${p:-0}" -gt 1 ]; do
	above="$above$p "
done
holders() {
	local f p
	case $pipe in pipe:*) ;; *) return 0 ;; esac
	# -lname takes a pattern: the brackets of pipe:[INODE] are escaped
	for f in $(find /proc/[0-9]*/fd -lname "pipe:\\[${pipe//[^0-9]/}\\]" 2>/dev/null); do
		p=${f#/proc/}
		p=${p%%/*}
		[[ $above != *" $p "* ]] || continue
		grep -q '^flags:.*[12]$' "/proc/$p/fdinfo/${f##*/}" 2>/dev/null && echo "$p"
	done | sort -u
}

# show PID...: one comment line per process: state, kernel wait, command.
show() {
	local p
	for p in "$@"; do
		printf '#   %s %s wchan=%s: %s\n' "$p" "$(ps -o stat= -p "$p" 2>/dev/null)" \
			"$(cat "/proc/$p/wchan" 2>/dev/null)" "$(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | cut -c1-160)"
	done
}

# After the test: a process it left behind that still holds its stdout
# keeps the harness waiting however long it runs.  One that is ending
# (a worker's handler guard does, within a second of its worker) gets
# 30 s; then it is named, killed, and the test fails.
left_behind() {
	local p end=$((SECONDS + 30))
	while p=$(holders) && [ -n "$p" ]; do
		[ "$SECONDS" -lt "$end" ] || break
		sleep 0.2
	done
	[ -n "$p" ] || return 0
	echo "not ok - $test ended, but these processes it started still held its output 30 s later:"
	# shellcheck disable=SC2086
	show $p
	echo "Bail out! $test left processes running"
	# shellcheck disable=SC2086
	kill -KILL $p 2>/dev/null
	exit 99
}

# The test in a session (and process group) of its own, so that the
# kill reaches what it started in the background too.  A background
# child of this shell is no group leader: setsid makes the session
# without a fork, and $! is the test's shell.
setsid bash "$@" &
pid=$!
sleep "$limit" >/dev/null 2>&1 &
sleeper=$!
wait -n -p ended "$pid" "$sleeper"
rc=$?
if [ "${ended:-}" = "$pid" ]; then
	kill "$sleeper" 2>/dev/null
	left_behind
	exit "$rc"
fi

# below PID: PID and every process under it.
below() {
	local p
	echo "$1"
	for p in $(ps -o pid= --ppid "$1" 2>/dev/null); do below "$p"; done
}
procs=$(below "$pid")
echo "not ok - $test ran over its time bound of $limit s (tests/bounded.sh); what its processes were doing:"
# shellcheck disable=SC2086
show $procs
for log in "${top_builddir:-.}"/tests/tmp/*."$pid"/worker.*.log; do
	[ -f "$log" ] || continue
	echo "#   -- ${log#"${top_builddir:-.}"/} (last lines)"
	tail -n 5 "$log" | cut -c1-200 | sed 's/^/#   /'
done
echo "Bail out! $test ran over $limit s"
for p in $procs; do kill -KILL "$p" 2>/dev/null; done
kill -KILL -- -"$pid" 2>/dev/null
wait "$pid" 2>/dev/null
exit 99
