/* queue.c -- put jobs in: enqueue, and release of stale leases.
 * Reservation is in queue_reserve.c, outcomes in queue_outcome.c, the
 * counts of `jobq status` in queue_status.c, the one-job views of `jobq
 * show` in queue_view.c. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deps.h"
#include "duration.h"
#include "isotime.h"
#include "queue.h"

/* Appends when the job is meant to become due. */
static void
due_sql(struct db *db, struct buf *sql, const struct enqueue_item *it)
{
	if (it->at != NULL)
		db_sql(db, sql, "%q", it->at);
	else if (it->delay_ms > 0)
		db_sql(db, sql, "UTC_TIMESTAMP(6) + INTERVAL %I MICROSECOND", it->delay_ms * 1000);
	else
		buf_adds(sql, "UTC_TIMESTAMP(6)");
}

/* Appends one new job's values: [unique_key,] queue, type, payload,
 * priority, max_attempts, available_at (the columns of
 * queue_enqueue_sql), then those of the optional column groups.  A job
 * that waits is due at DEPS_NEVER, its due time kept in wait_until. */
static void
enqueue_row(
    struct db *db, struct buf *sql, const struct enqueue_item *it, int keyed, int life, int waits, int grouped)
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
	if (it->waiting_on > 0)
		buf_adds(sql, DEPS_NEVER);
	else
		due_sql(db, sql, it);
	if (waits) {
		db_sql(db, sql, ", %u, %d, ", it->waiting_on, it->after_any != 0);
		if (it->waiting_on > 0)
			due_sql(db, sql, it);
		else
			buf_adds(sql, "NULL");
	}
	if (grouped && it->group_id != 0)
		db_sql(db, sql, ", %U", it->group_id);
	else if (grouped && it->group != NULL)
		buf_adds(sql, ", @jobq_fg"); /* groups_join_sql set it */
	else if (grouped)
		buf_adds(sql, ", NULL");
	if (!life)
		return;
	if (it->expires_at != NULL)
		db_sql(db, sql, ", %q", it->expires_at);
	else if (it->expires_in_ms > 0)
		db_sql(db, sql, ", UTC_TIMESTAMP(6) + INTERVAL %I MICROSECOND", it->expires_in_ms * 1000);
	else
		buf_adds(sql, ", NULL");
	db_sql(db, sql, ", %q", it->traceparent);
}

/* Appends the one INSERT that enqueues items[0..n) (no ';').  With a
 * condition (SQL, e.g. "@jobq_fence > 0") the rows are inserted only
 * when it holds as the statement runs: how a follow-up job is tied to
 * its parent's fenced outcome in the same transaction (queue_outcome.c). */
void
queue_enqueue_sql(struct db *db, struct buf *sql, const struct enqueue_item *items, size_t n, const char *cond)
{
	size_t i;
	int keyed = 0, life = 0, waits = 0, grouped = 0;

	/* The optional columns are named only when an item has them, so a
	 * plain bulk insert stays as lean as it was. */
	for (i = 0; i < n; i++) {
		keyed |= items[i].unique_key != NULL;
		life |= items[i].expires_at != NULL || items[i].expires_in_ms > 0 || items[i].traceparent != NULL;
		waits |= items[i].waiting_on > 0 || items[i].after_any;
		grouped |= items[i].group_id != 0 || items[i].group != NULL;
	}
	buf_printf(sql,
	    "INSERT INTO jobs (%squeue, type, payload, priority, max_attempts, available_at%s%s%s) ",
	    keyed ? "unique_key, " : "", waits ? ", waiting_on, after_any, wait_until" : "",
	    grouped ? ", group_id" : "", life ? ", expires_at, traceparent" : "");
	if (cond == NULL)
		buf_adds(sql, "VALUES ");
	for (i = 0; i < n; i++) {
		if (cond == NULL) {
			buf_adds(sql, i ? ", (" : "(");
			enqueue_row(db, sql, &items[i], keyed, life, waits, grouped);
			buf_adds(sql, ")");
			continue;
		}
		buf_adds(sql, i ? " UNION ALL SELECT " : "SELECT ");
		enqueue_row(db, sql, &items[i], keyed, life, waits, grouped);
		buf_printf(sql, " FROM DUAL WHERE %s", cond);
	}
}

/* The database's time now, "YYYY-MM-DD HH:MM:SS.ffffff" UTC (never this
 * host's: DESIGN 5), into now (len bytes).  DB_OK, or a db_rc. */
