# browser_lib.sh -- shared by the tests that drive Chromium through the
# dashboard (tests/browser/*.mjs).  Source it after lib.sh, before
# setup: it skips the test, with the reason, when Chromium, Node or
# puppeteer-core is missing, and brings serve_lib.sh (serve_start,
# login, post) with it.
#
#   browser_node SCRIPT [NAME=VALUE...]   runs tests/browser/SCRIPT.mjs
#       against the jobq serve that serve_start started, with URL,
#       PASSWORD, SQL_SH (runs one SQL statement on the test's database,
#       in UTC), SHOTS (tests/screenshots of the build), CHROMIUM, PROFILE
#       and the given variables in its environment; returns its status.
#   browser_run SCRIPT [NAME=VALUE...]    the same, then stops the server
#       and exits with the script's status.

CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
BROWSER_DIR=$top_srcdir/tests/browser
[ -x "$CHROMIUM" ] || skip_all "no Chromium at $CHROMIUM (apt-get install chromium)"
command -v node >/dev/null || skip_all "no node (apt-get install nodejs npm)"
[ -d "$BROWSER_DIR/node_modules/puppeteer-core" ] ||
	skip_all "puppeteer-core is not installed: run 'npm ci' in tests/browser"

# browser_once: called by the tests that are all browser: they run in
# the normal build only (JOBQ_BROWSER_SANITIZED=1 runs them under the
# sanitizers too).  The scripts and the pages are the same in both
# builds; the server's C under the sanitizers is driven by the API tests
# (curl), and Chromium is the heaviest load of the two parallel runs.
browser_once() {
	[ "$SANITIZED" != 1 ] || [ -n "${JOBQ_BROWSER_SANITIZED:-}" ] ||
		skip_all "a browser-only test: run in the normal build (JOBQ_BROWSER_SANITIZED=1 to run it here)"
}

. "$top_srcdir/tests/operator/common.sh"
. "$top_srcdir/tests/serve_lib.sh"

browser_node() {
	local script=$1
	shift
	# A test with a server of its own writes its own sql.sh first.
	[ -e "$T/sql.sh" ] || {
		cat >"$T/sql.sh" <<EOS
#!/bin/bash
exec "$TESTDB_SCRIPT" client "$JOBQ_TESTDB" -N -B "$DB" -e "SET time_zone = '+00:00'; \$1"
EOS
		chmod +x "$T/sql.sh"
	}
	mkdir -p "$top_builddir/tests/screenshots"
	env URL="$URL" PASSWORD="$PW" SQL_SH="$T/sql.sh" SHOTS="$top_builddir/tests/screenshots" \
		CHROMIUM="$CHROMIUM" PROFILE="$T/chromium-profile" "$@" node "$BROWSER_DIR/$script.mjs"
}

browser_run() {
	local rc
	browser_node "$@"
	rc=$?
	serve_stop
	exit $rc
}
