#!/bin/bash
# The enqueue form at 375 px with a type and a queue as long as names may
# be (tests/browser/form_audit.mjs): its fields (priority, max attempts,
# expires in among them) fit the screen and are touch targets; a job
# enqueued with them has the row `jobq enqueue` would make; a refusal
# is shown under the form naming the field, wraps inside the screen
# however long the text it quotes, and stays until the next submit; a
# session that ends while the form is filled in loses nothing: after
# logging in again the form holds what was typed, and makes the job once;
# so does a dead job's Edit and retry.  Retry on a dead job's page whose
# unique key another job holds says it stays dead, naming that job.
# Skipped, with the reason, when Chromium, Node or the npm packages are
# missing.
. "$top_srcdir/tests/lib.sh"

. "$top_srcdir/tests/browser_lib.sh"
browser_once
setup serve_form_audit_phone

Q=customer_notifications_eu_west_1_priority_tier_one_retries_queue
TY=generate_quarterly_financial_statement_pdf_for_every_region_nowx
write_conf <<EOC
[queue default]
[queue $Q]

[handler $TY]
exec = $HANDLERS/echo.sh
queue = $Q

[user admin]
password_hash = $PWHASH
role = admin
EOC
sql "INSERT INTO failed_jobs (id, queue, type, payload, attempts, exception) VALUES (9001, '$Q', '$TY', '{\"v\": \"bad\"}', 3, 'x');
     INSERT INTO failed_jobs (id, queue, type, payload, attempts, exception, unique_key) VALUES (9002, '$Q', '$TY', '{}', 3, 'x', 'order:1');
     INSERT INTO jobs (id, queue, type, payload, available_at, unique_key) VALUES (9100, '$Q', '$TY', '{}', UTC_TIMESTAMP(6) + INTERVAL 1 DAY, 'order:1')"
serve_start
browser_run form_audit USER_NAME=admin TYPE="$TY" QUEUE="$Q"
