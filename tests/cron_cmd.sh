#!/bin/bash
# `jobq cron EXPR`: description, next fire times with the zone's offset,
# "never", exit 65 with the field and column of a bad expression (64 for
# a bad option value); no
# configuration file and no database are needed.
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export JOBQ_CONFIG=$T/does-not-exist.ini

OUT=$("$JOBQ" cron '30 9-17/2 * * 1-5' --count 3 --from 2026-11-30T20:00:00Z)
is "$?" 0 "jobq cron exits 0"
is "$OUT" "at 09:30, 11:30, 13:30, 15:30 and 17:30, Monday through Friday
2026-12-01T09:30:00+00:00
2026-12-01T11:30:00+00:00
2026-12-01T13:30:00+00:00" "description, then the next 3 fire times (no config, no database)"
OUT=$("$JOBQ" cron '30 2 * * *' --timezone Europe/Berlin --from '2025-03-29 12:00' -n 2)
is "$OUT" "at 02:30
2025-03-30T03:00:00+02:00
2025-03-31T02:30:00+02:00" "--timezone: a local --from; the skipped 02:30 runs at 03:00+02:00"
is "$("$JOBQ" cron '* * * * *' --from 2026-01-01T00:00:30Z | wc -l)" 6 "the default count is 5"
now=$(date -u +%s)
first=$("$JOBQ" cron '* * * * *' -n 1 | tail -1)
t=$(date -u -d "$first" +%s)
ok $([ "$t" -gt "$now" ] && [ "$t" -le $((now + 61)) ]; echo $?) "the default --from is now"
OUT=$("$JOBQ" cron '0 0 31 4 *' 2>"$T/never.err")
is "$?/$OUT" "65/never (no such day)" "an expression that never fires says never once and exits 65 (issue 19, item 17)"
is "$(cat "$T/never.err")" "jobq: cron: the expression names no date that exists: it never fires" "... and says why on stderr"
# Vixie cron's reading (issue 19, item 17): N-N/S is N alone; day of week
# is 0-7, so a step of 7 there is Sunday.
is "$("$JOBQ" cron '48-48/3 * * * *' -n 3 --from 2026-01-05T10:00:00Z | tail -n 3)" "2026-01-05T10:48:00+00:00
2026-01-05T11:48:00+00:00
2026-01-05T12:48:00+00:00" "48-48/3 fires at :48 only"
is "$("$JOBQ" cron '0 0 * * 3-3/2' -n 2 --from 2026-01-05T10:00:00Z | tail -n 2)" "2026-01-07T00:00:00+00:00
2026-01-14T00:00:00+00:00" "3-3/2 in day of week is Wednesday only"
is "$("$JOBQ" cron '0 0 * * */7' -n 2 --from 2026-01-05T10:00:00Z | tail -n 2)" "2026-01-11T00:00:00+00:00
2026-01-18T00:00:00+00:00" "*/7 in day of week is accepted: Sunday"
ERR=$("$JOBQ" cron '30 12 32 * *' 2>&1 >/dev/null)
is "$?" 65 "a bad expression exits 65"
is "$ERR" "jobq: cron: day of month: 32 is out of range 1-31 (column 7)" "... naming the field and the column"
# A bad option value is a usage error (64), as everywhere; 65 is for the
# expression itself.
ERR=$("$JOBQ" cron '0 0 * * *' --timezone Mars/Base 2>&1 >/dev/null)
is "$?" 64 "an unknown --timezone is a bad option value: exits 64"
like "$ERR" "^jobq: cron: --timezone: unknown time zone 'Mars/Base'" "... naming the option"
ERR=$("$JOBQ" cron '0 0 * * *' --from yesterday 2>&1 >/dev/null)
is "$?" 64 "a bad --from is a bad option value: exits 64, as a bad --count does"
like "$ERR" "^jobq: cron: --from: " "... naming the option"
"$JOBQ" cron '0 0 * * *' --count x >/dev/null 2>&1
is "$?" 64 "a bad --count exits 64"
# A number is named as it was written, however long (it read 999999).
is "$("$JOBQ" cron '99999999999 * * * *' 2>&1)" "jobq: cron: minute: 99999999999 is out of range 0-59 (column 1)" \
	"a huge value is named as written"
is "$("$JOBQ" cron '*/1000000 * * * *' 2>&1)" "jobq: cron: minute: step 1000000 is wider than the field (0-59) (column 3)" \
	"a huge step is named as written"
"$JOBQ" cron >/dev/null 2>&1
is "$?" 64 "no expression is a usage error (64)"
"$JOBQ" cron 0 0 '*' '*' '*' >/dev/null 2>&1
is "$?" 64 "an unquoted expression is a usage error (64)"
finish
