#!/bin/bash
# A bulk retry on the dashboard that another admin stops half-way (a role
# taken away, the sessions ended), in a real browser
# (tests/browser/bulk_stop.mjs): the page says how many of the confirmed
# jobs it retried, why it stopped and how many it left.  Skipped, with
# the reason, when Chromium, Node or the npm packages are missing.
. "$top_srcdir/tests/lib.sh"

. "$top_srcdir/tests/browser_lib.sh"
browser_once
setup serve_browser_bulk

serve_two_admins
browser_run bulk_stop USER_NAME=ada JOBQ="$JOBQ" CONF="$CONF"
