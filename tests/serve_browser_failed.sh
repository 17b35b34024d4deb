#!/bin/bash
# The dead letter's Retry selected and Clear all, stopped half-way by
# another admin (a role taken away, the sessions ended), in a real
# browser (tests/browser/failed_stop.mjs): the page says how many jobs
# it did, why it stopped and how many it left, as a bulk action does.
# Skipped, with the reason, when Chromium, Node or the npm packages are
# missing.
. "$top_srcdir/tests/lib.sh"

. "$top_srcdir/tests/browser_lib.sh"
browser_once
setup serve_browser_failed

serve_two_admins
browser_run failed_stop USER_NAME=ada JOBQ="$JOBQ" CONF="$CONF"
