#!/bin/bash
# The Audit page in a real browser (tests/browser/audit.mjs): an admin
# finds it in the menu, filters it by action, pages it, follows a job
# link, reads it at 375 px without sideways scrolling; data reaches the
# page only as text; a viewer has no Audit link.  Skipped, with the
# reason, when Chromium, Node or the npm packages are missing.
. "$top_srcdir/tests/lib.sh"

. "$top_srcdir/tests/browser_lib.sh"
browser_once
setup serve_browser_audit

write_conf <<EOC
[queue default]
[queue mail]

[handler echo]
exec = $HANDLERS/echo.sh

[user admin]
password_hash = $PWHASH
role = admin

[user viewer]
password_hash = $PWHASH
role = viewer
EOC
serve_start

# Rows of several kinds made through the API before the browser comes:
# a login, a pause, an enqueue (the one row with a job to link to).
login admin "$T/jar"
post /api/queues/pause "$T/jar" '{"queue": "mail"}'
[ "$CODE" = 200 ] || { echo "Bail out! pause: $CODE $BODY"; exit 99; }
post /api/enqueue "$T/jar" '{"type": "echo", "payload": "{}"}'
[ "$CODE" = 200 ] || { echo "Bail out! enqueue: $CODE $BODY"; exit 99; }

browser_run audit USER_NAME=admin VIEWER_NAME=viewer
