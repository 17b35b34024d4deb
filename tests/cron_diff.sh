#!/bin/bash
# Differential test of the cron module: `jobq cron` against Python's
# croniter for 1,000 random valid expressions (tests/cron_diff.py).  The
# Debian python is used on purpose: python3-croniter is a distribution
# package, and a python3 earlier on PATH (pyenv) would not see it.
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${JOBQ:=$top_srcdir/_build/src/jobq}"
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "1..0 # SKIP $PY is not installed"; exit 0; }
# It runs in the normal build only (one_build in tests/lib.sh: the
# parser's paths run under the sanitizers in tests/cron_cmd.sh and
# tests/schedule.sh), unless JOBQ_EVERY_BUILD=1, and there the same
# paths a quarter as often: 1,000 starts of jobq there take minutes.
n=1000
if grep -q __asan_init "$JOBQ" 2>/dev/null; then
	[ -n "${JOBQ_EVERY_BUILD:-}" ] || {
		echo "1..0 # SKIP runs in the normal build only: a differential test (JOBQ_EVERY_BUILD=1 runs it here)"
		exit 0
	}
	n=250
fi
JOBQ_CRON_DIFF_N=$n exec "$PY" "$top_srcdir/tests/cron_diff.py" "$JOBQ"
