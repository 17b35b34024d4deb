-- jobq schema, version 29: a submit's record keeps every job id it made.
--
-- The record of a dashboard submit (sql/016-submits.sql) kept the first
-- job's id and the count, and a resend of the submit id is answered from
-- it.  The ids of one submit need not follow one another (another
-- client's insert can take one between two of them, as can
-- auto_increment_increment on Galera), so for more than one job the
-- resend answered "ids": null.  job_ids holds them all, in order, as
-- decimal numbers separated by commas (at most 1,000 jobs a submit:
-- about 21,000 bytes); NULL in the records written before this version,
-- whose resends still answer null.  Only submits write it: `jobq enqueue`
-- and applications' own INSERTs pay nothing for it.
--
-- The column is added only when information_schema does not list it yet,
-- so a second run changes nothing (MySQL has no ADD COLUMN IF NOT
-- EXISTS).
SET @jobq_ddl = IF((SELECT COUNT(*) FROM information_schema.columns
  WHERE table_schema = DATABASE() AND table_name = 'jobq_submits' AND column_name = 'job_ids') = 0,
  'ALTER TABLE jobq_submits ADD COLUMN job_ids TEXT CHARACTER SET ascii COLLATE ascii_bin NULL AFTER job_count',
  'DO 0');
PREPARE jobq_stmt FROM @jobq_ddl;
EXECUTE jobq_stmt;
DEALLOCATE PREPARE jobq_stmt;
