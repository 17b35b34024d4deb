#!/bin/bash
# The scheduler's audit: what the other schedule tests did not pin.
#   1. an INI [schedule NAME] whose cron never fires (0 0 31 2 *) is a
#      configuration error at FILE:LINE (exit 78), as `jobq schedule
#      add` refuses it, and as every other bad key is.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
setup sched_audit

# ---- 1. an INI cron that never fires ----
cat >"$T/never.ini" <<EOC
[database]
socket = $SOCKET
user = root
database = $DB
[queue default]
[handler echo]
exec = /bin/true
[schedule feb]
type = echo
cron = 0 0 31 2 *
EOC
conf_refused never 10 "cron: '0 0 31 2 \\*' names no date that exists: it would never fire" \
	"1: an INI cron that never fires"
run "$JOBQ" -c "$T/never.ini" schedule
is "$RC/$OUT" "78/" "1: ... and a tick refuses the file too (78), enqueueing nothing"
sed -i 's/^cron = .*/cron = 0 0 29 2 */' "$T/never.ini"
run "$JOBQ" -c "$T/never.ini" check
is "$RC" 0 "1: Feb 29 exists (in leap years): the file is fine"
finish
