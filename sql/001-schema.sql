-- jobq schema, version 1.
--
-- Applied by `jobq init` (which records it in jobq_schema); it may also be
-- run by hand.  Every statement is idempotent.  Statements end with a
-- semicolon at the end of a line; `jobq init` splits on that.
--
-- All times are UTC (DATETIME(6) holding UTC_TIMESTAMP()); jobq's sessions
-- run with time_zone = '+00:00'.  Runs on MariaDB 10.2+ and MySQL 8.0.13+
-- (expression defaults); SKIP LOCKED needs MariaDB 10.6+ or MySQL 8.0,
-- older servers use the conditional-UPDATE reservation path.

-- The queue.  Applications may enqueue inside their own transaction with
--   INSERT INTO jobs (queue, type, payload, available_at)
--   VALUES ('default', 'send_email', '{"to": "a@example.com"}', UTC_TIMESTAMP());
-- every other column has a default.
--
-- due_at is when the job may next be taken: available_at for a job nobody
-- holds, the lease expiry for a reserved one (so a job whose worker died
-- comes back by itself).  The reservation index (queue, priority, due_at)
-- lets a worker read only due rows, in the order it takes them: delayed,
-- backing-off and reserved jobs all sort after the due ones of their
-- priority and are never read.
CREATE TABLE IF NOT EXISTS jobs (
  id               BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  queue            VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL DEFAULT 'default',
  type             VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  payload          LONGTEXT NOT NULL,
  priority         SMALLINT NOT NULL DEFAULT 0,
  attempts         INT UNSIGNED NOT NULL DEFAULT 0,
  max_attempts     INT UNSIGNED NULL DEFAULT NULL,
  available_at     DATETIME(6) NOT NULL DEFAULT (UTC_TIMESTAMP(6)),
  reserved_at      DATETIME(6) NULL DEFAULT NULL,
  reserved_by      VARCHAR(128) NULL DEFAULT NULL,
  lease_token      CHAR(32) CHARACTER SET ascii COLLATE ascii_bin NULL DEFAULT NULL,
  lease_expires_at DATETIME(6) NULL DEFAULT NULL,
  due_at           DATETIME(6) GENERATED ALWAYS AS (COALESCE(lease_expires_at, available_at)) STORED,
  last_error       MEDIUMTEXT NULL DEFAULT NULL,
  created_at       DATETIME(6) NOT NULL DEFAULT (UTC_TIMESTAMP(6)),
  PRIMARY KEY (id),
  KEY jobs_reserve (queue, priority, due_at),
  KEY jobs_lease (lease_token)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- Dead-letter: jobs that failed for good.  id is the job's id, so a job
-- keeps its number in `jobq show`, `jobq failed retry` and the run history.
CREATE TABLE IF NOT EXISTS failed_jobs (
  id           BIGINT UNSIGNED NOT NULL,
  queue        VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  type         VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  payload      LONGTEXT NOT NULL,
  priority     SMALLINT NOT NULL DEFAULT 0,
  attempts     INT UNSIGNED NOT NULL DEFAULT 0,
  max_attempts INT UNSIGNED NULL DEFAULT NULL,
  exception    MEDIUMTEXT NOT NULL,
  exit_status  VARCHAR(64) NOT NULL DEFAULT '',
  reason       VARCHAR(255) NOT NULL DEFAULT '',
  created_at   DATETIME(6) NOT NULL DEFAULT (UTC_TIMESTAMP(6)),
  failed_at    DATETIME(6) NOT NULL DEFAULT (UTC_TIMESTAMP(6)),
  PRIMARY KEY (id),
  KEY failed_jobs_failed_at (failed_at),
  KEY failed_jobs_queue (queue, failed_at),
  KEY failed_jobs_type (type, failed_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- One row per execution of a handler: what `jobq show` lists and what
-- answers "how long does send_email take lately?".
CREATE TABLE IF NOT EXISTS job_runs (
  id          BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  job_id      BIGINT UNSIGNED NOT NULL,
  queue       VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  type        VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  attempt     INT UNSIGNED NOT NULL,
  worker      VARCHAR(128) NOT NULL,
  started_at  DATETIME(6) NOT NULL,
  duration_ms BIGINT UNSIGNED NOT NULL,
  outcome     VARCHAR(16) CHARACTER SET ascii NOT NULL,
  exit_status VARCHAR(64) NOT NULL,
  output      MEDIUMTEXT NULL,
  error       MEDIUMTEXT NULL,
  PRIMARY KEY (id),
  KEY job_runs_job (job_id, id),
  KEY job_runs_type (type, started_at),
  KEY job_runs_started (started_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- Worker registry: one row per running `jobq work` process.  A clean exit
-- deletes the row; a row whose last_seen_at stops moving is a dead worker.
CREATE TABLE IF NOT EXISTS jobq_workers (
  id             VARCHAR(128) NOT NULL,
  host           VARCHAR(255) NOT NULL,
  pid            INT UNSIGNED NOT NULL,
  queues         VARCHAR(1024) NOT NULL,
  concurrency    INT UNSIGNED NOT NULL,
  heartbeat_ms   INT UNSIGNED NOT NULL,
  started_at     DATETIME(6) NOT NULL,
  last_seen_at   DATETIME(6) NOT NULL,
  jobs_done      BIGINT UNSIGNED NOT NULL DEFAULT 0,
  jobs_retried   BIGINT UNSIGNED NOT NULL DEFAULT 0,
  jobs_dead      BIGINT UNSIGNED NOT NULL DEFAULT 0,
  current_jobs   VARCHAR(4096) NOT NULL DEFAULT '',
  version        VARCHAR(32) NOT NULL DEFAULT '',
  PRIMARY KEY (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- Scheduler state: one row per [schedule NAME] fire time that was enqueued.
-- The primary key makes "enqueue this fire time" happen once across hosts.
CREATE TABLE IF NOT EXISTS jobq_schedule_runs (
  name        VARCHAR(128) NOT NULL,
  fire_at     DATETIME NOT NULL,
  job_id      BIGINT UNSIGNED NULL,
  enqueued_at DATETIME(6) NOT NULL DEFAULT (UTC_TIMESTAMP(6)),
  host        VARCHAR(255) NOT NULL DEFAULT '',
  PRIMARY KEY (name, fire_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
