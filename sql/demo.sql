-- Demo data: a queue caught in the middle of a working day, every state
-- of DESIGN.md 5b present, times relative to now.  contrib/demo loads it
-- into a fresh database after `jobq init`:
--
--   mariadb jobq_demo < sql/demo.sql
--
-- Job types match contrib/demo's configuration: echo, send_email,
-- notify_partner, generate_report (resize_image has no handler on
-- purpose).  Ids start at 1000 so the tour can name them.
SET time_zone = '+00:00';

-- ready: due now, nobody holds them
INSERT INTO jobs (id, queue, type, payload, priority, created_at, available_at) VALUES
 (1001, 'critical', 'send_email', '{"to": "ada@example.com", "subject": "Your order #4711", "body": "It ships today."}', 0,
  UTC_TIMESTAMP(6) - INTERVAL 40 SECOND, UTC_TIMESTAMP(6) - INTERVAL 40 SECOND),
 (1002, 'default', 'echo', '{"event": "user.signed_up", "user": 42}', 0,
  UTC_TIMESTAMP(6) - INTERVAL 25 SECOND, UTC_TIMESTAMP(6) - INTERVAL 25 SECOND),
 (1003, 'default', 'echo', '{"event": "cache.warm", "keys": 1200}', 5,
  UTC_TIMESTAMP(6) - INTERVAL 20 SECOND, UTC_TIMESTAMP(6) - INTERVAL 20 SECOND),
 (1004, 'low', 'generate_report', '{"report": "daily-sales", "rows": 250}', 0,
  UTC_TIMESTAMP(6) - INTERVAL 2 MINUTE, UTC_TIMESTAMP(6) - INTERVAL 2 MINUTE);

-- delayed: enqueued with --delay, due in ten minutes
INSERT INTO jobs (id, queue, type, payload, created_at, available_at) VALUES
 (1010, 'critical', 'send_email', '{"to": "ada@example.com", "subject": "How was your order?"}',
  UTC_TIMESTAMP(6) - INTERVAL 1 MINUTE, UTC_TIMESTAMP(6) + INTERVAL 10 MINUTE);

