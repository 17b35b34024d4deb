-- jobq schema, version 14: a session ends with its user's password.
--
-- pw_tag is the SHA-256 of the password hash the user had when the
-- session opened (sessions.c).  A new `jobq passwd` hash, or a user
-- removed and added again, no longer matches: the old sessions stop
-- working.  Sessions from before this version have no tag and end at
-- their next request: nothing ties them to a password.
SET @jobq_ddl = IF((SELECT COUNT(*) FROM information_schema.columns
  WHERE table_schema = DATABASE() AND table_name = 'jobq_sessions' AND column_name = 'pw_tag') = 0,
  'ALTER TABLE jobq_sessions ADD COLUMN pw_tag CHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL DEFAULT '''', ADD KEY jobq_sessions_user (username)',
  'DO 0');
PREPARE jobq_stmt FROM @jobq_ddl;
EXECUTE jobq_stmt;
DEALLOCATE PREPARE jobq_stmt;
