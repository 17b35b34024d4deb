#!/bin/bash
# Every page of the dashboard at 375 px (tests/browser/phone.mjs), in the
# light and the dark theme, with data whose names are as long as the
# configuration allows: no page scrolls sideways, no element is drawn
# past the screen or holds more than its box, the navigation fits
# without wrapping and every control is a touch target of 40 px or more.
# Skipped, with the reason, when Chromium, Node or the npm packages are
# missing.
. "$top_srcdir/tests/lib.sh"

. "$top_srcdir/tests/browser_lib.sh"
browser_once
setup serve_browser_phone

# Names at the lengths people give them: a queue, a type, a schedule, a
# user, a worker's host and an error line, each with no blank to break at
# (the queue and the INI schedule with no hyphen either: as long as a
# name may be, 64 of [A-Za-z0-9_.], it must still wrap; the users, the
# one logged in, shown in the header, among them, and the database
# schedule are 64 too).
Q=customer_notifications_eu_west_1_priority_tier_one_retries_queue
TY=generate_quarterly_financial_statement_pdf_for_every_region_nowx
S=rebuild_search_index_for_the_whole_product_catalogue_nightly_run
U=operations-on-call-engineer-with-a-rather-long-name-for-the-team
U2=db-admin-with-the-longest-name-a-user-may-have-in-jobq-users-xyz
H=worker-pool-b-17.eu-west-1.compute.internal.example.com
write_conf <<EOC
[queue default]
[queue $Q]
description = every mail, SMS and push to customers of the EU west region; runbook https://wiki.example.com/operations/queues/customer_notifications_eu_west_1_priority_tier_one

[handler $TY]
exec = $HANDLERS/echo.sh
queue = $Q

[schedule $S]
cron = 15 2 * * 1-5
timezone = America/Argentina/Buenos_Aires
type = $TY
description = rebuilds the whole search index of the product catalogue every weekday night after the imports have finished

[user $U]
password_hash = $PWHASH
role = admin
EOC

long=$(printf 'x%.0s' $(seq 300))
sql "INSERT INTO jobs (queue, type, payload, priority) VALUES ('$Q', '$TY', '{\"customer\": \"$long\"}', 5);
     INSERT INTO jobs (queue, type, payload, available_at) VALUES ('$Q', '$TY', '{}', UTC_TIMESTAMP(6) + INTERVAL 3 DAY);
     INSERT INTO jobs (queue, type, payload, attempts, lease_token, reserved_by, reserved_at, lease_expires_at, last_error)
       VALUES ('$Q', '$TY', '{}', 2, REPEAT('c', 32), '$H:4242:ab12cd34', UTC_TIMESTAMP(6) - INTERVAL 2 HOUR,
               UTC_TIMESTAMP(6) - INTERVAL 1 HOUR, 'Traceback: $long');
     INSERT INTO failed_jobs (id, queue, type, payload, attempts, exception, exit_status, reason)
       VALUES (9001, '$Q', '$TY', '{\"to\": \"$long\"}', 5, 'smtp: 550 $long\nat line 2', 'exit 65', 'permanent exit status');
     INSERT INTO job_runs (job_id, queue, type, attempt, worker, started_at, duration_ms, outcome, exit_status, output, error)
       VALUES (1, '$Q', '$TY', 1, '$H:4242:ab12cd34', UTC_TIMESTAMP(6) - INTERVAL 5 MINUTE, 1234567, 'retry',
               'killed by SIGKILL (timeout)', 'out $long', 'err $long'),
              (9100, '$Q', '$TY', 1, '$H:4242:ab12cd34', UTC_TIMESTAMP(6) - INTERVAL 4 MINUTE, 2100, 'done',
               'exit 0', 'out $long', NULL);
     UPDATE job_runs SET enqueued_at = UTC_TIMESTAMP(6) - INTERVAL 6 MINUTE, payload = '{\"report\": \"$long\"}',
       result = '{\"file\": \"$long.pdf\"}' WHERE job_id = 9100;
     INSERT INTO jobq_workers (id, host, pid, queues, concurrency, heartbeat_ms, started_at, last_seen_at, jobs_done, jobs_retried, jobs_dead, current_jobs)
       VALUES ('$H:4242:ab12cd34', '$H', 4242, 'default,$Q', 16, 3600000, UTC_TIMESTAMP(6) - INTERVAL 30 DAY, UTC_TIMESTAMP(6),
               1234567, 89012, 345, '1,2,3');
     INSERT INTO jobq_audit (username, address, action, job_id, detail)
       VALUES ('$U', '2001:db8:1234:5678:9abc:def0:1234:5678', 'retry', 9001, 'queue $Q type $TY $long');"
