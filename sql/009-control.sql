-- jobq schema, version 9: what handlers say back on their control channel.
--
-- jobs.progress and jobs.progress_note hold the last {"progress": N,
-- "note": ...} line of the running attempt, written with the heartbeat
-- (fenced by the lease) and cleared when the job goes back to the queue;
-- NULL when the handler said nothing.  job_runs.result keeps the
-- {"result": ...} JSON of a run (at most 16 KiB).  The columns are
-- nullable, so an application's plain INSERT INTO jobs is unchanged.
--
-- MySQL has no ADD COLUMN IF NOT EXISTS: each column is added only when
-- information_schema does not list it, which keeps this idempotent.
SET @jobq_ddl = IF((SELECT COUNT(*) FROM information_schema.columns
  WHERE table_schema = DATABASE() AND table_name = 'jobs' AND column_name = 'progress') = 0,
  'ALTER TABLE jobs ADD COLUMN progress TINYINT UNSIGNED NULL, ADD COLUMN progress_note VARCHAR(255) NULL',
  'DO 0');
PREPARE jobq_stmt FROM @jobq_ddl;
EXECUTE jobq_stmt;
DEALLOCATE PREPARE jobq_stmt;

SET @jobq_ddl = IF((SELECT COUNT(*) FROM information_schema.columns
  WHERE table_schema = DATABASE() AND table_name = 'job_runs' AND column_name = 'result') = 0,
  'ALTER TABLE job_runs ADD COLUMN result TEXT NULL',
  'DO 0');
PREPARE jobq_stmt FROM @jobq_ddl;
EXECUTE jobq_stmt;
DEALLOCATE PREPARE jobq_stmt;
