-- jobq schema, version 28: what the ticks last read of an INI
-- schedule's enabled key.
--
-- jobq_schedule_state.ini_enabled: the enabled key of an INI schedule as
-- the last tick that looked at it read it from its file (1 yes, 0 no);
-- NULL for a database schedule, and until a tick has recorded it.  The
-- file does not say when it was changed: a schedule turned back to
-- enabled = yes was taken to be down, not off, from the last tick that
-- read no to the first that reads yes, and catch_up enqueued the fires
-- of that time.  The first tick that reads yes after one that read no
-- now starts it afresh (etc/jobq.ini.5, enabled).
--
-- The column is added only when information_schema does not list it yet,
-- so a second run changes nothing (MySQL has no ADD COLUMN IF NOT EXISTS).
SET @jobq_ddl = IF((SELECT COUNT(*) FROM information_schema.columns
  WHERE table_schema = DATABASE() AND table_name = 'jobq_schedule_state' AND column_name = 'ini_enabled') = 0,
  'ALTER TABLE jobq_schedule_state ADD COLUMN ini_enabled TINYINT NULL DEFAULT NULL',
  'DO 0');
PREPARE jobq_stmt FROM @jobq_ddl;
EXECUTE jobq_stmt;
DEALLOCATE PREPARE jobq_stmt;
