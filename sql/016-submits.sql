-- jobq schema, version 16: one submit of a dashboard form, one job.
--
-- The enqueue form sends a random submit id, new each time it is drawn
-- and after each success.  The row of (user, submit id) is written in
-- the transaction that enqueues the jobs: a second request with the same
-- id (a double click, a resend after a lost answer) meets the primary
-- key, enqueues nothing and is answered with the first one's ids.  Rows
-- older than a day are pruned a few at a time as submits come
-- (serve_submit.c).
CREATE TABLE IF NOT EXISTS jobq_submits (
  username    VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  submit_id   VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  first_id    BIGINT UNSIGNED NOT NULL DEFAULT 0,
  job_count   INT UNSIGNED NOT NULL DEFAULT 0,
  at          DATETIME(6) NOT NULL DEFAULT (UTC_TIMESTAMP(6)),
  PRIMARY KEY (username, submit_id),
  KEY jobq_submits_at (at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
