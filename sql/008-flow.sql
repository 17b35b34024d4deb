-- jobq schema, version 8: flow control (unique jobs, concurrency and
-- rate limits, paused queues).
--
-- jobs.unique_key: a job that carries a key holds it for as long as its
-- row is in jobs, that is while it is ready, delayed, backing off or
-- running.  The UNIQUE index refuses a second row with the same key
-- (NULLs never clash, so jobs without a key are unaffected), for `jobq
-- enqueue --unique-key` and for applications' plain INSERTs alike.  The
-- key is released by the very statement that records the job's end: the
-- DELETE of a done job and the move of a dead one to failed_jobs take
-- the row, and its key, away in the outcome's own transaction; nothing
-- has to remember to release it, and a retried job keeps it.
--
-- Each statement is idempotent: MySQL has no ADD COLUMN IF NOT EXISTS, so
-- columns and keys are added only when information_schema lacks them.
SET @jobq_ddl = IF((SELECT COUNT(*) FROM information_schema.columns
  WHERE table_schema = DATABASE() AND table_name = 'jobs' AND column_name = 'unique_key') = 0,
  'ALTER TABLE jobs ADD COLUMN unique_key VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL DEFAULT NULL, ADD UNIQUE KEY jobs_unique (unique_key)',
  'DO 0');
PREPARE jobq_stmt FROM @jobq_ddl;
EXECUTE jobq_stmt;
DEALLOCATE PREPARE jobq_stmt;

-- jobs_type (queue, type, priority, due_at): the claim of one type that
-- has a max_running or rate limit reads only that type's due rows, in
-- the order it takes them, as jobs_reserve does for a whole queue.
SET @jobq_ddl = IF((SELECT COUNT(*) FROM information_schema.statistics
  WHERE table_schema = DATABASE() AND table_name = 'jobs' AND index_name = 'jobs_type') = 0,
  'ALTER TABLE jobs ADD KEY jobs_type (queue, type, priority, due_at)', 'DO 0');
PREPARE jobq_stmt FROM @jobq_ddl;
EXECUTE jobq_stmt;
DEALLOCATE PREPARE jobq_stmt;

-- `--unique-for DURATION`: the key stays taken until expires_at even
-- after its job is done.  One row per key; an expired row is deleted by
-- the next enqueue of that key in the transaction that inserts the new
-- one (so the PRIMARY KEY, not a check-then-insert, decides who wins)
-- and by `jobq prune`.
CREATE TABLE IF NOT EXISTS jobq_unique (
  unique_key VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  job_id     BIGINT UNSIGNED NOT NULL,
  expires_at DATETIME(6) NOT NULL,
  PRIMARY KEY (unique_key),
  KEY jobq_unique_expires (expires_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- One row per limited scope ('type:NAME' or 'queue:NAME'), created on
-- first use.  A claim that a max_running or rate limit governs locks the
-- scope's row first: claims of one scope take turns, each counts what is
-- running and what started in the window, and takes no more than the
-- limit leaves.  Claims of other scopes do not wait.  Each claim writes
-- claimed_at, a real change, so that on a Galera cluster (where a lock
-- held on one node does not stop another) two nodes' claims of one scope
-- conflict at certification and one is rerun.
CREATE TABLE IF NOT EXISTS jobq_flow (
  scope      VARCHAR(80) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  claimed_at DATETIME(6) NULL DEFAULT NULL,
  PRIMARY KEY (scope)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- The sliding-window log of a rate limit: one row per job started of a
-- rate-limited type, written in the claim's transaction, deleted once
-- it is older than the window.
CREATE TABLE IF NOT EXISTS jobq_starts (
  id         BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  scope      VARCHAR(80) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  started_at DATETIME(6) NOT NULL,
  PRIMARY KEY (id),
  KEY jobq_starts_scope (scope, started_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- Paused queues (`jobq pause`): a queue with a row here is not claimed
-- from; `jobq resume` deletes the row.
CREATE TABLE IF NOT EXISTS jobq_paused (
  queue     VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  paused_at DATETIME(6) NOT NULL DEFAULT (UTC_TIMESTAMP(6)),
  PRIMARY KEY (queue)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
