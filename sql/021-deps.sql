-- jobq schema, version 21: jobs that wait for other jobs (enqueue --after).
--
-- jobs.waiting_on: how many of the jobs this one waits for have not ended
-- yet; 0 (the default, and what a plain INSERT leaves) for every job that
-- waits for nothing.  While it is above 0 the job's available_at is
-- '9999-12-31 23:59:59', so the reservation index sorts it after every
-- due row and no claim ever reads it, however many jobs wait.
-- jobs.after_any: 0 (policy all): the job runs once every job it waits
-- for is done; should one end dead, cancelled or expired, the job is
-- finalized as cancelled, the reason naming that job (and so on down the
-- graph).  1 (policy any): it runs once every one has ended, whatever
-- the outcome.
-- jobs.wait_until: when the job was meant to become due; the release sets
-- available_at to GREATEST(wait_until, now).
-- jobq_deps: one row per (job waited for, waiting job).  A row stays
-- until the waiting job ends, so `jobq show` lists both directions.
--
-- Every release happens once, in the transaction that ends the job waited
-- for (a worker's outcome, the dead-letter move, a cancel, the expiry
-- sweep): it takes one off waiting_on of each waiting job, or marks a
-- job of policy all for cancelling (cancel_by, expires_at now), which the
-- sweep then finalizes in a transaction of its own.
--
-- Plain SQL: in the application's transaction, lock the jobs it names
-- (SELECT id FROM jobs WHERE id IN (12, 13) FOR UPDATE), count the ones
-- still there as N, insert the job with waiting_on = N, after_any,
-- wait_until = its due time and available_at = '9999-12-31 23:59:59', then
-- one row INSERT INTO jobq_deps (after_id, job_id) per job still there
-- (jobs that already ended count as done; see jobq(1)).  N = 0: insert
-- the job plainly.
SET @jobq_ddl = IF((SELECT COUNT(*) FROM information_schema.columns
  WHERE table_schema = DATABASE() AND table_name = 'jobs' AND column_name = 'waiting_on') = 0,
  'ALTER TABLE jobs ADD COLUMN waiting_on INT UNSIGNED NOT NULL DEFAULT 0, ADD COLUMN after_any TINYINT NOT NULL DEFAULT 0, ADD COLUMN wait_until DATETIME(6) NULL DEFAULT NULL',
  'DO 0');
PREPARE jobq_stmt FROM @jobq_ddl;
EXECUTE jobq_stmt;
DEALLOCATE PREPARE jobq_stmt;
CREATE TABLE IF NOT EXISTS jobq_deps (
  after_id BIGINT UNSIGNED NOT NULL,
  job_id   BIGINT UNSIGNED NOT NULL,
  PRIMARY KEY (after_id, job_id),
  KEY jobq_deps_job (job_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
