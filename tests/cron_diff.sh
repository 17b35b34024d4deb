#!/bin/bash
# Differential test of the cron module: `jobq cron` against Python's
# croniter for 1,000 random valid expressions (tests/cron_diff.py).  The
# Debian python is used on purpose: python3-croniter is a distribution
# package, and a python3 earlier on PATH (pyenv) would not see it.
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${JOBQ:=$top_srcdir/_build/src/jobq}"
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "1..0 # SKIP $PY is not installed"; exit 0; }
# The same paths a quarter as often in a sanitizer build (see volume in
# tests/lib.sh): 1,000 starts of jobq there take minutes.
n=1000
grep -q __asan_init "$JOBQ" 2>/dev/null && n=250
JOBQ_CRON_DIFF_N=$n exec "$PY" "$top_srcdir/tests/cron_diff.py" "$JOBQ"
