#!/bin/sh
# alert-mail.sh -- an on_dead program: mail a person that a job was
# dead-lettered.
#
#   [handler send_email]
#   on_dead = /usr/local/libexec/jobq/alert-mail.sh
#   env.ALERT_MAIL_TO = ops@example.com
#
# Reads the dead job as one JSON object on stdin (id, queue, type,
# payload, attempts, reason, error, failed_at) and sends it with
# `sendmail -t`.  ALERT_MAIL_TO (required) is the recipient,
# ALERT_MAIL_FROM the sender (default: the run user), SENDMAIL the
# program (default: sendmail found in PATH, /usr/sbin or /usr/lib).
# A failure here is logged by the worker and changes nothing about the job.
set -eu
to=${ALERT_MAIL_TO:?set env.ALERT_MAIL_TO = ADDRESS in the handler section}
from=${ALERT_MAIL_FROM:-}
job=$(cat)
# jobq writes id, queue and type first, in that order: read them from the
# start of the object (a payload may hold keys of the same names).  Only
# digits and name characters get into the header.
head='^{"id":\([0-9]*\),"queue":"\([^"]*\)","type":"\([^"]*\)".*'
id=$(printf '%s\n' "$job" | sed -n "1s/$head/\\1/p" | tr -cd '0-9')
type=$(printf '%s\n' "$job" | sed -n "1s/$head/\\3/p" | tr -cd 'A-Za-z0-9_.:-' | cut -c1-64)
sendmail=${SENDMAIL:-}
if [ -z "$sendmail" ]; then
	for s in "$(command -v sendmail 2>/dev/null || true)" /usr/sbin/sendmail /usr/lib/sendmail; do
		if [ -n "$s" ] && [ -x "$s" ]; then
			sendmail=$s
			break
		fi
	done
fi
[ -n "$sendmail" ] || { echo "alert-mail.sh: no sendmail found (set env.SENDMAIL)" >&2; exit 69; }
{
	printf 'To: %s\n' "$to"
	[ -z "$from" ] || printf 'From: %s\n' "$from"
	printf 'Subject: jobq: job %s (%s) was dead-lettered\n' "$id" "$type"
	printf 'Content-Type: text/plain; charset=UTF-8\n\n'
	printf 'A job failed for good and waits in failed_jobs for a person.\n'
	printf 'See it with: jobq failed show %s\n\n' "$id"
	printf '%s\n' "$job"
} | "$sendmail" -t
