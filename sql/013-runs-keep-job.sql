-- jobq schema, version 13: a done job stays visible through its runs.
--
-- A done job leaves `jobs`, and `jobq show` then had only its runs:
-- no payload, no time it was enqueued.  job_runs.enqueued_at is the
-- job's created_at, written with every run; job_runs.payload is the
-- job's payload, written only with the run that finished it as done
-- (and only up to 64 KiB): both stay until the runs are pruned.
SET @jobq_ddl = IF((SELECT COUNT(*) FROM information_schema.columns
  WHERE table_schema = DATABASE() AND table_name = 'job_runs' AND column_name = 'enqueued_at') = 0,
  'ALTER TABLE job_runs ADD COLUMN enqueued_at DATETIME(6) NULL, ADD COLUMN payload MEDIUMTEXT NULL',
  'DO 0');
PREPARE jobq_stmt FROM @jobq_ddl;
EXECUTE jobq_stmt;
DEALLOCATE PREPARE jobq_stmt;