-- backing off: failed twice (the partner's mail relay is down), due again in 8 s
INSERT INTO jobs (id, queue, type, payload, attempts, last_error, created_at, available_at) VALUES
 (1020, 'default', 'notify_partner', '{"to": "ops@partner.example", "subject": "Order #4711 shipped"}', 2,
  '[exit 75] send_email: mail relay 127.0.0.1:9 unreachable: [Errno 111] Connection refused',
  UTC_TIMESTAMP(6) - INTERVAL 3 MINUTE, UTC_TIMESTAMP(6) + INTERVAL 8 SECOND);

-- reserved: web-1 runs it and its lease is alive (until web-1 stops
-- renewing it: then it turns stale and comes back)
INSERT INTO jobs (id, queue, type, payload, attempts, created_at, available_at,
                  reserved_at, reserved_by, lease_token, lease_expires_at) VALUES
 (1030, 'low', 'generate_report', '{"report": "monthly-ledger", "rows": 5000}', 1,
  UTC_TIMESTAMP(6) - INTERVAL 5 MINUTE, UTC_TIMESTAMP(6) - INTERVAL 5 MINUTE,
  UTC_TIMESTAMP(6) - INTERVAL 50 SECOND, 'web-1:3101:5eed0001', 'dem0dem0dem0dem0dem0dem0dem00030',
  UTC_TIMESTAMP(6) + INTERVAL 15 SECOND);

-- stale: web-2 was killed while running it; its lease ran out 30 s ago,
-- so any worker takes it again (attempt 2)
INSERT INTO jobs (id, queue, type, payload, attempts, created_at, available_at,
                  reserved_at, reserved_by, lease_token, lease_expires_at) VALUES
 (1040, 'critical', 'send_email', '{"to": "grace@example.com", "subject": "Password reset"}', 1,
  UTC_TIMESTAMP(6) - INTERVAL 2 MINUTE, UTC_TIMESTAMP(6) - INTERVAL 2 MINUTE,
  UTC_TIMESTAMP(6) - INTERVAL 110 SECOND, 'web-2:2207:5eed0002', 'dem0dem0dem0dem0dem0dem0dem00040',
  UTC_TIMESTAMP(6) - INTERVAL 30 SECOND);

-- the two workers of the story: web-1 heart-beats, web-2 died
INSERT INTO jobq_workers (id, host, pid, queues, concurrency, heartbeat_ms, started_at, last_seen_at,
                          jobs_done, jobs_retried, jobs_dead, current_jobs, version) VALUES
 ('web-1:3101:5eed0001', 'web-1', 3101, 'critical,default,low', 4, 3000,
  UTC_TIMESTAMP(6) - INTERVAL 2 HOUR, UTC_TIMESTAMP(6) - INTERVAL 2 SECOND, 1523, 12, 2,
  '1030:generate_report', 'demo'),
 ('web-2:2207:5eed0002', 'web-2', 2207, 'critical,default', 2, 10000,
  UTC_TIMESTAMP(6) - INTERVAL 3 HOUR, UTC_TIMESTAMP(6) - INTERVAL 100 SECOND, 801, 3, 1,
  '1040:send_email', 'demo');

-- dead-letter: three kinds of error to read before deciding
INSERT INTO failed_jobs (id, queue, type, payload, attempts, max_attempts, exception, exit_status, reason,
                         created_at, failed_at) VALUES
 (990, 'default', 'notify_partner', '{"to": "billing@partner.example", "subject": "Invoice 2026-11"}', 4, NULL,
  'send_email: mail relay 127.0.0.1:9 unreachable: [Errno 111] Connection refused',
  'exit 75', 'attempts used up (4 of 4; last: exit 75)',
  UTC_TIMESTAMP(6) - INTERVAL 1 HOUR, UTC_TIMESTAMP(6) - INTERVAL 40 MINUTE),
 (991, 'critical', 'send_email', '{"to": "bob@@example", "subject": "Welcome"}', 1, NULL,
  'send_email: invalid address \'bob@@example\'',
  'exit 65', 'exit 65 is a permanent failure',
  UTC_TIMESTAMP(6) - INTERVAL 30 MINUTE, UTC_TIMESTAMP(6) - INTERVAL 30 MINUTE),
 (992, 'default', 'resize_image', '{"image": "uploads/cat.png", "width": 640}', 1, NULL,
  'unknown job type \'resize_image\': no [handler resize_image] section in demo/jobq.ini',
  'not run', 'unknown job type',
  UTC_TIMESTAMP(6) - INTERVAL 10 MINUTE, UTC_TIMESTAMP(6) - INTERVAL 10 MINUTE);

-- their history, and the earlier attempts of the jobs above
INSERT INTO job_runs (job_id, queue, type, attempt, worker, started_at, duration_ms, outcome, exit_status, output, error) VALUES
 (990, 'default', 'notify_partner', 1, 'web-1:3101:5eed0001', UTC_TIMESTAMP(6) - INTERVAL 60 MINUTE, 20012, 'retry', 'exit 75', '', 'send_email: mail relay 127.0.0.1:9 unreachable: timed out'),
 (990, 'default', 'notify_partner', 2, 'web-2:2207:5eed0002', UTC_TIMESTAMP(6) - INTERVAL 50 MINUTE, 20009, 'retry', 'exit 75', '', 'send_email: mail relay 127.0.0.1:9 unreachable: timed out'),
 (990, 'default', 'notify_partner', 3, 'web-1:3101:5eed0001', UTC_TIMESTAMP(6) - INTERVAL 45 MINUTE, 20010, 'retry', 'exit 75', '', 'send_email: mail relay 127.0.0.1:9 unreachable: timed out'),
 (990, 'default', 'notify_partner', 4, 'web-1:3101:5eed0001', UTC_TIMESTAMP(6) - INTERVAL 40 MINUTE, 31, 'dead', 'exit 75', '', 'send_email: mail relay 127.0.0.1:9 unreachable: [Errno 111] Connection refused'),
 (991, 'critical', 'send_email', 1, 'web-1:3101:5eed0001', UTC_TIMESTAMP(6) - INTERVAL 30 MINUTE, 45, 'dead', 'exit 65', '', 'send_email: invalid address \'bob@@example\''),
 (1020, 'default', 'notify_partner', 1, 'web-1:3101:5eed0001', UTC_TIMESTAMP(6) - INTERVAL 170 SECOND, 38, 'retry', 'exit 75', '', 'send_email: mail relay 127.0.0.1:9 unreachable: [Errno 111] Connection refused'),
 (1020, 'default', 'notify_partner', 2, 'web-2:2207:5eed0002', UTC_TIMESTAMP(6) - INTERVAL 140 SECOND, 35, 'retry', 'exit 75', '', 'send_email: mail relay 127.0.0.1:9 unreachable: [Errno 111] Connection refused');
