#!/bin/bash
# Trouble first: the dashboard says what is wrong.  jobq serve runs
# against a private MariaDB of its own ($T/db2: the shared test server
# must stay up for the other tests), which this test stops and starts
# again twice: once under curl (API answers 503 with a JSON body saying
# since when, the pages themselves still load, and everything answers
# again once the server is back) and once under an open page in Chromium
# (tests/browser/trouble.mjs: the banner, the red dot, a reload during
# the outage, the recovery).  The browser part also checks the queue
# warnings: jobs waiting with no live worker, stale and dead-letter
# counts that grow.  Skipped, with the reason, when Chromium, Node or
# the npm packages are missing.
. "$top_srcdir/tests/lib.sh"
one_build sanitized "behaviour alone"

. "$top_srcdir/tests/browser_lib.sh"
setup serve_trouble
db2_use

# A small server: the test needs little memory and no large redo log.
DB2_OPTS="--innodb-buffer-pool-size=64M --innodb-log-file-size=48M"
JOBQ_TESTDB_OPTS=$DB2_OPTS "$TESTDB_SCRIPT" start "$DB2" ||
	{ echo "Bail out! cannot start a second MariaDB in $DB2"; exit 99; }
# From here on write_conf points the configuration at the private server.
SOCKET=$("$TESTDB_SCRIPT" socket "$DB2")

# overview_cache = 0: every overview is computed in its request, so
# the numbers the browser checks are the database's at once.
write_conf <<EOC
[worker]
poll_interval = 20ms

[serve]
overview_cache = 0

[queue default]
[queue mail]

[handler echo]
exec = $HANDLERS/echo.sh

[handler send_email]
exec = $HANDLERS/echo.sh
queue = mail

[user admin]
password_hash = $PWHASH
role = admin
EOC
jq_ init >/dev/null || { echo "Bail out! jobq init on the private server failed"; exit 99; }

# mail: three ready jobs and no worker; default: one ready job and a
# live worker serving it (a heartbeat an hour long), and one dead job.
sql2 "INSERT INTO jobs (queue, type, payload) VALUES ('mail', 'send_email', '{}'), ('mail', 'send_email', '{}'),
       ('mail', 'send_email', '{}'), ('default', 'echo', '{}');
     INSERT INTO failed_jobs (id, queue, type, payload, attempts, exception) VALUES (9001, 'default', 'echo', '{}', 1, 'boom');
     INSERT INTO jobq_workers (id, host, pid, queues, concurrency, heartbeat_ms, started_at, last_seen_at)
       VALUES ('host1:4242', 'host1', 4242, 'default', 1, 3600000, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))" ||
	{ echo "Bail out! cannot fill the private server"; exit 99; }

serve_start

db2_stop() {
	"$TESTDB_SCRIPT" stop "$DB2" >/dev/null 2>&1 && ! "$TESTDB_SCRIPT" status "$DB2" >/dev/null 2>&1
}
db2_start() {
	JOBQ_TESTDB_OPTS=$DB2_OPTS "$TESTDB_SCRIPT" start "$DB2" >/dev/null
}

# ---- curl: the API with the database up, down and back ----
JAR=$T/jar
login admin "$JAR"
is "$CODE" 200 "logged in"
hit GET /api/overview "$JAR"
is "$CODE" 200 "the overview answers"
is "$(printf '%s' "$BODY" | jget '[q["workers"] for q in d["queues"] if q["queue"] == "mail"][0]')" 0 \
	"the overview says no live worker serves mail"
is "$(printf '%s' "$BODY" | jget '[q["workers"] for q in d["queues"] if q["queue"] == "default"][0]')" 1 \
	"and one serves default"

db2_stop
ok $? "the database server is stopped"
hit GET /api/overview "$JAR"
is "$CODE" 503 "with the database down the overview answers 503"
like "$(header content-type)" "application/json" "as JSON"
is "$(printf '%s' "$BODY" | jget 'd["error"]')" "the database cannot be reached" "saying what is wrong"
like "$(printf '%s' "$BODY" | jget 'd["db_down_since"]')" '^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:]{8}$' \
	"and since when (UTC)"
is "$(header retry-after)" 2 "with a Retry-After"
since=$(printf '%s' "$BODY" | jget 'd["db_down_since"]')
hit GET /api/jobs "$JAR"
is "$CODE" 503 "the jobs list answers 503 too"
is "$(printf '%s' "$BODY" | jget 'd["db_down_since"]')" "$since" "the outage keeps the time it began"
hit GET /api/me "$JAR"
is "$CODE" 503 "/api/me answers 503 (the session cannot be looked up)"
hit POST /api/failed/retry "$JAR" '{"ids": [1]}' -H "X-CSRF-Token: $CSRF"
is "$CODE" 503 "a POST answers 503 before its body is read"
hit GET /jobs "$JAR"
is "$CODE" 200 "a page reloaded in the outage still loads"
like "$(header content-type)" "text/html" "as the HTML shell"
like "$BODY" 'id="banner"' "with the place for the banner"
hit GET /static/app.js
is "$CODE" 200 "and its script"
like "$(cat "$T/serve.log")" "the database cannot be reached" "the server log says the database went"

db2_start
ok $? "the database server is back"
i=0
while hit GET /api/overview "$JAR" && [ "$CODE" != 200 ] && [ $i -lt 100 ]; do
	i=$((i + 1))
	sleep 0.1
done
is "$CODE" 200 "the overview answers again, with the same session"
like "$(cat "$T/serve.log")" "the database answers again" "the server log says it came back"

# ---- the browser: the banner under an open page ----
cat >"$T/sql.sh" <<EOS
#!/bin/bash
exec "$TESTDB_SCRIPT" client "$DB2" -N -B "$DB" -e "SET time_zone = '+00:00'; \$1"
EOS
cat >"$T/db.sh" <<EOS
#!/bin/bash
# db.sh stop|start: the private database server
if [ "\$1" = stop ]; then
	"$TESTDB_SCRIPT" stop "$DB2" >/dev/null 2>&1
	! "$TESTDB_SCRIPT" status "$DB2" >/dev/null 2>&1
else
	JOBQ_TESTDB_OPTS="$DB2_OPTS" exec "$TESTDB_SCRIPT" start "$DB2" >/dev/null
fi
EOS
chmod +x "$T/sql.sh" "$T/db.sh"
# The browser script prints TAP of its own; its lines join this test's.
browser_node trouble USER_NAME=admin DB_SH="$T/db.sh" >"$T/browser.tap" 2>&1
rc=$?
while IFS= read -r line; do
	case $line in
	"ok "*) ok 0 "browser: ${line#ok * - }" ;;
	"not ok "*) ok 1 "browser: ${line#not ok * - }" ;;
	1..*) ;;
	*) echo "# ${line#\# }" ;;
	esac
done <"$T/browser.tap"
is "$rc" 0 "the browser script exits 0"
serve_stop
is "$(grep -c -e 'Sanitizer' -e 'runtime error:' "$T/serve.log")" 0 "the server log holds no sanitizer report"
finish
