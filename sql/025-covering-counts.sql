-- jobq schema, version 25: the held and waiting rows counted by index alone.
--
-- jobs_lease becomes (lease_token, lease_expires_at, queue, type).  Every
-- count of held rows reads only them (lease_token IS NOT NULL) and asks
-- each one its lease's expiry and its queue or type: `jobq status` (how
-- many are reserved and how many stale, per queue), the flow gate inside
-- every claim under max_running (how many run per queue or type) and the
-- watchdog (stale rows per queue).  With the lease token alone in the
-- key each held row was read again from the table for those columns:
-- 417 ms of a status at 1,000,000 jobs of which 150,000 were held.  The
-- token still leads the key, so a lookup by token reads it as before.
-- The price: a heartbeat, which moves lease_expires_at, now rewrites the
-- row's entry here too (a claim and an outcome rewrote it already), and
-- every entry carries the queue's and type's names.
--
-- jobs_due becomes (queue, due_at, priority, waiting_on): a job waits for
-- other jobs while it sits at '9999-12-31 23:59:59' with waiting_on above
-- 0 (021-deps.sql), and status counted those by reading each such row
-- for waiting_on (18.8 ms a queue with 10,000 waiting).  Claims read the
-- same leading columns as before.
--
-- Each key is rebuilt only when information_schema does not list its new
-- last column yet, so a second run changes nothing.  The server rebuilds
-- each in place where it can (MariaDB does, and writes go on meanwhile).
SET @jobq_ddl = IF((SELECT COUNT(*) FROM information_schema.statistics
  WHERE table_schema = DATABASE() AND table_name = 'jobs' AND index_name = 'jobs_lease' AND column_name = 'type') = 0,
  'ALTER TABLE jobs DROP KEY jobs_lease, ADD KEY jobs_lease (lease_token, lease_expires_at, queue, type)',
  'DO 0');
PREPARE jobq_stmt FROM @jobq_ddl;
EXECUTE jobq_stmt;
DEALLOCATE PREPARE jobq_stmt;
SET @jobq_ddl = IF((SELECT COUNT(*) FROM information_schema.statistics
  WHERE table_schema = DATABASE() AND table_name = 'jobs' AND index_name = 'jobs_due' AND column_name = 'waiting_on') = 0,
  'ALTER TABLE jobs DROP KEY jobs_due, ADD KEY jobs_due (queue, due_at, priority, waiting_on)',
  'DO 0');
PREPARE jobq_stmt FROM @jobq_ddl;
EXECUTE jobq_stmt;
DEALLOCATE PREPARE jobq_stmt;
