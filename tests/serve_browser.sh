#!/bin/bash
# The dashboard in a real browser: the distribution's Chromium driven by
# puppeteer-core (tests/browser, pinned in package-lock.json) against a
# live jobq serve and real MariaDB.  Skipped, with the reason, when
# Chromium, Node or the npm packages are missing.
. "$top_srcdir/tests/lib.sh"

. "$top_srcdir/tests/browser_lib.sh"
browser_once
setup serve_browser

write_conf <<EOC
[worker]
poll_interval = 20ms
timezone = Asia/Kolkata

[queue default]
[queue mail]

[handler echo]
exec = $HANDLERS/echo.sh

[handler send_email]
exec = $HANDLERS/echo.sh
queue = mail
max_attempts = 5

[schedule nightly-report]
cron = 0 3 * * *
timezone = Europe/Paris
type = echo
description = the nightly report

[user admin]
password_hash = $PWHASH
role = admin

[user viewer]
password_hash = $PWHASH
role = viewer
EOC

# One job in each state, a dead one, a run history for the chart and a
# worker in the registry.
sql "INSERT INTO jobs (queue, type, payload) VALUES ('default', 'echo', '{\"n\": 1}'), ('mail', 'send_email', '{\"to\": \"a@example.com\"}');
     INSERT INTO jobs (queue, type, payload, available_at) VALUES ('mail', 'send_email', '{\"later\": true}', UTC_TIMESTAMP(6) + INTERVAL 1 HOUR);
     INSERT INTO jobs (queue, type, payload, available_at, waiting_on, wait_until) VALUES ('mail', 'send_email', '{\"after\": 3}', '9999-12-31 23:59:59', 1, UTC_TIMESTAMP(6));
     INSERT INTO jobq_deps (after_id, job_id) VALUES (3, LAST_INSERT_ID()); UPDATE jobs SET has_waiters = 3 WHERE id = 3;
     INSERT INTO jobs (queue, type, payload, attempts, lease_token, reserved_by, reserved_at, lease_expires_at, last_error)
       VALUES ('default', 'echo', '{\"busy\": 1}', 1, REPEAT('b', 32), 'host1:4242', UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) + INTERVAL 1 HOUR, NULL),
              ('default', 'echo', '{\"stale\": 1}', 2, REPEAT('c', 32), 'host2:99', UTC_TIMESTAMP(6) - INTERVAL 2 HOUR, UTC_TIMESTAMP(6) - INTERVAL 1 HOUR, 'timed out');
     INSERT INTO failed_jobs (id, queue, type, payload, attempts, exception, exit_status, reason)
       VALUES (9001, 'mail', 'send_email', '{\"to\": \"nobody@invalid\"}', 5, 'smtp: 550 no such user\nat line 2', 'exit 65', 'permanent exit status'),
              (9002, 'default', 'echo', '{}', 1, 'bad payload', 'exit 65', 'permanent exit status');
     INSERT INTO job_runs (job_id, queue, type, attempt, worker, started_at, duration_ms, outcome, exit_status, output, error)
       SELECT 1, 'default', 'echo', 1, 'host1:4242', UTC_TIMESTAMP(6) - INTERVAL (seq MOD 55) MINUTE, 12,
              CASE WHEN seq MOD 13 = 0 THEN 'dead' WHEN seq MOD 9 = 0 THEN 'retry' ELSE 'done' END, 'exit 0', '', ''
       FROM (SELECT a.n * 10 + b.n AS seq FROM
             (SELECT 0 n UNION SELECT 1 UNION SELECT 2 UNION SELECT 3 UNION SELECT 4 UNION SELECT 5 UNION SELECT 6 UNION SELECT 7 UNION SELECT 8 UNION SELECT 9) a,
             (SELECT 0 n UNION SELECT 1 UNION SELECT 2 UNION SELECT 3 UNION SELECT 4 UNION SELECT 5 UNION SELECT 6 UNION SELECT 7 UNION SELECT 8 UNION SELECT 9) b) s;
     INSERT INTO job_runs (job_id, queue, type, attempt, worker, started_at, duration_ms, outcome, exit_status, output, error)
       SELECT id, 'default', 'echo', 1, 'host2:99', UTC_TIMESTAMP(6) - INTERVAL 3 HOUR, 30000, 'retry', 'killed by SIGKILL (timeout)',
              'connecting to smtp.example.com\nsending 3 messages', 'timeout after 30s'
       FROM jobs WHERE lease_token = REPEAT('c', 32);
     INSERT INTO jobq_workers (id, host, pid, queues, concurrency, heartbeat_ms, started_at, last_seen_at, jobs_done, jobs_retried, jobs_dead, current_jobs)
       VALUES ('host1:4242', 'host1', 4242, 'default,mail', 4, 3600000, UTC_TIMESTAMP(6) - INTERVAL 3 HOUR, UTC_TIMESTAMP(6), 120, 7, 2, '4');"

# A database schedule (its expression is edited in the browser) with a
# history: one fire done, one dead-lettered (9005, put in the dead
# letter by the browser script before it gets there).
jq_ schedule add cleanup --cron '*/10 * * * *' --type send_email --timezone America/New_York >/dev/null ||
	{ echo "Bail out! jobq schedule add failed"; exit 99; }
sql "INSERT INTO jobq_schedule_runs (name, fire_at, status, job_id) VALUES
       ('cleanup', UTC_TIMESTAMP() - INTERVAL 20 MINUTE, 'enqueued', 424242),
       ('cleanup', UTC_TIMESTAMP() - INTERVAL 10 MINUTE, 'enqueued', 9005);
     INSERT INTO job_runs (job_id, queue, type, attempt, worker, started_at, duration_ms, outcome, exit_status,
                           enqueued_at, payload, result, follow_ups)
       VALUES (424242, 'mail', 'send_email', 1, 'host1:4242', UTC_TIMESTAMP(6) - INTERVAL 19 MINUTE, 840, 'done',
               'exit 0', UTC_TIMESTAMP(6) - INTERVAL 20 MINUTE, '{\"to\": \"ops@example.com\"}', '{\"sent\": 1}', '1,9002');
     INSERT INTO job_runs (job_id, queue, type, attempt, worker, started_at, duration_ms, outcome, exit_status)
       SELECT 300000 + seq, 'default', 'echo', 1, 'host1:4242', UTC_TIMESTAMP(6) - INTERVAL 30 DAY, 1, 'retry', 'exit 1'
       FROM seq_1_to_40000"

serve_start

# The browser script reads the database through this.
browser_run dashboard JOBQ="$JOBQ" CONF="$CONF" USER_NAME=admin
