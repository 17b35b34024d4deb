/* queue.c -- put jobs in and count them: enqueue, per-queue counts,
 * release of stale leases.  Reservation is in queue_reserve.c, outcomes
 * in queue_outcome.c, the one-job views of `jobq show` in queue_view.c. */
#include "config.h"

#include <mysqld_error.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "flow.h"
#include "queue.h"

/* Appends one new job's values: [unique_key,] queue, type, payload,
 * priority, max_attempts, available_at (the columns of
 * queue_enqueue_sql). */
static void
enqueue_row(struct db *db, struct buf *sql, const struct enqueue_item *it, int keyed)
{
	if (keyed && it->unique_key != NULL)
		db_sql(db, sql, "%q, ", it->unique_key);
	else if (keyed)
		buf_adds(sql, "NULL, ");
	db_sql(db, sql, "%q, %q, %b, %d, ", it->queue, it->type, it->payload, it->payload_len, it->priority);
	if (it->max_attempts > 0)
		db_sql(db, sql, "%u, ", it->max_attempts);
	else
		buf_adds(sql, "NULL, ");
	if (it->at != NULL)
		db_sql(db, sql, "%q", it->at);
	else if (it->delay_ms > 0)
		db_sql(db, sql, "UTC_TIMESTAMP(6) + INTERVAL %I MICROSECOND", it->delay_ms * 1000);
	else
		buf_adds(sql, "UTC_TIMESTAMP(6)");
}

/* Appends the one INSERT that enqueues items[0..n) (no ';').  With a
 * condition (SQL, e.g. "@jobq_fence > 0") the rows are inserted only
 * when it holds as the statement runs: how a follow-up job is tied to
 * its parent's fenced outcome in the same transaction (queue_outcome.c). */
void
queue_enqueue_sql(struct db *db, struct buf *sql, const struct enqueue_item *items, size_t n, const char *cond)
{
	size_t i;
	int keyed = 0;

	for (i = 0; i < n; i++)
		keyed |= items[i].unique_key != NULL;
	buf_printf(sql, "INSERT INTO jobs (%squeue, type, payload, priority, max_attempts, available_at) ",
	    keyed ? "unique_key, " : "");
	if (cond == NULL)
		buf_adds(sql, "VALUES ");
	for (i = 0; i < n; i++) {
		if (cond == NULL) {
			buf_adds(sql, i ? ", (" : "(");
			enqueue_row(db, sql, &items[i], keyed);
			buf_adds(sql, ")");
			continue;
		}
		buf_adds(sql, i ? " UNION ALL SELECT " : "SELECT ");
		enqueue_row(db, sql, &items[i], keyed);
		buf_printf(sql, " FROM DUAL WHERE %s", cond);
	}
}

/* Inserts items in one multi-row INSERT (the caller keeps it under the
 * server's max_allowed_packet: see batch.h); *first_id is the id of the
 * first row.  It is not rerun here: on its own the statement is its own
 * transaction, and inside the caller's transaction a deadlock has rolled
 * back the whole transaction, which only the caller can rerun. */
int
queue_enqueue(struct db *db, const struct enqueue_item *items, size_t n, uint64_t *first_id, char *err)
{
	struct buf sql;
	int rc;

	buf_init(&sql);
	queue_enqueue_sql(db, &sql, items, n, NULL);
	rc = db_exec_buf(db, &sql, err);
	buf_free(&sql);
	if (rc == DB_OK && first_id != NULL)
		*first_id = db_insert_id(db);
	return rc;
}

/* Whether two queue names are one queue to the database: the column's
 * collation ignores trailing spaces, so 'mail ' (written by another
 * program) is served by the workers of 'mail' and counted with it. */
static int
same_queue(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);

	while (la > 0 && a[la - 1] == ' ')
		la--;
	while (lb > 0 && b[lb - 1] == ' ')
		lb--;
	return la == lb && memcmp(a, b, la) == 0;
}

static struct queue_counts *
counts_for(struct queue_counts **q, size_t *n, const char *name)
{
	size_t i;

	for (i = 0; i < *n; i++)
		if (same_queue((*q)[i].queue, name))
			return &(*q)[i];
	*q = xrealloc(*q, (*n + 1) * sizeof **q);
	memset(&(*q)[*n], 0, sizeof **q);
	(*q)[*n].queue = xstrdup(name);
	(*q)[*n].oldest_ready_s = -1;
	return &(*q)[(*n)++];
}

/* Adds to *out (once each) every queue the jobs table holds, by a loose
 * index scan: one index dive per queue, however many jobs. */
static int
status_queues(struct db *db, const char *where, struct queue_counts **out, size_t *n, char *err)
{
	struct db_res *r;
	char **row;
	int rc;

	r = db_query(db, &rc, err, "SELECT DISTINCT queue FROM jobs WHERE %s", where);
	if (r == NULL)
		return rc;
	while ((row = db_res_next(r)) != NULL)
		counts_for(out, n, row[0] ? row[0] : "");
	db_res_free(r);
	return DB_OK;
}

/* Builds the one statement that counts the listed queues.  Per queue, two
 * range counts on jobs_due split its rows at now (due_at <= now: ready or
 * stale; due_at > now: delayed or reserved), and an ordered walk finds
 * the oldest due row nobody holds.  The last part reads only the held
 * rows (jobs_lease): how many are reserved, and how many of them sort
 * into each side of now, which status_read subtracts.  One statement, so
 * every part reads one snapshot at one UTC_TIMESTAMP(6).  Each row names
 * its queue by its 1-based place in q: FIELD compares as the column does
 * (trailing spaces ignored), so a held row finds its queue whatever
 * spelling another program stored. */
