-- jobq schema, version 23: groups of jobs with callbacks
-- (jobq enqueue --batch --group NAME --on-complete TYPE --on-success TYPE).
--
-- jobq_groups: one row per group.  total counts the jobs put in it;
-- done, dead, cancelled and expired count those that ended, each bumped
-- in the transaction that ends the job (a worker's outcome, the
-- dead-letter move, a cancel, the expiry sweep), only when that
-- transaction's fenced statement ended it: so a job is counted once,
-- whatever becomes of the workers.  holds counts the enqueuers still
-- adding jobs in chunks (a batch takes one with its first chunk and
-- gives it back with its last), so a group is never complete half
-- written.  The group completes in the transaction that makes
-- holds = 0 and done + dead + cancelled + expired = total: it enqueues one
-- job of type on_complete (queue complete_queue), and one of on_success
-- when none ended otherwise, each with the payload {"group": ID, "name":
-- NAME, "total": N, "done": N, "dead": N, "cancelled": N, "expired": N},
-- and sets ended_at, complete_job and success_job.  The row is locked by
-- the count's UPDATE, so two transactions never both see the group
-- complete.
--
-- A group is open until it completes: jobs may be added to it (by a
-- batch naming it, or plain SQL) until then, and never after.  The
-- callbacks are not members of their group.  A job of the group retried
-- from the dead letter comes back in no group (it was counted dead).
--
-- jobs.group_id: the group a job belongs to; NULL (the default, and what
-- a plain INSERT leaves) for a job in none.
--
-- Plain SQL: in the application's transaction, UPDATE jobq_groups SET
-- total = total + N WHERE id = G AND ended_at IS NULL (0 rows: the group
-- has completed, roll back), then insert the N jobs with group_id = G.
SET @jobq_ddl = IF((SELECT COUNT(*) FROM information_schema.columns
  WHERE table_schema = DATABASE() AND table_name = 'jobs' AND column_name = 'group_id') = 0,
  'ALTER TABLE jobs ADD COLUMN group_id BIGINT UNSIGNED NULL DEFAULT NULL, ADD KEY jobs_group (group_id)',
  'DO 0');
PREPARE jobq_stmt FROM @jobq_ddl;
EXECUTE jobq_stmt;
DEALLOCATE PREPARE jobq_stmt;
CREATE TABLE IF NOT EXISTS jobq_groups (
  id             BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  name           VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  on_complete    VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NULL DEFAULT NULL,
  complete_queue VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NULL DEFAULT NULL,
  on_success     VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NULL DEFAULT NULL,
  success_queue  VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NULL DEFAULT NULL,
  total          INT UNSIGNED NOT NULL DEFAULT 0,
  holds          INT UNSIGNED NOT NULL DEFAULT 0,
  done           INT UNSIGNED NOT NULL DEFAULT 0,
  dead           INT UNSIGNED NOT NULL DEFAULT 0,
  cancelled      INT UNSIGNED NOT NULL DEFAULT 0,
  expired        INT UNSIGNED NOT NULL DEFAULT 0,
  complete_job   BIGINT UNSIGNED NULL DEFAULT NULL,
  success_job    BIGINT UNSIGNED NULL DEFAULT NULL,
  created_at     DATETIME(6) NOT NULL DEFAULT (UTC_TIMESTAMP(6)),
  ended_at       DATETIME(6) NULL DEFAULT NULL,
  PRIMARY KEY (id),
  UNIQUE KEY jobq_groups_name (name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
