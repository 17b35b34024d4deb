-- jobq schema, version 15: an audit row says how many jobs its action
-- was on, in a column of its own.
--
-- The count used to be written into detail after the filter a person
-- typed, so a long filter could push it out of the row or a crafted one
-- could write a count of its own.  job_count is how many jobs the action
-- was on, NULL when that is only the job the row names or none.  Each job
-- of an action on many also gets a row of its own (job_id), so that the
-- job's page shows what was done to it.
SET @jobq_ddl = IF((SELECT COUNT(*) FROM information_schema.columns
  WHERE table_schema = DATABASE() AND table_name = 'jobq_audit' AND column_name = 'job_count') = 0,
  'ALTER TABLE jobq_audit ADD COLUMN job_count INT UNSIGNED NULL AFTER job_id',
  'DO 0');
PREPARE jobq_stmt FROM @jobq_ddl;
EXECUTE jobq_stmt;
DEALLOCATE PREPARE jobq_stmt;
