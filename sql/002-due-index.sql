-- jobq schema, version 2: the due index.
--
-- jobs_due (queue, due_at, priority) answers "what is due in this queue,
-- and at which priorities" by reading only due rows: an idle worker's
-- poll is one index dive per queue however many priorities the delayed
-- jobs use (jobs_reserve alone needs a dive per priority for that), and
-- a worker with a short queue learns the due priorities from the due
-- rows themselves.  priority is in the key so the index covers the scan.
--
-- MySQL has no ADD KEY IF NOT EXISTS: the key is added only when
-- information_schema does not list it, which keeps this idempotent.
SET @jobq_ddl = IF((SELECT COUNT(*) FROM information_schema.statistics
  WHERE table_schema = DATABASE() AND table_name = 'jobs' AND index_name = 'jobs_due') = 0,
  'ALTER TABLE jobs ADD KEY jobs_due (queue, due_at, priority)', 'DO 0');
PREPARE jobq_stmt FROM @jobq_ddl;
EXECUTE jobq_stmt;
DEALLOCATE PREPARE jobq_stmt;
