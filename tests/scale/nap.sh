#!/bin/bash
# nap.sh SECONDS LOG [ignore-term] -- test handler: appends
# "start JOB ATTEMPT PID" to LOG, sleeps SECONDS (ignoring SIGTERM, it and
# its sleep, when asked), appends "end JOB ATTEMPT PID", exits 0.
[ "${3:-}" = ignore-term ] && trap '' TERM
echo "start $JOBQ_JOB_ID $JOBQ_ATTEMPT $$" >>"$2"
sleep "$1"
echo "end $JOBQ_JOB_ID $JOBQ_ATTEMPT $$" >>"$2"
