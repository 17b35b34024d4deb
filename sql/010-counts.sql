-- jobq schema, version 10: per-queue job counts kept by triggers.
--
-- jobq_counts holds how many rows jobs has per queue, split over shard
-- rows: the sum of a queue's rows is its number of jobs.  `jobq status`
-- reads that sum (a few rows) instead of counting the ready backlog, and
-- counts by index only what the sum cannot tell apart: the rows due later
-- (delayed and reserved, usually few) and the held ones.  The clock moves
-- jobs between states without a write; it never changes how many rows a
-- queue has, which is all that is kept here.
--
-- Triggers keep it, in the transaction of every row change, so an
-- application's plain INSERT INTO jobs (inside its own transaction) is
-- counted as exactly as `jobq enqueue`, and a rollback takes its count
-- back with it.  A claim, a lease extension or a retry changes no queue:
-- the UPDATE trigger writes nothing for them (its SELECT yields no row).
-- TRUNCATE jobs bypasses triggers: `jobq check` reports the difference and
-- `jobq check --repair-counts` corrects it.
--
-- Shards: a transaction adds to the row of its own connection's shard, so
-- concurrent workers do not queue on one hot row.  The shard is the node's
-- band (a hash of host name and port: 1000 bands of 64) plus the connection
-- id modulo 64, so the nodes of a Galera cluster write disjoint rows (two
-- nodes share a band with odds of 1 in 1000 per pair) and never fail
-- each other's commits at certification over a count; one node's
-- connections take its 64 rows in turn.  A shard row may go negative (a
-- job inserted by one connection and deleted by another); only sums mean
-- anything.  The queue column has the collation of jobs.queue (trailing
-- spaces ignored), so 'mail ' is counted with 'mail' as the workers serve it.
--
-- The triggers run with the rights of the user that created them (their
-- DEFINER, the user of `jobq init`): that user must keep the TRIGGER right
-- and its row rights on the database, or every write to jobs fails.
-- Creating them needs TRIGGER, and with binary logging on, SUPER or
-- log_bin_trust_function_creators = 1.
--
-- Every statement is idempotent: a second run recreates the triggers and
-- adds nothing to counts that are right.  Writes that slip in between a
-- DROP TRIGGER and its CREATE (a second run, or two inits on two Galera
-- nodes) go uncounted, but they have committed before the CREATE returns
-- (it waits for them), so the counting statement at the end, which every
-- run reaches, puts them in.
CREATE TABLE IF NOT EXISTS jobq_counts (
  queue VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  shard SMALLINT UNSIGNED NOT NULL,
  jobs  BIGINT NOT NULL,
  PRIMARY KEY (queue, shard)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- Each trigger body is one statement (no BEGIN ... END over several
-- lines), so the file splits on semicolons at line ends like every other
-- migration.
-- `jobq enqueue --batch` counts its chunks itself, one counter write per
-- queue and chunk in the chunk's transaction, and sets @jobq_counted
-- meanwhile so that this trigger skips its rows (a write per row cost bulk
-- enqueue a third of its speed); see queue_enqueue_uncounted in queue.c.
DROP TRIGGER IF EXISTS jobq_counts_insert;
CREATE TRIGGER jobq_counts_insert AFTER INSERT ON jobs FOR EACH ROW IF @jobq_counted IS NULL THEN INSERT INTO jobq_counts (queue, shard, jobs) VALUES (NEW.queue, CRC32(CONCAT(@@hostname, ':', @@port)) % 1000 * 64 + CONNECTION_ID() % 64, 1) ON DUPLICATE KEY UPDATE jobs = jobs + 1; END IF;
DROP TRIGGER IF EXISTS jobq_counts_delete;
CREATE TRIGGER jobq_counts_delete AFTER DELETE ON jobs FOR EACH ROW
  INSERT INTO jobq_counts (queue, shard, jobs)
  VALUES (OLD.queue, CRC32(CONCAT(@@hostname, ':', @@port)) % 1000 * 64 + CONNECTION_ID() % 64, -1)
  ON DUPLICATE KEY UPDATE jobs = jobs - 1;
-- A row moved to another queue: one off the old, one on the new.  Any
-- other update (every claim, heartbeat and release) only tests the IF,
-- which costs a small fraction of running a statement that writes nothing
-- (an INSERT ... SELECT ... WHERE false took 12 us a row, a fifth of a
-- claim's server time).  The compound statement stays on one line, so the
-- file still splits only at a line's final semicolon; the server parses the
-- inner one as part of the trigger.
DROP TRIGGER IF EXISTS jobq_counts_update;
CREATE TRIGGER jobq_counts_update AFTER UPDATE ON jobs FOR EACH ROW IF OLD.queue <> NEW.queue THEN INSERT INTO jobq_counts (queue, shard, jobs) VALUES (OLD.queue, CRC32(CONCAT(@@hostname, ':', @@port)) % 1000 * 64 + CONNECTION_ID() % 64, -1), (NEW.queue, CRC32(CONCAT(@@hostname, ':', @@port)) % 1000 * 64 + CONNECTION_ID() % 64, 1) ON DUPLICATE KEY UPDATE jobs = jobs + VALUES(jobs); END IF;

-- The starting counts, without stopping anyone.  The statement reads one
-- snapshot of both tables and adds, per queue, what jobs holds minus what
-- the counts already say (shard 0 takes the difference).  Every change
-- committed before that snapshot is in both (a change counted by a
-- trigger is subtracted, one made before the triggers is not), every later
-- one only in the triggers' own additions, and additions commute: the sum
-- comes out exact with no lock held across the count.  No writer slips
-- between: CREATE TRIGGER waited for every open transaction that had
-- written jobs without the triggers (the table's metadata lock), and on
-- Galera DDL in total order aborts such transactions on the other nodes.
-- READ COMMITTED reads jobs without locking its rows (the worker's
-- session uses it already; this is for a run by hand).  With nothing to
-- correct the statement writes nothing, so rerunning it is harmless:
-- `jobq check --repair-counts` runs this very statement.
SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
INSERT INTO jobq_counts (queue, shard, jobs)
  SELECT queue, 0, SUM(n) FROM (
    SELECT queue, COUNT(*) AS n FROM jobs GROUP BY queue
    UNION ALL
    SELECT queue, -SUM(jobs) FROM jobq_counts GROUP BY queue) AS diff
  GROUP BY queue HAVING SUM(n) <> 0
  ON DUPLICATE KEY UPDATE jobs = jobs + VALUES(jobs);
