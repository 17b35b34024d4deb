#!/bin/bash
# flaky.sh -- fails at random, to watch retries and backoff.
#
# Payload: {"fail_percent": 50}  (optional; default 50).  Exits 75
# (EX_TEMPFAIL: "try again later") that often, else succeeds.  A real
# handler fails like this when a service it needs is briefly away.
set -eu
payload=$(cat)
pct=50
if [[ $payload =~ \"fail_percent\"[[:space:]]*:[[:space:]]*([0-9]+) ]]; then
	pct=${BASH_REMATCH[1]}
fi
if [ $((RANDOM % 100)) -lt "$pct" ]; then
	echo "flaky: upstream did not answer (attempt $JOBQ_ATTEMPT of $JOBQ_MAX_ATTEMPTS)" >&2
	exit 75
fi
echo "flaky: worked on attempt $JOBQ_ATTEMPT"
