#!/bin/sh
# echo.sh -- the smallest jobq handler: print the payload and succeed.
#
# Reads the JSON payload on stdin and writes it to stdout (kept as the
# run's output).  Shows the contract's environment on stderr.
set -eu
payload=$(cat)
printf 'job %s (%s, queue %s, attempt %s of %s): %s\n' \
	"$JOBQ_JOB_ID" "$JOBQ_TYPE" "$JOBQ_QUEUE" "$JOBQ_ATTEMPT" "$JOBQ_MAX_ATTEMPTS" "$payload"
exit 0
