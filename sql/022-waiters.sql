-- jobq schema, version 22: which jobs have jobs waiting for them.
--
-- jobs.has_waiters: 1 once a row of jobq_deps names the job as the one
-- waited for (after_id); 0 (the default, and what a plain INSERT
-- leaves) otherwise.  It never goes back to 0: the job ends with it.
--
-- Why: the transaction that ends a job tells the jobs waiting for it
-- (sql/021-deps.sql), three statements that cost a plain job, one that
-- nothing waits for, about as much as the rest of its outcome.  The
-- worker reads has_waiters when it claims the job and leaves them out
-- while it is 0; its outcome is then fenced by "has_waiters = 0" as
-- well as by its lease, so a job that gained a waiter while it ran
-- (the enqueue locks the job's row to set the flag) fails that fence,
-- and the worker writes the outcome again with the statements.
--
-- Plain SQL that makes a job wait (see sql/021-deps.sql) sets the flag
-- on the jobs it names, in the same transaction, after locking them:
--   UPDATE jobs SET has_waiters = 1 WHERE id IN (12, 13);
-- A job whose flag is left at 0 would end without releasing the jobs
-- that wait for it.
SET @jobq_ddl = IF((SELECT COUNT(*) FROM information_schema.columns
  WHERE table_schema = DATABASE() AND table_name = 'jobs' AND column_name = 'has_waiters') = 0,
  'ALTER TABLE jobs ADD COLUMN has_waiters TINYINT NOT NULL DEFAULT 0',
  'DO 0');
PREPARE jobq_stmt FROM @jobq_ddl;
EXECUTE jobq_stmt;
DEALLOCATE PREPARE jobq_stmt;
UPDATE jobs j SET j.has_waiters = 1 WHERE EXISTS (SELECT 1 FROM jobq_deps d WHERE d.after_id = j.id);
