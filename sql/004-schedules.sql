-- jobq schema, version 4: the scheduler.
--
-- jobq_schedule_runs gets one row per fire time of a schedule, whatever
-- became of it: 'enqueued' (job_id names the job), 'skipped' (the last job
-- was still queued or running, overlap = skip) or 'missed' (later than
-- catch_up).  The primary key (name, fire_at) is what makes a fire happen
-- once across hosts: the row and the job are inserted in one transaction.
-- manual = 1 marks `jobq schedule --run` (fire_at is then the moment of
-- the run, to the microsecond).
ALTER TABLE jobq_schedule_runs
  MODIFY fire_at DATETIME(6) NOT NULL,
  ADD COLUMN status VARCHAR(16) CHARACTER SET ascii NOT NULL DEFAULT 'enqueued',
  ADD COLUMN manual TINYINT NOT NULL DEFAULT 0,
  ADD KEY jobq_schedule_runs_job (job_id),
  ADD KEY jobq_schedule_runs_recent (name, enqueued_at);

-- Schedules kept in the database (`jobq schedule add`), beside the
-- [schedule NAME] sections of the INI.  type and queue must still be a
-- configured handler and queue: they are checked against the INI when a
-- schedule is added or edited, and again by every tick.
CREATE TABLE IF NOT EXISTS jobq_schedules (
  name        VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  cron        VARCHAR(255) NOT NULL,
  type        VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  payload     LONGTEXT NOT NULL,
  queue       VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NULL DEFAULT NULL,
  priority    SMALLINT NOT NULL DEFAULT 0,
  timezone    VARCHAR(64) NULL DEFAULT NULL,
  overlap     VARCHAR(8) CHARACTER SET ascii NOT NULL DEFAULT 'skip',
  catch_up_ms BIGINT UNSIGNED NOT NULL DEFAULT 3600000,
  description VARCHAR(255) NOT NULL DEFAULT '',
  created_at  DATETIME(6) NOT NULL DEFAULT (UTC_TIMESTAMP(6)),
  updated_at  DATETIME(6) NOT NULL DEFAULT (UTC_TIMESTAMP(6)),
  PRIMARY KEY (name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- Per schedule, INI or database: the on/off switch of `jobq schedule
-- enable|disable` (NULL: as the INI says) and how far the ticks have
-- looked (checked_until), so a fire missed while nothing ticked is seen
-- even for a schedule that never fired before.
CREATE TABLE IF NOT EXISTS jobq_schedule_state (
  name          VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  enabled       TINYINT NULL DEFAULT NULL,
  checked_until DATETIME(6) NULL DEFAULT NULL,
  PRIMARY KEY (name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
