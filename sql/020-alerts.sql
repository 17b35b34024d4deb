-- jobq schema, version 20: watchdogs (alert incidents) and the scheduler's
-- catch-up modes.
--
-- jobq_alerts holds one row per incident: a schedule whose fire was missed
-- or whose job did not finish within alert_after, a queue whose oldest
-- ready job waited past max_wait, stale leases, dead-letter growth.  kind
-- and name say what (kinds: missed, unfinished, wait, stale, dead; name is
-- the schedule's or the queue's).  open_key is 1 while the incident is
-- open and NULL once cleared: the unique key (kind, name, open_key) then
-- allows one open incident per kind and name and any number of cleared
-- ones.  Every `jobq work` evaluates the watchdogs; the one whose INSERT
-- opened the row, or whose UPDATE cleared it, is the one that runs
-- on_alert, so each incident is delivered once when raised and once when
-- cleared, however many workers and hosts watch.
-- jobq_schedules.catch_up_mode (none, latest, all) and alert_after_ms
-- (NULL: no alert) are the database schedules' copies of the INI keys.
-- jobq_schedule_state.watched_since: when a watchdog first looked at the
-- schedule; fires before it are never called missed (a schedule added
-- today did not miss yesterday's fire).
CREATE TABLE IF NOT EXISTS jobq_alerts (
  id         BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  kind       VARCHAR(16) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  name       VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  open_key   TINYINT NULL DEFAULT 1,
  reason     VARCHAR(1024) NOT NULL DEFAULT '',
  raised_at  DATETIME(6) NOT NULL DEFAULT (UTC_TIMESTAMP(6)),
  raised_by  VARCHAR(160) NOT NULL DEFAULT '',
  cleared_at DATETIME(6) NULL DEFAULT NULL,
  cleared_by VARCHAR(160) NULL DEFAULT NULL,
  PRIMARY KEY (id),
  UNIQUE KEY jobq_alerts_open (kind, name, open_key),
  KEY jobq_alerts_state (open_key, cleared_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
SET @jobq_ddl = IF((SELECT COUNT(*) FROM information_schema.columns
  WHERE table_schema = DATABASE() AND table_name = 'jobq_schedules' AND column_name = 'alert_after_ms') = 0,
  'ALTER TABLE jobq_schedules ADD COLUMN catch_up_mode VARCHAR(8) CHARACTER SET ascii NOT NULL DEFAULT ''latest'', ADD COLUMN alert_after_ms BIGINT UNSIGNED NULL DEFAULT NULL',
  'DO 0');
PREPARE jobq_stmt FROM @jobq_ddl;
EXECUTE jobq_stmt;
DEALLOCATE PREPARE jobq_stmt;
SET @jobq_ddl = IF((SELECT COUNT(*) FROM information_schema.columns
  WHERE table_schema = DATABASE() AND table_name = 'jobq_schedule_state' AND column_name = 'watched_since') = 0,
  'ALTER TABLE jobq_schedule_state ADD COLUMN watched_since DATETIME(6) NULL DEFAULT NULL',
  'DO 0');
PREPARE jobq_stmt FROM @jobq_ddl;
EXECUTE jobq_stmt;
DEALLOCATE PREPARE jobq_stmt;
