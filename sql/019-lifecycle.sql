-- jobq schema, version 19: the job lifecycle (cancel, expire, checkpoint,
-- trace context).
--
-- jobs.expires_at: a job not started by then never starts; a worker that
-- claims it, or the periodic sweep (jobs_expiry), finalizes it as expired.
-- NULL (the default, and what a plain INSERT leaves): never.
-- jobs.cancel_by and cancel_at: who asked, and when, to cancel the job
-- while a worker held it; the worker stops its handler and finalizes it
-- as cancelled.  A queued job is cancelled at once and never gets them.
-- jobs.checkpoint: the newest {"checkpoint": VALUE} a handler wrote on its
-- control channel (VALUE as JSON text), handed to the next attempt as
-- JOBQ_CHECKPOINT.
-- jobs.traceparent: the W3C trace context the job was enqueued with; each
-- run gets a new span id under its trace id.
-- job_runs.trace_id and span_id: the ids each run ran under.
-- failed_jobs keeps traceparent and checkpoint, so that a retry from the
-- dead letter continues the trace and resumes from the checkpoint.
SET @jobq_ddl = IF((SELECT COUNT(*) FROM information_schema.columns
  WHERE table_schema = DATABASE() AND table_name = 'jobs' AND column_name = 'expires_at') = 0,
  'ALTER TABLE jobs ADD COLUMN expires_at DATETIME(6) NULL DEFAULT NULL, ADD COLUMN cancel_by VARCHAR(128) NULL DEFAULT NULL, ADD COLUMN cancel_at DATETIME(6) NULL DEFAULT NULL, ADD COLUMN checkpoint MEDIUMTEXT NULL DEFAULT NULL, ADD COLUMN traceparent VARCHAR(55) CHARACTER SET ascii COLLATE ascii_bin NULL DEFAULT NULL, ADD KEY jobs_expiry (expires_at)',
  'DO 0');
PREPARE jobq_stmt FROM @jobq_ddl;
EXECUTE jobq_stmt;
DEALLOCATE PREPARE jobq_stmt;
SET @jobq_ddl = IF((SELECT COUNT(*) FROM information_schema.columns
  WHERE table_schema = DATABASE() AND table_name = 'job_runs' AND column_name = 'trace_id') = 0,
  'ALTER TABLE job_runs ADD COLUMN trace_id CHAR(32) CHARACTER SET ascii COLLATE ascii_bin NULL, ADD COLUMN span_id CHAR(16) CHARACTER SET ascii COLLATE ascii_bin NULL',
  'DO 0');
PREPARE jobq_stmt FROM @jobq_ddl;
EXECUTE jobq_stmt;
DEALLOCATE PREPARE jobq_stmt;
SET @jobq_ddl = IF((SELECT COUNT(*) FROM information_schema.columns
  WHERE table_schema = DATABASE() AND table_name = 'failed_jobs' AND column_name = 'traceparent') = 0,
  'ALTER TABLE failed_jobs ADD COLUMN traceparent VARCHAR(55) CHARACTER SET ascii COLLATE ascii_bin NULL, ADD COLUMN checkpoint MEDIUMTEXT NULL',
  'DO 0');
PREPARE jobq_stmt FROM @jobq_ddl;
EXECUTE jobq_stmt;
DEALLOCATE PREPARE jobq_stmt;
