#!/bin/bash
# Adding and removing database schedules in a real browser
# (tests/browser/schedpanel.mjs): the Add form with its live checks and
# preview, Remove with its confirmation, descriptions and disabled
# schedules in the list, job links in the history, no form for a viewer;
# the gone names a renamed INI section leaves, with Remove for an admin
# and the command for a viewer, at 375 px with 64-character names.
# Skipped, with the reason, when Chromium, Node or the npm packages are
# missing.
. "$top_srcdir/tests/lib.sh"

. "$top_srcdir/tests/browser_lib.sh"
browser_once
setup serve_browser_schedpanel

write_conf <<EOC
[worker]
timezone = Asia/Tokyo

[queue default]

[handler echo]
exec = $HANDLERS/echo.sh

[handler boom]
exec = $HANDLERS/echo.sh

[schedule nightly]
cron = 0 3 * * *
type = echo
description = the nightly report

[schedule sleepy]
cron = */5 * * * *
type = echo

[user admin]
password_hash = $PWHASH
role = admin

[user viewer]
password_hash = $PWHASH
role = viewer
EOC
serve_start

# Before the browser comes: one schedule off, and one fire with a job to
# link to.
login admin "$T/jar"
post /api/schedules/disable "$T/jar" '{"name": "sleepy"}'
[ "$CODE" = 200 ] || { echo "Bail out! disable: $CODE $BODY"; exit 99; }
post /api/schedules/run-now "$T/jar" '{"name": "nightly"}'
[ "$CODE" = 200 ] || { echo "Bail out! run-now: $CODE $BODY"; exit 99; }

# Two gone names (what renamed INI sections left), of 64 characters:
# one the admin removes, one the viewer sees.
G1=gone-$(printf 'a%.0s' $(seq 1 59))
G2=gone-$(printf 'b%.0s' $(seq 1 59))
for g in "$G1" "$G2"; do
	sql "INSERT INTO jobq_schedule_state (name, checked_until) VALUES ('$g', UTC_TIMESTAMP());
		INSERT INTO jobq_schedule_runs (name, fire_at, status) VALUES ('$g', UTC_TIMESTAMP() - INTERVAL 1 HOUR, 'missed')"
done

browser_run schedpanel USER_NAME=admin VIEWER_NAME=viewer GONE1="$G1" GONE2="$G2"
