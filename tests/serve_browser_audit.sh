#!/bin/bash
# The Audit page in a real browser (tests/browser/audit.mjs): an admin
# finds it in the menu, filters it by action, pages it, follows a job
# link, reads it at 375 px without sideways scrolling; data reaches the
# page only as text; a viewer has no Audit link.  Skipped, with the
# reason, when Chromium, Node or the npm packages are missing.
. "$top_srcdir/tests/lib.sh"

CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
BROWSER_DIR=$top_srcdir/tests/browser
[ -x "$CHROMIUM" ] || skip_all "no Chromium at $CHROMIUM (apt-get install chromium)"
command -v node >/dev/null || skip_all "no node (apt-get install nodejs npm)"
[ -d "$BROWSER_DIR/node_modules/puppeteer-core" ] ||
	skip_all "puppeteer-core is not installed: run 'npm ci' in tests/browser"

. "$top_srcdir/tests/operator/common.sh"
. "$top_srcdir/tests/serve_lib.sh"
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

cat >"$T/sql.sh" <<EOS
#!/bin/bash
exec "$TESTDB_SCRIPT" client "$JOBQ_TESTDB" -N -B "$DB" -e "SET time_zone = '+00:00'; \$1"
EOS
chmod +x "$T/sql.sh"

SHOTS=$top_builddir/tests/screenshots
mkdir -p "$SHOTS"
URL=$URL USER_NAME=admin VIEWER_NAME=viewer PASSWORD=$PW SQL_SH=$T/sql.sh SHOTS=$SHOTS CHROMIUM=$CHROMIUM \
	PROFILE=$T/chromium-profile node "$BROWSER_DIR/audit.mjs"
rc=$?
serve_stop
exit $rc
