-- jobq schema, version 3: the progress of `jobq enqueue --batch`.
--
-- One row per batch key.  Each chunk of a batch is inserted into jobs in
-- the same transaction that moves lines_done to the chunk's last input
-- line, so the row says exactly which lines are committed, and a re-run
-- with the same key (`--batch-key KEY`) adds only the rest.  input_hash,
-- lines_total and jobs_total identify the input, so a key cannot be
-- resumed with other data.  Completed rows older than 30 days are
-- removed by the next batch.  The jobs table itself is unchanged: a plain
-- INSERT INTO jobs (queue, type, payload, available_at) still works.
CREATE TABLE IF NOT EXISTS jobq_batches (
  batch_key   VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  input_hash  CHAR(16) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  lines_total BIGINT UNSIGNED NOT NULL,
  jobs_total  BIGINT UNSIGNED NOT NULL,
  lines_done  BIGINT UNSIGNED NOT NULL DEFAULT 0,
  jobs_done   BIGINT UNSIGNED NOT NULL DEFAULT 0,
  created_at  DATETIME(6) NOT NULL DEFAULT (UTC_TIMESTAMP(6)),
  updated_at  DATETIME(6) NOT NULL DEFAULT (UTC_TIMESTAMP(6)),
  PRIMARY KEY (batch_key),
  KEY jobq_batches_updated (updated_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
