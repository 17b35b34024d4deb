#!/bin/bash
# The Users page in a real browser (tests/browser/users.mjs): an admin
# adds a database user, which logs in in a browser of its own, then is
# made an admin, given a new password (its browser falls back to the
# login form) and removed; a jobq.ini name is refused under the form.
# Skipped, with the reason, when Chromium, Node or the npm packages are
# missing.
. "$top_srcdir/tests/lib.sh"

. "$top_srcdir/tests/browser_lib.sh"
browser_once
setup serve_browser_users

write_conf <<EOC
[queue default]

[handler echo]
exec = $HANDLERS/echo.sh

[user admin]
password_hash = $PWHASH
role = admin
EOC
serve_start
browser_run users USER_NAME=admin
