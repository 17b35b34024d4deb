/* queue_batch.c -- the progress of `jobq enqueue --batch`, kept in the
 * database beside the jobs it wrote.
 *
 * A batch is named by a key.  Each chunk of jobs is inserted in the same
 * transaction that moves the batch's row in jobq_batches to the chunk's
 * last input line, so the row always says exactly which lines are in
 * the jobs table: whatever happens to the connection (even a COMMIT that
 * got no answer), reading the row afterwards tells what was committed,
 * and a re-run with the same key starts after it.  The update is
 * conditional on the line the caller last saw, so two processes running
 * the same batch cannot both write a chunk. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "queue.h"

/* Reads the row of key into *p; *found = 0 when there is none. */
int
queue_batch_get(struct db *db, const char *key, struct batch_progress *p, int *found, char *err)
{
	struct db_res *r;
	char **row;
	int rc;

	*found = 0;
	r = db_query(db, &rc, err,
	    "SELECT input_hash, lines_total, jobs_total, lines_done, jobs_done FROM jobq_batches"
	    " WHERE batch_key = %q",
	    key);
	if (r == NULL)
		return rc;
	if ((row = db_res_next(r)) != NULL && row[0] != NULL && row[1] && row[2] && row[3] && row[4]) {
		snprintf(p->input_hash, sizeof p->input_hash, "%s", row[0]);
		p->lines_total = strtoull(row[1], NULL, 10);
		p->jobs_total = strtoull(row[2], NULL, 10);
		p->lines_done = strtoull(row[3], NULL, 10);
		p->jobs_done = strtoull(row[4], NULL, 10);
		*found = 1;
	}
	db_res_free(r);
	return DB_OK;
}

/* Starts the batch key describing input p (lines_total, jobs_total,
 * input_hash), or finds it started before: then p's progress fields are
 * what is already committed, and *same = 0 if the earlier run had other
 * input.  Completed batches older than 30 days are forgotten here, a
 * few at a time, so the table stays small without a separate job. */
int
queue_batch_open(struct db *db, const char *key, struct batch_progress *p, int *same, char *err)
{
	struct batch_progress old;
	int rc, found;

	*same = 1;
	rc = db_exec(db, err,
	    "DELETE FROM jobq_batches WHERE lines_done = lines_total"
	    " AND updated_at < UTC_TIMESTAMP(6) - INTERVAL 30 DAY LIMIT 100");
	if (rc == DB_OK)
		rc = db_exec(db, err,
		    "INSERT INTO jobq_batches (batch_key, input_hash, lines_total, jobs_total)"
		    " VALUES (%q, %q, %U, %U) ON DUPLICATE KEY UPDATE batch_key = batch_key",
		    key, p->input_hash, p->lines_total, p->jobs_total);
	if (rc == DB_OK)
		rc = queue_batch_get(db, key, &old, &found, err);
	if (rc != DB_OK)
		return rc;
	if (!found) {
		errf(err, "batch '%s' vanished as it was started", key);
		return DB_EFAIL;
	}
	*same = strcmp(old.input_hash, p->input_hash) == 0 && old.lines_total == p->lines_total &&
	    old.jobs_total == p->jobs_total;
	p->lines_done = old.lines_done;
	p->jobs_done = old.jobs_done;
	return DB_OK;
}

/* One try of queue_batch_add's transaction. */
static int
add_once(struct db *db, const char *key, const struct batch_progress *p, uint64_t to_line,
    const struct enqueue_item *items, size_t n, int *raced, char *err)
{
	int rc = db_begin(db, err);

	if (rc == DB_OK)
		rc = db_exec(db, err,
		    "UPDATE jobq_batches SET lines_done = %U, jobs_done = jobs_done + %U,"
		    " updated_at = UTC_TIMESTAMP(6) WHERE batch_key = %q AND lines_done = %U",
		    to_line, (uint64_t)n, key, p->lines_done);
	if (rc == DB_OK && db_affected(db) != 1) {
		*raced = 1;
		errf(err, "batch '%s' moved past line %llu meanwhile: another process is running it", key,
		    (unsigned long long)p->lines_done);
		rc = DB_EFAIL;
	}
	if (rc == DB_OK && n > 0)
		rc = queue_enqueue_counted(db, items, n, err);
	if (rc == DB_OK)
		rc = db_commit(db, err);
	if (rc != DB_OK)
		db_rollback(db);
	return rc;
}

/* Inserts items (input lines p->lines_done+1 .. to_line) and records
 * that those lines are done, in one transaction, rerun whole on a
 * deadlock.  On DB_OK p's progress moves on.  On DB_EGONE the outcome is
 * unknown (the COMMIT may have happened): ask queue_batch_get after
 * reconnecting. */
int
queue_batch_add(struct db *db, const char *key, struct batch_progress *p, uint64_t to_line,
    const struct enqueue_item *items, size_t n, char *err)
{
	int rc, attempt = 0, raced = 0;

	do
		rc = add_once(db, key, p, to_line, items, n, &raced, err);
	while (rc != DB_OK && !raced && db_retry_after(rc, ++attempt));
	if (rc == DB_OK) {
		p->lines_done = to_line;
		p->jobs_done += n;
	}
	return rc;
}