int
queue_db_now(struct db *db, char *now, size_t len, char *err)
{
	struct db_res *r;
	char **row;
	int rc;

	if ((r = db_query(db, &rc, err, "SELECT UTC_TIMESTAMP(6)")) == NULL)
		return rc;
	snprintf(now, len, "%s", (row = db_res_next(r)) != NULL && row[0] != NULL ? row[0] : "");
	db_res_free(r);
	return DB_OK;
}

/* Whether e can ever start: a job whose expiry is not after its due
 * time would only expire unstarted, which every way in refuses as it
 * refuses an expiry already past.  now is the database's time
 * ("YYYY-MM-DD HH:MM:SS.ffffff", DESIGN 5), or NULL: then only the cases
 * that need no clock are checked (both times relative, or both given as
 * times).  0, or -1 with the problem in err. */
int
enqueue_expiry_check(const struct enqueue_item *e, const char *now, char *err)
{
	char due[40], ends[40], a[32], b[32];

	if (e->expires_at == NULL && e->expires_in_ms <= 0)
		return 0;
	if (e->expires_at == NULL && e->at == NULL) { /* both from now */
		if (e->expires_in_ms > e->delay_ms)
			return 0;
		duration_format(e->expires_in_ms, a, sizeof a);
		duration_format(e->delay_ms, b, sizeof b);
		errf(err, "the job would expire (in %s) before it is due (in %s) and never run", a, b);
		return -1;
	}
	if (e->at == NULL && now == NULL)
		return 0;
	snprintf(due, sizeof due, "%s", e->at != NULL ? e->at : now);
	if (e->at == NULL)
		isotime_add_ms(due, sizeof due, e->delay_ms);
	if (e->expires_at != NULL)
		snprintf(ends, sizeof ends, "%s", e->expires_at);
	else if (now != NULL) {
		snprintf(ends, sizeof ends, "%s", now);
		isotime_add_ms(ends, sizeof ends, e->expires_in_ms);
	} else
		return 0;
	if (strcmp(ends, due) > 0)
		return 0;
	errf(err, "the job would expire (%.26s UTC) before it is due (%.26s UTC) and never run", ends, due);
	return -1;
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

/* Inserts items like queue_enqueue, inside the caller's transaction,
 * without the insert trigger's count (it skips rows while @jobq_counted
 * is set, sql/010-counts.sql): for bulk enqueue, whose chunks are
 * thousands of rows and a counter write per row cost a third of its
 * speed.  The caller counts them with queue_count_enqueued in the same
 * transaction, so rows and count commit or roll back together. */
int
queue_enqueue_uncounted(struct db *db, const struct enqueue_item *items, size_t n, char *err)
{
	struct buf sql;
	int rc;

	buf_init(&sql);
	buf_adds(&sql, "SET @jobq_counted = 1;");
	queue_enqueue_sql(db, &sql, items, n, NULL);
	buf_adds(&sql, ";SET @jobq_counted = NULL");
	rc = db_exec_buf(db, &sql, err);
	/* A failed INSERT skipped the statement after it: the session must
	 * not go on skipping the trigger. */
	if (rc != DB_OK && db_connected(db)) {
		char ignored[ERRSZ];

		db_exec(db, ignored, "SET @jobq_counted = NULL");
	}
	buf_free(&sql);
	return rc;
}

/* Counts items, inserted by queue_enqueue_uncounted, in jobq_counts: one
 * counter write per queue.  The count goes to shard 0, which only bulk
 * enqueues and `check --repair-counts` write (a conflict over it is a
 * deadlock, and the caller reruns the chunk). */
int
queue_count_enqueued(struct db *db, const struct enqueue_item *items, size_t n, char *err)
{
	struct buf sql;
	size_t i, k, nq = 0;
	const char **queue = xcalloc(n + 1, sizeof *queue);
	uint64_t *count = xcalloc(n + 1, sizeof *count);
	int rc;

	for (i = 0; i < n; i++) {
		for (k = 0; k < nq && strcmp(queue[k], items[i].queue) != 0; k++)
			;
		if (k == nq)
			queue[nq++] = items[i].queue;
		count[k]++;
	}
	buf_init(&sql);
	buf_adds(&sql, "INSERT INTO jobq_counts (queue, shard, jobs) VALUES ");
	for (k = 0; k < nq; k++)
		db_sql(db, &sql, "%s(%q, 0, %U)", k ? ", " : "", queue[k], count[k]);
	buf_adds(&sql, " ON DUPLICATE KEY UPDATE jobs = jobs + VALUES(jobs)");
	rc = db_exec_buf(db, &sql, err);
	buf_free(&sql);
	free(queue);
	free(count);
	return rc;
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
