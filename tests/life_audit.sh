#!/bin/bash
# A job's lifecycle where its parts meet (the lifecycle audit): a cancel
# that finds the job let go by its worker (its attempt ended first as a
# retry, or the worker died) says so, rather than that it stopped the
# handler, and an id given twice is cancelled once; a backoff of
# "exponential BASE" over the default CAP says that CAP is 10m.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"
. "$top_srcdir/tests/operator/common.sh"
setup life_audit

# ---- cancel: a job its worker let go before it saw the request ----
# A lease with no worker behind it: the command asks, waits, and ends the
# job itself once the lease has run out (cancel_settle).
c=$(sql "INSERT INTO jobs (queue, type, payload, available_at, attempts, lease_token, lease_expires_at,
	reserved_at, reserved_by) VALUES ('default', 'echo', '{}', UTC_TIMESTAMP(6), 1, 'feedface',
	UTC_TIMESTAMP(6) + INTERVAL 1 SECOND, UTC_TIMESTAMP(6), 'gone:1:dead'); SELECT LAST_INSERT_ID()")
run cancel --wait 10s "$c"
is "$RC" 0 "cancel of a job whose worker is gone: exit 0"
like "$OUT" "job $c: cancelled before its next attempt \\(its handler had ended first, to be retried, or its worker died\\)" \
	"it says its handler was not stopped by this cancel"
is "$(sql "SELECT outcome FROM job_runs WHERE job_id = $c")" cancelled "and the job is cancelled, once"

# ---- cancel ID ID: one job, cancelled once (not "had already ended") ----
d=$(jq_ enqueue --delay 1h echo '{}')
run cancel "$d" "$d"
is "$RC|$OUT" "0|job $d: cancelled" "an id given twice is one job: cancelled once, exit 0"
is "$(sql "SELECT COUNT(*) FROM job_runs WHERE job_id = $d")" 1 "with one run"

# ---- backoff: "exponential BASE" alone takes the CAP of 10m ----
conf_with() { # conf_with BACKOFF: the usual config, handler echo given it
	write_conf <<EOC
[queue default]

[handler echo]
exec = $HANDLERS/echo.sh
backoff = $1
EOC
}
conf_with "exponential 20m"
run check
is "$RC" 78 "backoff = exponential 20m (no CAP): a configuration error"
like "$ERR" "jobq.ini:10: backoff: bad backoff 'exponential 20m' \\(BASE is over the default CAP of 10m: give a CAP" \
	"the message says the CAP left out is 10m, not that a CAP given is too small"
conf_with "exponential 20m 1h"
run check
is "$RC" 0 "with a CAP it is accepted"
finish
