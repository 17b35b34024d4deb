#!/bin/bash
# Issue 8, from defect 13: `jobq work --max-time 0` printed an
# uninitialised stack buffer as its error message.  A zero --max-time is
# a usage error (64) with a message of its own, and valgrind (when
# installed, and the binary not built with AddressSanitizer) sees no use
# of uninitialised memory on that path.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
setup work_args

for t in 0 0s 0ms; do
	err=$(jq_ work --max-time $t 2>&1 >/dev/null)
	is "$?" 64 "work --max-time $t exits 64"
	is "$(echo "$err" | head -1)" "jobq: work: --max-time: expected a time above 0 (e.g. 55, 90s, 5m), not '$t'" \
		"work --max-time $t says why"
done
err=$(jq_ work --max-time soon 2>&1 >/dev/null)
is "$?" 64 "work --max-time soon exits 64"
like "$err" "^jobq: work: --max-time: bad duration 'soon'" "work --max-time soon says why"
is "$(sql "SELECT COUNT(*) FROM jobq_workers")" 0 "no worker started"

if command -v valgrind >/dev/null && ! grep -q __asan_init "$JOBQ"; then
	out=$(valgrind -q --error-exitcode=99 "$JOBQ" -c "$CONF" work --max-time 0 2>&1)
	is "$?" 64 "under valgrind: exit 64, no memory error"
	is "$(echo "$out" | grep -c '==[0-9]*==')" 0 "under valgrind: nothing reported"
else
	ok 0 "# SKIP valgrind missing or an AddressSanitizer build"
	ok 0 "# SKIP valgrind missing or an AddressSanitizer build"
fi
finish
