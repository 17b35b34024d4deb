#!/bin/sh
# alert-webhook.sh -- an on_dead program: POST the dead job to a webhook.
#
#   [worker]
#   on_dead = /usr/local/libexec/jobq/alert-webhook.sh
#   env.ALERT_WEBHOOK_URL = https://hooks.example.com/jobq
#
# It posts any JSON object it is given, so it serves as on_alert too (a
# watchdog's incident); [worker] env.NAME reaches both.
#
# Reads the dead job as one JSON object on stdin (id, queue, type,
# payload, attempts, reason, error, failed_at) and sends it unchanged as
# the body of a POST (Content-Type: application/json) with curl.
# ALERT_WEBHOOK_URL (required) is where; curl's own failure (no answer in
# 20 seconds, an HTTP status of 400 or more) is the program's failure,
# which the worker logs and which changes nothing about the job.
set -eu
url=${ALERT_WEBHOOK_URL:?set env.ALERT_WEBHOOK_URL = URL in the handler or [worker] section}
exec curl --silent --show-error --fail --max-time 20 \
	-H 'Content-Type: application/json' --data-binary @- "$url"
