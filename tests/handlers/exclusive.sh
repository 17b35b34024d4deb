#!/bin/bash
# exclusive.sh SECONDS LOG LOCKDIR -- test handler that notices a job
# running twice at once.  It holds an flock on LOCKDIR/JOB for as long as
# it (or its sleep) lives, killed or not.  When another run of the same
# job holds it, it appends "overlap JOB ATTEMPT PID" to LOG and exits 1;
# otherwise it appends "start JOB ATTEMPT PID", sleeps SECONDS, appends
# "end JOB ATTEMPT PID" and exits 0.
exec 9>>"$3/$JOBQ_JOB_ID.lock"
if ! flock -n 9; then
	echo "overlap $JOBQ_JOB_ID $JOBQ_ATTEMPT $$" >>"$2"
	exit 1
fi
echo "start $JOBQ_JOB_ID $JOBQ_ATTEMPT $$" >>"$2"
sleep "$1"
echo "end $JOBQ_JOB_ID $JOBQ_ATTEMPT $$" >>"$2"
