-- jobq schema, version 24: jobs a dead dependency cancelled, kept so that
-- retrying it re-opens them.
--
-- jobq_parked: a copy of a job of policy all (sql/021-deps.sql) that is
-- cancelled because a job it waits for ended dead (parked_by names that
-- job), or because a job it waits for was cancelled while itself parked
-- (parked_by names that one, and so on down the graph).  The copy is
-- taken in the transaction that marks the job for cancelling, before the
-- mark; the job itself still ends cancelled, with its run row, as
-- before.  jobq_parked_deps: the jobs it waited for then.
--
-- `jobq failed retry` (and the dashboard's Retry) moves the dead job back
-- and, in the same transaction, every job parked under it, and theirs
-- down the graph: each waits again for those of its dependencies that are
-- in jobs; one with a dependency now in the dead letter stays cancelled,
-- parked under that one instead; one with a dependency that ended
-- cancelled or expired stays cancelled for good.  A job re-opened comes
-- back in no group (its group counted it cancelled), as the retried job
-- does.  Forgetting the dead job drops what is parked under it.  A user's
-- cancel of a parked job that has not ended yet drops its copy.
--
-- The columns are the ones a re-opened job keeps; a job that is parked
-- never ran (it was waiting), so it has no lease, attempts or progress.
CREATE TABLE IF NOT EXISTS jobq_parked (
  id           BIGINT UNSIGNED NOT NULL,
  parked_by    BIGINT UNSIGNED NOT NULL,
  parked_at    DATETIME(6) NOT NULL DEFAULT (UTC_TIMESTAMP(6)),
  queue        VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  type         VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  payload      LONGTEXT NOT NULL,
  priority     SMALLINT NOT NULL DEFAULT 0,
  max_attempts INT UNSIGNED NULL DEFAULT NULL,
  created_at   DATETIME(6) NOT NULL,
  unique_key   VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL DEFAULT NULL,
  expires_at   DATETIME(6) NULL DEFAULT NULL,
  traceparent  VARCHAR(55) CHARACTER SET ascii COLLATE ascii_bin NULL DEFAULT NULL,
  checkpoint   MEDIUMTEXT NULL DEFAULT NULL,
  wait_until   DATETIME(6) NULL DEFAULT NULL,
  PRIMARY KEY (id),
  KEY jobq_parked_by (parked_by)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
CREATE TABLE IF NOT EXISTS jobq_parked_deps (
  job_id   BIGINT UNSIGNED NOT NULL,
  after_id BIGINT UNSIGNED NOT NULL,
  PRIMARY KEY (job_id, after_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
