#!/bin/bash
# solo.sh SECONDS LOCK LOG -- test handler that notices two handlers
# running at once, whatever their jobs.  It holds an flock on LOCK for as
# long as it (and its sleep) lives; when another holds it, it appends
# "overlap JOB" to LOG.  Then it sleeps SECONDS, prints "slept" and exits 0.
exec 9>>"$2"
flock -n 9 || echo "overlap $JOBQ_JOB_ID" >>"$3"
sleep "$1"
echo slept
