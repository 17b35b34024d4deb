-- jobq schema, version 11: schedule names compare byte for byte everywhere.
--
-- jobq_schedule_runs.name was case-insensitive (utf8mb4_unicode_ci) while
-- the INI, jobq_schedules and jobq_schedule_state compare names exactly:
-- [schedule Report] and [schedule report] then shared one run history,
-- and the second one's fires were taken for the first one's and never
-- happened.  The key (name, fire_at) now compares names as the rest do.
ALTER TABLE jobq_schedule_runs
  MODIFY name VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL;
