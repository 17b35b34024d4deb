-- jobq schema, version 27: the jobs parked jobs wait for, by that job.
--
-- Pruning the run history (the worker's keep_done pass, `jobq prune`)
-- keeps the runs of every job a parked job waits for
-- (sql/024-parked.sql): a retry re-opens a parked job by weighing how
-- each of those ended, and a pruned one would count as done.  That check
-- asks, for each old run, whether jobq_parked_deps names its job as
-- after_id; without an index on after_id it read the whole table once a
-- run (a dead job with 30,000 waiters kept in the dead letter made each
-- 1,000-run pass of the worker's pruning run out of its statement time,
-- so the history grew for good).
--
-- The index is added only when information_schema does not list it yet,
-- so a second run changes nothing (and MySQL has no CREATE INDEX IF NOT
-- EXISTS).
SET @jobq_ddl = IF((SELECT COUNT(*) FROM information_schema.statistics
  WHERE table_schema = DATABASE() AND table_name = 'jobq_parked_deps'
  AND index_name = 'jobq_parked_deps_after') = 0,
  'ALTER TABLE jobq_parked_deps ADD KEY jobq_parked_deps_after (after_id)',
  'DO 0');
PREPARE jobq_stmt FROM @jobq_ddl;
EXECUTE jobq_stmt;
DEALLOCATE PREPARE jobq_stmt;
