-- jobq schema, version 18: the run statistics the dashboard's charts draw,
-- and the follow-ups of a done job.
--
-- job_runs.wait_ms is how long the run's job had been due when a worker
-- claimed it (claim time minus available_at), written with the run; NULL
-- in runs written before this version.  job_runs.follow_ups, in the run
-- that finished a job as done, lists the ids of the follow-up jobs its
-- handler enqueued (fd 3), comma-separated: the job's page and `jobq
-- show` link to them for as long as the run is kept.
--
-- jobq_run_stats holds the runs rolled up by `jobq serve` (src/stats.c):
-- per bucket of res seconds starting at `at` (Unix seconds), per queue
-- and type ('' in either: all of them), the runs by outcome (kind 0
-- done, 1 retry, 2 dead, with bin 0) and histograms of the wait (kind 3)
-- and the run time (kind 4), n runs in each quarter-octave bin of
-- milliseconds.  A chart of one queue and type over a range reads one
-- primary key range of at most a few thousand rows however many runs
-- the range holds.  jobq_run_stats_state is the one row that says how far
-- the roll-up got (rolled_id) and which id it may read up to next
-- (seen_id, once seen_at is a few seconds old: the transactions that
-- wrote smaller ids have committed by then).  Two `jobq serve` processes
-- take turns through that row's lock, so each run is counted once.
SET @jobq_ddl = IF((SELECT COUNT(*) FROM information_schema.columns
  WHERE table_schema = DATABASE() AND table_name = 'job_runs' AND column_name = 'wait_ms') = 0,
  'ALTER TABLE job_runs ADD COLUMN wait_ms BIGINT UNSIGNED NULL, ADD COLUMN follow_ups TEXT NULL',
  'DO 0');
PREPARE jobq_stmt FROM @jobq_ddl;
EXECUTE jobq_stmt;
DEALLOCATE PREPARE jobq_stmt;
CREATE TABLE IF NOT EXISTS jobq_run_stats (
  res   INT UNSIGNED NOT NULL,
  queue VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  type  VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  at    BIGINT UNSIGNED NOT NULL,
  kind  TINYINT UNSIGNED NOT NULL,
  bin   SMALLINT UNSIGNED NOT NULL,
  n     BIGINT UNSIGNED NOT NULL,
  PRIMARY KEY (res, queue, type, at, kind, bin),
  KEY jobq_run_stats_age (res, at)
) ENGINE=InnoDB;
CREATE TABLE IF NOT EXISTS jobq_run_stats_state (
  id        TINYINT UNSIGNED NOT NULL,
  rolled_id BIGINT UNSIGNED NOT NULL,
  seen_id   BIGINT UNSIGNED NOT NULL,
  seen_at   DATETIME(6) NOT NULL,
  PRIMARY KEY (id)
) ENGINE=InnoDB;
