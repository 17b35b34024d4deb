-- jobq schema, version 6: the worker registry's list of running jobs fits
-- at any concurrency.
--
-- jobq_workers.current_jobs lists "id:type" for each job a worker holds.
-- At the largest concurrency (1024) with 64-character type names that is
-- about 88,000 characters: past VARCHAR(4096), where every heartbeat
-- failed with error 1406 and the worker looked silent, and past TEXT.
-- MEDIUMTEXT holds it.  The statement is idempotent.
ALTER TABLE jobq_workers MODIFY current_jobs MEDIUMTEXT NOT NULL DEFAULT ('');
