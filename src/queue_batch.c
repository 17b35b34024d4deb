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

#include "groups.h"
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

/* Forgets key if no line of its batch was committed: for a run refused
 * before its first chunk, so that the key stays free for the same input
 * with other options. */
int
queue_batch_drop(struct db *db, const char *key, char *err)
{
	return db_exec(db, err, "DELETE FROM jobq_batches WHERE batch_key = %q AND lines_done = 0", key);
}

/* Adds the chunk's n jobs to group gid in the chunk's transaction: the
 * first chunk of a batch takes a hold on the group, so that it cannot
 * complete before the batch is through, and the last gives it back and
 * completes the group if every job of it has ended already.  DB_OK, or
 * GROUPS_ECLOSED (err says so) when the group completed before the
 * batch's first chunk. */
static int
add_to_group(struct db *db, uint64_t gid, const struct batch_progress *p, uint64_t to_line, size_t n,
    char *err)
{
	struct buf sql;
	char id[24];
	int rc;

	buf_init(&sql);
	groups_add_sql(db, &sql, gid, n, p->lines_done == 0, to_line == p->lines_total);
	sql.data[--sql.len] = '\0'; /* one statement: its count says whether the group was open */
	rc = db_exec_buf(db, &sql, err);
	if (rc == DB_OK && db_affected(db) != 1) {
		errf(err, "group %llu has completed (its callbacks are enqueued); no job can join it now",
		    (unsigned long long)gid);
		rc = GROUPS_ECLOSED;
	}
	if (rc == DB_OK && to_line == p->lines_total) {
		buf_reset(&sql);
		snprintf(id, sizeof id, "%llu", (unsigned long long)gid);
		groups_settle_sql(db, &sql, id, "1 = 1");
		sql.data[--sql.len] = '\0';
		rc = db_exec_buf(db, &sql, err);
	}
	buf_free(&sql);
	return rc;
}

/* One try of queue_batch_add's transaction: the rows first, so that
 * two connections can write two chunks at once; then, once turn says the
 * chunk before has committed, the progress row (its update conditional on
 * the line the caller last saw: a chunk commits only right after the one
 * before it), the count and the group, and COMMIT. */
static int
add_once(struct db *db, const char *key, const struct batch_progress *p, uint64_t to_line,
    const struct enqueue_item *items, size_t n, uint64_t gid, batch_turn *turn, void *turn_arg, int *raced,
    int *late, char *err)
{
	int rc = db_begin(db, err);

	if (rc == DB_OK && n > 0)
		rc = queue_enqueue_uncounted(db, items, n, err);
	if (rc == DB_OK && turn != NULL && (rc = turn(turn_arg, 1, err)) != DB_OK) {
		*late = rc == DB_EWAIT;
		*raced = !*late; /* the chunk before failed: a rerun cannot help */
	}
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
		rc = queue_count_enqueued(db, items, n, err);
	if (rc == DB_OK && gid != 0)
		rc = add_to_group(db, gid, p, to_line, n, err);
	if (rc == DB_OK)
		rc = db_commit(db, err);
	if (rc != DB_OK)
		db_rollback(db);
	return rc;
}

/* Inserts items (input lines p->lines_done+1 .. to_line) and records
 * that those lines are done, in one transaction, rerun whole on a
 * deadlock.  gid: the group the items join (their group_id), or 0; the
 * batch holds the group open from its first chunk to its last.  turn (or
 * NULL): what orders this chunk after the one before it, written on
 * another connection (see batch_turn).  On DB_OK p's progress moves on.
 * On DB_EGONE the outcome is unknown (the COMMIT may have happened): ask
 * queue_batch_get after reconnecting. */
int
queue_batch_add(struct db *db, const char *key, struct batch_progress *p, uint64_t to_line,
    const struct enqueue_item *items, size_t n, uint64_t gid, batch_turn *turn, void *turn_arg, char *err)
{
	int rc, attempt = 0, raced = 0;

	for (;;) {
		int late = 0;

		rc = add_once(db, key, p, to_line, items, n, gid, turn, turn_arg, &raced, &late, err);
		/* The chunk before is slow: wait for it holding nothing (this
		 * one's rows went with the rollback), then write this one whole. */
		if (late && (rc = turn(turn_arg, 0, err)) == DB_OK)
			continue;
		if (late || rc == DB_OK || rc == GROUPS_ECLOSED || raced || !db_retry_after(rc, ++attempt))
			break;
	}
	if (rc == DB_OK) {
		p->lines_done = to_line;
		p->jobs_done += n;
	}
	return rc;
}
