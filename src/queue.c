/* queue.c -- put jobs in and count them: enqueue, per-queue counts,
 * release of stale leases.  Reservation is in queue_reserve.c, outcomes
 * in queue_outcome.c, the one-job views of `jobq show` in queue_view.c. */
#include "config.h"

#include <mysqld_error.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "queue.h"

/* Inserts items in one multi-row INSERT (the caller keeps it under the
 * server's max_allowed_packet: see batch.h); *first_id is the id of the
 * first row.  It is not rerun here: on its own the statement is its own
 * transaction, and inside the caller's transaction a deadlock has rolled
 * back the whole transaction, which only the caller can rerun. */
int
queue_enqueue(struct db *db, const struct enqueue_item *items, size_t n, uint64_t *first_id, char *err)
{
	struct buf sql;
	size_t i;
	int rc;

	buf_init(&sql);
	buf_adds(
	    &sql, "INSERT INTO jobs (queue, type, payload, priority, max_attempts, available_at) VALUES ");
	for (i = 0; i < n; i++) {
		const struct enqueue_item *it = &items[i];

		db_sql(db, &sql, "%s(%q, %q, %b, %d, ", i ? ", " : "", it->queue, it->type, it->payload,
		    it->payload_len, it->priority);
		if (it->max_attempts > 0)
			db_sql(db, &sql, "%u, ", it->max_attempts);
		else
			buf_adds(&sql, "NULL, ");
		if (it->at != NULL)
			db_sql(db, &sql, "%q)", it->at);
		else if (it->delay_ms > 0)
			db_sql(db, &sql, "UTC_TIMESTAMP(6) + INTERVAL %I MICROSECOND)", it->delay_ms * 1000);
		else
			buf_adds(&sql, "UTC_TIMESTAMP(6))");
	}
	rc = db_exec_buf(db, &sql, err);
	buf_free(&sql);
	if (rc == DB_OK && first_id != NULL)
		*first_id = db_insert_id(db);
	return rc;
}

static struct queue_counts *
counts_for(struct queue_counts **q, size_t *n, const char *name)
{
	size_t i;

	for (i = 0; i < *n; i++)
		if (strcmp((*q)[i].queue, name) == 0)
			return &(*q)[i];
	*q = xrealloc(*q, (*n + 1) * sizeof **q);
	memset(&(*q)[*n], 0, sizeof **q);
	(*q)[*n].queue = xstrdup(name);
	(*q)[*n].oldest_ready_s = -1;
	return &(*q)[(*n)++];
}

/* Counts per queue and state (DESIGN.md 5b): every configured queue,
 * plus any other queue the tables hold jobs for.  only_queue, when not
 * NULL, limits the answer to that queue. */
int
queue_status(struct db *db, const struct conf *c, const char *only_queue, struct queue_counts **out,
    size_t *n, char *err)
{
	struct db_res *r;
	struct buf where;
	char **row;
	size_t i;
	int rc;

	*out = NULL;
	*n = 0;
	buf_init(&where);
	if (only_queue != NULL)
		db_sql(db, &where, "queue = %q", only_queue);
	else
		buf_adds(&where, "1 = 1");
	for (i = 0; c->queues[i] != NULL; i++)
		if (only_queue == NULL || strcmp(only_queue, c->queues[i]) == 0)
			counts_for(out, n, c->queues[i]);
	/* Every row falls in exactly one state, whatever another program
	 * wrote: a lease token without an expiry is no live lease, so such
	 * a row counts as stale (the reservation takes it again, by
	 * available_at); a row nobody holds is ready or delayed by due_at,
	 * when the reservation will take it (available_at, unless another
	 * program left an expiry without a token).  Each SUM is over
	 * booleans that are never NULL. */
	r = db_query(db, &rc, err,
	    "SELECT queue,"
	    " SUM(lease_token IS NULL AND due_at <= UTC_TIMESTAMP(6)),"
	    " SUM(lease_token IS NULL AND due_at > UTC_TIMESTAMP(6)),"
	    " SUM(lease_token IS NOT NULL AND COALESCE(lease_expires_at > UTC_TIMESTAMP(6), 0)),"
	    " SUM(lease_token IS NOT NULL AND COALESCE(lease_expires_at <= UTC_TIMESTAMP(6), 1)),"
	    " MAX(IF(lease_token IS NULL AND due_at <= UTC_TIMESTAMP(6),"
	    "  TIMESTAMPDIFF(SECOND, due_at, UTC_TIMESTAMP(6)), NULL))"
	    " FROM jobs WHERE %s GROUP BY queue",
	    where.data);
	if (r == NULL)
		goto fail;
	while ((row = db_res_next(r)) != NULL) {
		struct queue_counts *q = counts_for(out, n, row[0] ? row[0] : "");

		q->ready = db_col_u64(row[1], 0);
		q->delayed = db_col_u64(row[2], 0);
		q->reserved = db_col_u64(row[3], 0);
		q->stale = db_col_u64(row[4], 0);
		q->oldest_ready_s = db_col_i64(row[5], -1);
	}
	db_res_free(r);
	r = db_query(
	    db, &rc, err, "SELECT queue, COUNT(*) FROM failed_jobs WHERE %s GROUP BY queue", where.data);
	if (r == NULL)
		goto fail;
	while ((row = db_res_next(r)) != NULL)
		counts_for(out, n, row[0] ? row[0] : "")->failed = db_col_u64(row[1], 0);
	db_res_free(r);
	buf_free(&where);
	return DB_OK;
fail:
	buf_free(&where);
	queue_counts_free(*out, *n);
	*out = NULL;
	*n = 0;
	return rc;
}

void
queue_counts_free(struct queue_counts *q, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(q[i].queue);
	free(q);
}

/* Makes every job whose lease expired ready again now; a lease token
 * with no expiry (written by another program) is no lease either.  One
 * conditional statement: a worker that still runs such a job finds its
 * token gone and drops its outcome. */
int
queue_release_stale(struct db *db, uint64_t *released, char *err)
{
	int rc = db_exec(db, err,
	    "UPDATE jobs SET available_at = UTC_TIMESTAMP(6), reserved_at = NULL, reserved_by = NULL,"
	    " lease_token = NULL, lease_expires_at = NULL"
	    " WHERE lease_token IS NOT NULL"
	    " AND (lease_expires_at IS NULL OR lease_expires_at <= UTC_TIMESTAMP(6))");

	*released = rc == DB_OK ? db_affected(db) : 0;
	return rc;
}