# Job 1's run was traced: its trace ids wait behind a short "trace".
sql "UPDATE job_runs SET trace_id = REPEAT('a', 32), span_id = REPEAT('b', 16) WHERE job_id = 1"
# A job the user cancelled and one that expired, each kept as its one run
# (as final.c writes it); a running job whose worker is asked to cancel
# it, by a user with the longest name; a delayed job with an expiry.
sql "INSERT INTO job_runs (job_id, queue, type, attempt, worker, started_at, duration_ms, outcome, exit_status, error, enqueued_at, payload)
       VALUES (9200, '$Q', '$TY', 1, '$U', UTC_TIMESTAMP(6) - INTERVAL 3 MINUTE, 0, 'cancelled', 'not started',
               CONCAT('cancelled by $U at ', LEFT(UTC_TIMESTAMP(6) - INTERVAL 3 MINUTE, 19), ' UTC'),
               UTC_TIMESTAMP(6) - INTERVAL 1 HOUR, '{\"report\": \"$long\"}'),
              (9201, '$Q', '$TY', 0, '$H:4242:ab12cd34', UTC_TIMESTAMP(6) - INTERVAL 2 MINUTE, 0, 'expired', 'not started',
               CONCAT('expired: not started by ', LEFT(UTC_TIMESTAMP(6) - INTERVAL 2 MINUTE, 19), ' UTC'),
               UTC_TIMESTAMP(6) - INTERVAL 1 DAY, '{\"report\": \"$long\"}');
     INSERT INTO jobq_audit (username, address, action, job_id, detail)
       VALUES ('$U', '2001:db8:1234:5678:9abc:def0:1234:5678', 'cancel', 9200, '');
     INSERT INTO jobs (id, queue, type, payload, attempts, lease_token, reserved_by, reserved_at, lease_expires_at, cancel_by, cancel_at, expires_at)
       VALUES (9300, '$Q', '$TY', '{}', 1, REPEAT('d', 32), '$H:4242:ab12cd34', UTC_TIMESTAMP(6) - INTERVAL 1 MINUTE,
               UTC_TIMESTAMP(6) + INTERVAL 1 HOUR, '$U2', UTC_TIMESTAMP(6), UTC_TIMESTAMP(6));
     INSERT INTO jobs (id, queue, type, payload, available_at, expires_at)
       VALUES (9301, '$Q', '$TY', '{}', UTC_TIMESTAMP(6) + INTERVAL 1 HOUR, UTC_TIMESTAMP(6) + INTERVAL 2 DAY);"
printf '%s\n' "$PW" | jq_ user add "$U2" --role admin >/dev/null ||
	{ echo "Bail out! jobq user add failed"; exit 99; }
D=purge-expired-customer-sessions-from-every-regional-database-now
jq_ schedule add "$D" --cron '*/5 8-18 * * mon-fri' --type "$TY" --timezone Pacific/Chatham >/dev/null ||
	{ echo "Bail out! jobq schedule add failed"; exit 99; }
# A group with the longest kind of name, its callbacks of the long type,
# three jobs of which two wait (one for both others); the first then
# dead, its dependents parked under it and still waiting for the sweep
# (the jobs its Retry re-opens are listed beside it).
GN=quarterly-financial-close-for-every-regional-subsidiary-and-the-holding-company-2026-q4
printf '%s\n' "{\"type\": \"$TY\", \"payload\": {}, \"ref\": \"a\"}" \
	"{\"type\": \"$TY\", \"payload\": {}, \"ref\": \"b\", \"after\": [\"a\"]}" \
	"{\"type\": \"$TY\", \"payload\": {}, \"after\": [\"a\", \"b\"]}" |
	jq_ enqueue --batch --group "$GN" --on-complete "$TY" --on-success "$TY" >/dev/null ||
	{ echo "Bail out! jobq enqueue --group failed"; exit 99; }
GID=$(sql "SELECT id FROM jobq_groups WHERE name = '$GN'")
read -r GA GB GC <<<"$(sql "SELECT GROUP_CONCAT(id ORDER BY id SEPARATOR ' ') FROM jobs WHERE group_id = $GID")"
sql "INSERT INTO failed_jobs (id, queue, type, payload, attempts, exception, exit_status, reason)
       SELECT id, queue, type, payload, 5, 'boom $long', 'exit 65', 'permanent exit status' FROM jobs WHERE id = $GA;
     DELETE FROM jobs WHERE id = $GA;
     INSERT INTO jobq_parked (id, parked_by, queue, type, payload, created_at)
       SELECT id, $GA, queue, type, payload, created_at FROM jobs WHERE id IN ($GB, $GC)"
serve_start

browser_run phone USER_NAME="$U" SCHEDULE="$S" DBSCHEDULE="$D" GROUP_ID="$GID" DEAD_DEP="$GA" WAITER="$GC"
