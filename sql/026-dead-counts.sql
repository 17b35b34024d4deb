-- jobq schema, version 26: the dead letter counted as the jobs are.
--
-- `jobq status` (and the dashboard's overview and /metrics, which call
-- the same code) counted the dead letter per queue by reading every row
-- of failed_jobs_queue: 48 ms of a status with 150,000 dead jobs.  The
-- column failed of jobq_counts now holds how many rows failed_jobs has
-- per queue, kept by triggers on failed_jobs exactly as 010-counts.sql
-- keeps jobs (read that file for the shards, the rights the triggers
-- need and why a plain SQL write is counted too).  Moving a job to the
-- dead letter deletes its jobs row and inserts its failed_jobs row in one
-- transaction, so both triggers add to the same shard row; `failed
-- retry` does the opposite.  Dead letters are rare next to done jobs, so
-- the extra counter write costs the claim and outcome path nothing.
-- TRUNCATE failed_jobs bypasses the triggers: `jobq check` reports the
-- difference and `jobq check --repair-counts` corrects it.
--
-- The column is added only when information_schema does not list it
-- yet, so a second run changes nothing.
SET @jobq_ddl = IF((SELECT COUNT(*) FROM information_schema.columns
  WHERE table_schema = DATABASE() AND table_name = 'jobq_counts' AND column_name = 'failed') = 0,
  'ALTER TABLE jobq_counts ADD COLUMN failed BIGINT NOT NULL DEFAULT 0',
  'DO 0');
PREPARE jobq_stmt FROM @jobq_ddl;
EXECUTE jobq_stmt;
DEALLOCATE PREPARE jobq_stmt;

DROP TRIGGER IF EXISTS jobq_failed_insert;
CREATE TRIGGER jobq_failed_insert AFTER INSERT ON failed_jobs FOR EACH ROW
  INSERT INTO jobq_counts (queue, shard, jobs, failed)
  VALUES (NEW.queue, CRC32(CONCAT(@@hostname, ':', @@port)) % 1000 * 64 + CONNECTION_ID() % 64, 0, 1)
  ON DUPLICATE KEY UPDATE failed = failed + 1;
DROP TRIGGER IF EXISTS jobq_failed_delete;
CREATE TRIGGER jobq_failed_delete AFTER DELETE ON failed_jobs FOR EACH ROW
  INSERT INTO jobq_counts (queue, shard, jobs, failed)
  VALUES (OLD.queue, CRC32(CONCAT(@@hostname, ':', @@port)) % 1000 * 64 + CONNECTION_ID() % 64, 0, -1)
  ON DUPLICATE KEY UPDATE failed = failed - 1;
-- A dead job moved to another queue by hand.  Any other update (the
-- outcome that gives a dead job a fresh id, a note) only tests the IF.
DROP TRIGGER IF EXISTS jobq_failed_update;
CREATE TRIGGER jobq_failed_update AFTER UPDATE ON failed_jobs FOR EACH ROW IF OLD.queue <> NEW.queue THEN INSERT INTO jobq_counts (queue, shard, jobs, failed) VALUES (OLD.queue, CRC32(CONCAT(@@hostname, ':', @@port)) % 1000 * 64 + CONNECTION_ID() % 64, 0, -1), (NEW.queue, CRC32(CONCAT(@@hostname, ':', @@port)) % 1000 * 64 + CONNECTION_ID() % 64, 0, 1) ON DUPLICATE KEY UPDATE failed = failed + VALUES(failed); END IF;

-- The starting counts, without stopping anyone, by the same reasoning as
-- 010-counts.sql's (one snapshot of both tables, only the difference
-- added, to shard 0).  `jobq check --repair-counts` runs this very
-- statement after that one.
SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
INSERT INTO jobq_counts (queue, shard, jobs, failed)
  SELECT queue, 0, 0, SUM(n) FROM (
    SELECT queue, COUNT(*) AS n FROM failed_jobs GROUP BY queue
    UNION ALL
    SELECT queue, -SUM(failed) FROM jobq_counts GROUP BY queue) AS diff
  GROUP BY queue HAVING SUM(n) <> 0
  ON DUPLICATE KEY UPDATE failed = failed + VALUES(failed);