static void
status_sql(struct db *db, const struct queue_counts *q, size_t n, struct buf *sql)
{
	const char *due = "FROM jobs FORCE INDEX (jobs_due) WHERE queue = %q AND due_at";
	size_t i;

	for (i = 0; i < n; i++) {
		db_sql(db, sql, "SELECT %U, (SELECT COUNT(*) ", (uint64_t)i + 1);
		db_sql(db, sql, due, q[i].queue);
		buf_adds(sql, " <= UTC_TIMESTAMP(6)), (SELECT COUNT(*) ");
		db_sql(db, sql, due, q[i].queue);
		buf_adds(
		    sql, " > UTC_TIMESTAMP(6)), (SELECT TIMESTAMPDIFF(SECOND, due_at, UTC_TIMESTAMP(6)) ");
		db_sql(db, sql, due, q[i].queue);
		buf_adds(sql,
		    " <= UTC_TIMESTAMP(6) AND lease_token IS NULL ORDER BY due_at LIMIT 1),"
		    " 0, 0, 0 UNION ALL ");
	}
	/* A lease token without an expiry is no live lease: such a row is
	 * stale, and sorts by available_at (its due_at) on either side. */
	buf_adds(sql, "SELECT FIELD(queue");
	for (i = 0; i < n; i++)
		db_sql(db, sql, ", %q", q[i].queue);
	buf_adds(sql,
	    ") AS k, 0, 0, NULL, SUM(due_at <= UTC_TIMESTAMP(6)),"
	    " SUM(COALESCE(lease_expires_at > UTC_TIMESTAMP(6), 0)), COUNT(*)"
	    " FROM jobs FORCE INDEX (jobs_lease) WHERE lease_token IS NOT NULL"
	    " GROUP BY k HAVING k > 0");
}

/* Runs status_sql and turns its parts into the five states. */
static int
status_read(struct db *db, struct queue_counts *q, size_t n, char *err)
{
	uint64_t *held_due, *held, k;
	struct db_res *r;
	struct buf sql;
	char **row;
	size_t i;
	int rc;

	if (n == 0)
		return DB_OK;
	buf_init(&sql);
	status_sql(db, q, n, &sql);
	r = db_query_buf(db, &sql, &rc, err);
	buf_free(&sql);
	if (r == NULL)
		return rc;
	held_due = xcalloc(n, sizeof *held_due);
	held = xcalloc(n, sizeof *held);
	while ((row = db_res_next(r)) != NULL) {
		if ((k = db_col_u64(row[0], 0)) < 1 || k > n)
			fatal("queue_status: a count for queue number '%s' of %zu", row[0], n);
		k--;
		q[k].ready += db_col_u64(row[1], 0);
		q[k].delayed += db_col_u64(row[2], 0);
		if (row[3] != NULL)
			q[k].oldest_ready_s = db_col_i64(row[3], -1);
		held_due[k] += db_col_u64(row[4], 0);
		q[k].reserved += db_col_u64(row[5], 0);
		held[k] += db_col_u64(row[6], 0);
	}
	db_res_free(r);
	/* Every held row was counted in one of the two ranges: the same
	 * statement read both, so the subtractions cannot go below zero. */
	for (i = 0; i < n; i++) {
		q[i].stale = held[i] - q[i].reserved;
		q[i].ready -= held_due[i];
		q[i].delayed -= held[i] - held_due[i];
	}
	free(held_due);
	free(held);
	return DB_OK;
}

/* Sets paused on each of q that `jobq pause` paused. */
static int
status_paused(struct db *db, struct queue_counts *q, size_t n, char *err)
{
	char **paused;
	size_t i, k;
	int rc = flow_paused_list(db, &paused, err);

	for (i = 0; rc == DB_OK && paused[i] != NULL; i++)
		for (k = 0; k < n; k++)
			if (same_queue(q[k].queue, paused[i]))
				q[k].paused = 1;
	strv_free(paused);
	return rc;
}

/* Counts per queue and state (DESIGN.md 5b): every configured queue,
 * plus any other queue the tables hold jobs for.  only_queue, when not
 * NULL, limits the answer to that queue.
 *
 * The counts are served by indexes, not kept in a counts table.  The
 * states depend on the clock (a delayed job becomes ready, a lease runs
 * out) without any write, so no counter kept by writes can answer them
 * alone; counters would also have to see applications' plain INSERTs
 * (DESIGN 5), which only triggers could, and every claim would update
 * the same counter row, serialising the workers on it.  Index counting
 * costs nothing on the write path: it reads the covering index jobs_due
 * once (one range each side of now per queue, never the rows and their
 * payloads) plus the few held rows through jobs_lease.  It is still
 * linear in the jobs held: InnoDB keeps no counts in its trees (about
 * 0.2 s of server CPU at 1,000,000 jobs on the 2-core development VM,
 * against 1.3 s for reading every row). */
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
	if ((rc = status_queues(db, where.data, out, n, err)) != DB_OK)
		goto fail;
	if ((rc = status_read(db, *out, *n, err)) != DB_OK)
		goto fail;
	r = db_query(
	    db, &rc, err, "SELECT queue, COUNT(*) FROM failed_jobs WHERE %s GROUP BY queue", where.data);
	if (r == NULL)
		goto fail;
	while ((row = db_res_next(r)) != NULL)
		counts_for(out, n, row[0] ? row[0] : "")->failed = db_col_u64(row[1], 0);
	db_res_free(r);
	if ((rc = status_paused(db, *out, *n, err)) != DB_OK)
		goto fail;
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
