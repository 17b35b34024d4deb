#!/bin/bash
# fence.sh SECONDS LOG -- test handler for the fencing test: appends
# "start JOB ATTEMPT PID" to LOG, sleeps SECONDS, appends "end ...", then
# asks for a retry (exit 75) on attempt 1 and succeeds on any later one.
echo "start $JOBQ_JOB_ID $JOBQ_ATTEMPT $$" >>"$2"
sleep "$1"
echo "end $JOBQ_JOB_ID $JOBQ_ATTEMPT $$" >>"$2"
[ "$JOBQ_ATTEMPT" = 1 ] && exit 75
exit 0
