-- jobq schema, version 12: a dead-lettered job keeps its unique key.
--
-- The move to failed_jobs dropped jobs.unique_key, so `jobq failed retry`
-- brought the job back without it and a second job with the same key
-- could then be queued beside it.  failed_jobs.unique_key holds the key
-- while the job is dead (no index: a dead job holds no key; another job
-- may take it meanwhile, and then the retry is refused).
SET @jobq_ddl = IF((SELECT COUNT(*) FROM information_schema.columns
  WHERE table_schema = DATABASE() AND table_name = 'failed_jobs' AND column_name = 'unique_key') = 0,
  'ALTER TABLE failed_jobs ADD COLUMN unique_key VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL DEFAULT NULL',
  'DO 0');
PREPARE jobq_stmt FROM @jobq_ddl;
EXECUTE jobq_stmt;
DEALLOCATE PREPARE jobq_stmt;
