#!/bin/bash
# Adding and removing database schedules in a real browser
# (tests/browser/schedpanel.mjs): the Add form with its live checks and
# preview, Remove with its confirmation, descriptions and disabled
# schedules in the list, job links in the history, no form for a viewer.
# Skipped, with the reason, when Chromium, Node or the npm packages are
# missing.
. "$top_srcdir/tests/lib.sh"

CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
BROWSER_DIR=$top_srcdir/tests/browser
[ -x "$CHROMIUM" ] || skip_all "no Chromium at $CHROMIUM (apt-get install chromium)"
command -v node >/dev/null || skip_all "no node (apt-get install nodejs npm)"
[ -d "$BROWSER_DIR/node_modules/puppeteer-core" ] ||
	skip_all "puppeteer-core is not installed: run 'npm ci' in tests/browser"

. "$top_srcdir/tests/operator/common.sh"
. "$top_srcdir/tests/serve_lib.sh"
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

cat >"$T/sql.sh" <<EOS
#!/bin/bash
exec "$TESTDB_SCRIPT" client "$JOBQ_TESTDB" -N -B "$DB" -e "SET time_zone = '+00:00'; \$1"
EOS
chmod +x "$T/sql.sh"

SHOTS=$top_builddir/tests/screenshots
mkdir -p "$SHOTS"
URL=$URL USER_NAME=admin VIEWER_NAME=viewer PASSWORD=$PW SQL_SH=$T/sql.sh SHOTS=$SHOTS CHROMIUM=$CHROMIUM \
	PROFILE=$T/chromium-profile node "$BROWSER_DIR/schedpanel.mjs"
rc=$?
serve_stop
exit $rc
