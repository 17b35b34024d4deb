-- jobq schema, version 5: an index that serves `jobq workers` statistics.
--
-- The per-type statistics read (type, outcome, duration_ms) of the newest
-- runs.  job_runs_recent holds those columns in started_at order, so the
-- statistics scan the index backwards from now and never touch the rows
-- (with their output and error text).  It also serves every query the
-- older job_runs_started (started_at) served, pruning among them, so that
-- index goes: one index more per run written would cost every worker.
--
-- MySQL has no ADD INDEX IF NOT EXISTS: each change is prepared only when
-- information_schema says it is still to be done, so the file stays
-- idempotent on both servers.
SET @jobq_sql = (SELECT IF(COUNT(*) = 0,
  'ALTER TABLE job_runs ADD INDEX job_runs_recent (started_at, type, outcome, duration_ms)',
  'DO 0') FROM information_schema.statistics
  WHERE table_schema = DATABASE() AND table_name = 'job_runs' AND index_name = 'job_runs_recent');
PREPARE jobq_stmt FROM @jobq_sql;
EXECUTE jobq_stmt;
DEALLOCATE PREPARE jobq_stmt;
SET @jobq_sql = (SELECT IF(COUNT(*) > 0,
  'ALTER TABLE job_runs DROP INDEX job_runs_started',
  'DO 0') FROM information_schema.statistics
  WHERE table_schema = DATABASE() AND table_name = 'job_runs' AND index_name = 'job_runs_started');
PREPARE jobq_stmt FROM @jobq_sql;
EXECUTE jobq_stmt;
DEALLOCATE PREPARE jobq_stmt;
