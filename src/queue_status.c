/* queue_status.c -- how many jobs each queue holds, by state: the counts
 * of `jobq status`, the dashboard's overview and /metrics, and the check
 * and repair of the trigger-kept counts they start from (jobq_counts,
 * sql/010-counts.sql). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "deps.h"
#include "flow.h"
#include "queue.h"
#include "schema.h"

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

/* The side of now whose rows a queue's count reads (status_sides). */
enum side { SIDE_DUE, SIDE_LATER };

/* Where a queue's rows start on jobs_due, and the two sides of now. */
#define DUE_ROWS "FROM jobs FORCE INDEX (jobs_due) WHERE queue = %q AND due_at"
#define SIDE_DUE_SQL " <= UTC_TIMESTAMP(6)"
#define SIDE_LATER_SQL " > UTC_TIMESTAMP(6)"

/* Sets side[i] to the side of now with fewer rows of queue q[i], by the
 * server's estimates (an EXPLAIN of a range read per side: a few index
 * dives each, however many rows): a queue's row count t is kept, so
 * counting one side tells the other, and the smaller one costs less.
 * The estimates may be off by a factor (2x in a test at 1,000,000 jobs)
 * and may choose the larger side when the two are close; the count
 * stays exact either way, only its cost changes.  A snapshot of its own:
 * status_read counts in another, which only its speed depends on. */
static int
status_sides(struct db *db, const struct queue_counts *q, size_t n, enum side *side, char *err)
{
	uint64_t *est = xcalloc(2 * n, sizeof *est);
	struct db_res *r;
	struct buf sql;
	char **row;
	size_t i;
	int rc, id, rows;

	buf_init(&sql);
	buf_adds(&sql, "EXPLAIN ");
	for (i = 0; i < n; i++) {
		buf_adds(&sql, i > 0 ? " UNION ALL SELECT 1 " : "SELECT 1 ");
		db_sql(db, &sql, DUE_ROWS SIDE_DUE_SQL " UNION ALL SELECT 1 " DUE_ROWS SIDE_LATER_SQL, q[i].queue,
		    q[i].queue);
	}
	r = db_query_buf(db, &sql, &rc, err);
	buf_free(&sql);
	if (r == NULL) {
		free(est);
		return rc;
	}
	id = db_res_column(r, "id");
	rows = db_res_column(r, "rows");
	while (id >= 0 && rows >= 0 && (row = db_res_next(r)) != NULL) {
		uint64_t k = db_col_u64(row[id], 0);

		if (k >= 1 && k <= 2 * n)
			est[k - 1] = db_col_u64(row[rows], 0);
	}
	db_res_free(r);
	for (i = 0; i < n; i++)
		side[i] = est[2 * i + 1] < est[2 * i] ? SIDE_LATER : SIDE_DUE;
	free(est);
	return DB_OK;
}

/* Appends the per-queue part of status_sql: the columns k; t, the
 * queue's rows (the sum of its jobq_counts rows); whether the next
 * column counts the rows due later (1) or those due by now (0); that
 * count (see status_sides); the age of the oldest due row nobody holds;
 * three zeros (the held part's columns); and w, its rows waiting for
 * other jobs (due at DEPS_NEVER, deps.h; among the rows due later),
 * linear in the waiting rows, the last of the due index. */
static void
status_queue_sql(struct db *db, uint64_t k, const char *queue, enum side side, struct buf *sql)
{
	db_sql(db, sql, "SELECT %U, (SELECT COALESCE(SUM(jobs), 0) FROM jobq_counts WHERE queue = %q), ", k, queue);
	db_sql(db, sql, "%d, (SELECT COUNT(*) " DUE_ROWS "%s), ", side == SIDE_LATER, queue,
	    side == SIDE_LATER ? SIDE_LATER_SQL : SIDE_DUE_SQL);
	db_sql(db, sql, "(SELECT TIMESTAMPDIFF(SECOND, due_at, UTC_TIMESTAMP(6)) " DUE_ROWS, queue);
	buf_adds(sql, " <= UTC_TIMESTAMP(6) AND lease_token IS NULL ORDER BY due_at LIMIT 1), 0, 0, 0, ");
	db_sql(db, sql, "(SELECT COUNT(*) " DUE_ROWS " >= " DEPS_NEVER " AND waiting_on > 0) UNION ALL ", queue);
}

/* Appends a row of held counts per queue: a derived table h of the held
 * rows' counts grouped by queue (held_due: how many sort by now; held:
 * all), then per group its queue's place in q (0 for a queue not
 * listed, left out), the columns only a queue's own row fills as NULL,
 * held_due, how many are reserved (reserved_sql) and held.  Grouping by
 * the column and mapping each group by FIELD() evaluates FIELD once a
 * group, not once a row: at 150,000 held rows this part took a third
 * less time. */
static void
held_sql(struct db *db, const struct queue_counts *q, size_t n, const char *held, const char *reserved_sql,
    struct buf *sql)
{
	size_t i;

	buf_adds(sql, "SELECT FIELD(queue");
	for (i = 0; i < n; i++)
		db_sql(db, sql, ", %q", q[i].queue);
	buf_printf(sql, ") AS k, NULL, NULL, NULL, NULL, held_due, %s, held, NULL FROM (%s GROUP BY queue) AS h"
	    " HAVING k > 0", reserved_sql, held);
}

/* Builds the one statement that counts the listed queues: per queue,
 * its rows split at now (status_queue_sql) and an ordered walk to the
 * oldest due row nobody holds; then the held rows only (jobs_lease): how
 * many are reserved, and how many of them sort into each side of now,
 * which status_read subtracts.  One statement, so every part reads one
 * snapshot (the triggers keep jobq_counts in the writers' own
 * transactions, so the snapshot's sum is its row count) at one
 * UTC_TIMESTAMP(6).  Each row names its queue by its 1-based place in q:
 * FIELD and the queue columns compare alike (trailing spaces ignored),
 * so every spelling another program stored finds its queue. */
static void
status_sql(struct db *db, const struct queue_counts *q, size_t n, const enum side *side, struct buf *sql)
{
	size_t i;

	for (i = 0; i < n; i++)
		status_queue_sql(db, (uint64_t)i + 1, q[i].queue, side[i], sql);
	/* The held rows with a lease expiry, read from jobs_lease alone
	 * (sql/025-covering-counts.sql): such a row sorts by its expiry on
	 * jobs_due.  now is a column of a one-row table, so that each row
	 * compares with a value, not a call. */
	held_sql(db, q, n,
	    "SELECT queue, SUM(lease_expires_at <= t.now) AS held_due, COUNT(*) AS held"
	    " FROM jobs FORCE INDEX (jobs_lease) JOIN (SELECT UTC_TIMESTAMP(6) AS now) AS t"
	    " WHERE lease_token IS NOT NULL AND lease_expires_at IS NOT NULL",
	    "held - held_due", sql);
	buf_adds(sql, " UNION ALL ");
	/* A lease token without an expiry is no live lease: such a row is
	 * stale, and sorts by available_at (its due_at) on either side.
	 * Rare: the index tells them apart, and only they are read. */
	held_sql(db, q, n,
	    "SELECT queue, SUM(due_at <= UTC_TIMESTAMP(6)) AS held_due, COUNT(*) AS held"
	    " FROM jobs FORCE INDEX (jobs_lease) WHERE lease_token IS NOT NULL AND lease_expires_at IS NULL",
	    "0", sql);
}

/* a - b, or 0 when b is larger: counts that drifted (TRUNCATE jobs
 * bypasses the triggers, see queue_counts_drift) must not wrap around. */
static uint64_t
less(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

/* Counts the listed queues (status_sides, then status_sql) and turns
 * the parts into the five states. */
static int
status_read(struct db *db, struct queue_counts *q, size_t n, char *err)
{
	uint64_t *held_due, *held, *total, *later, k;
	enum side *side;
	struct db_res *r;
	struct buf sql;
	char **row;
	size_t i;
	int rc;

	if (n == 0)
		return DB_OK;
	side = xcalloc(n, sizeof *side);
	if ((rc = status_sides(db, q, n, side, err)) != DB_OK) {
		free(side);
		return rc;
	}
	buf_init(&sql);
	status_sql(db, q, n, side, &sql);
	free(side);
	r = db_query_buf(db, &sql, &rc, err);
	buf_free(&sql);
	if (r == NULL)
		return rc;
	held_due = xcalloc(n, sizeof *held_due);
	held = xcalloc(n, sizeof *held);
	total = xcalloc(n, sizeof *total);
	later = xcalloc(n, sizeof *later);
	while ((row = db_res_next(r)) != NULL) {
		if ((k = db_col_u64(row[0], 0)) < 1 || k > n)
			fatal("queue_status: a count for queue number '%s' of %zu", row[0], n);
		k--;
		if (row[2] != NULL) {
			total[k] = row[1] != NULL && row[1][0] != '-' ? db_col_u64(row[1], 0) : 0;
			later[k] = db_col_u64(row[2], 0) ? db_col_u64(row[3], 0) : less(total[k], db_col_u64(row[3], 0));
		}
		if (row[4] != NULL)
			q[k].oldest_ready_s = db_col_i64(row[4], -1);
		held_due[k] += db_col_u64(row[5], 0);
		q[k].reserved += db_col_u64(row[6], 0);
		held[k] += db_col_u64(row[7], 0);
		if (row[8] != NULL)
			q[k].waiting = db_col_u64(row[8], 0);
	}
	db_res_free(r);
	/* The rows due by now are all rows but those due later; the held
	 * rows were counted on their side of now.  One snapshot: with counts
	 * that match the table nothing here goes below zero. */
	for (i = 0; i < n; i++) {
		q[i].stale = less(held[i], q[i].reserved);
		q[i].ready = less(less(total[i], later[i]), held_due[i]);
		q[i].delayed = less(less(later[i], less(held[i], held_due[i])), q[i].waiting);
	}
	free(held_due);
	free(held);
	free(total);
	free(later);
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
 * How many rows a queue has comes from jobq_counts, kept by triggers on
 * jobs (sql/010-counts.sql); the split into states is counted by index.
 * That answers the three reasons a counts table was once turned down:
 * - The states depend on the clock (a delayed job becomes ready, a lease
 *   runs out) with no write.  The counter keeps only the number of rows,
 *   which the clock never changes; the states are told apart by counting
 *   the rows on one side of now on jobs_due (the side the server
 *   estimates smaller: usually the delayed and reserved rows, few) and
 *   the held rows on jobs_lease; the rest follows from the total.
 * - Applications enqueue with plain INSERTs (DESIGN 5).  Triggers see
 *   those too, in the application's own transaction (a rollback takes
 *   its count back).  TRUNCATE does bypass them: `jobq check` compares the
 *   counts with the table and --repair-counts corrects them.
 * - Every claim would update one hot counter row.  A claim changes no
 *   row count and the UPDATE trigger writes nothing for it; the enqueues
 *   and outcomes that do write spread over shard rows per connection and
 *   per Galera node, so workers neither queue on one row nor fail each
 *   other's commits at certification.
 * The cost is linear in the smaller side of now and the held rows, not
 * in a backlog on the other side: a queue with 1,000,000 ready jobs and
 * nothing due later is counted in a few index dives.  The price is one
 * counter write per enqueued and per finished job, in the transaction
 * that writes the job. */
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
	/* The dead letter's rows, kept by triggers (sql/026-dead-counts.sql);
	 * a sum below zero (a TRUNCATE failed_jobs: `jobq check` says so)
	 * counts as none. */
	r = db_query(db, &rc, err,
	    "SELECT queue, SUM(failed) FROM jobq_counts WHERE %s GROUP BY queue HAVING SUM(failed) > 0", where.data);
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

/* Compares jobq_counts with a count of every row of jobs and of
 * failed_jobs (one snapshot; it reads a whole index of each, about a
 * second at 1,000,000 jobs) and fills *out with the queues where they
 * differ: the name, which count (dead: failed_jobs'), what the counts
 * say (kept) and what the table holds (rows), the jobs' first.  *n is 0
 * when they agree. */
int
queue_counts_drift(struct db *db, struct counts_drift **out, size_t *n, char *err)
{
	struct db_res *r;
	char **row;
	int rc;

	*out = NULL;
	*n = 0;
	r = db_query(db, &rc, err,
	    "SELECT queue, dead, SUM(kept), SUM(n) FROM ("
	    "SELECT queue, 0 AS dead, 0 AS kept, COUNT(*) AS n FROM jobs GROUP BY queue"
	    " UNION ALL SELECT queue, 0, SUM(jobs), 0 FROM jobq_counts GROUP BY queue"
	    " UNION ALL SELECT queue, 1, 0, COUNT(*) FROM failed_jobs GROUP BY queue"
	    " UNION ALL SELECT queue, 1, SUM(failed), 0 FROM jobq_counts GROUP BY queue) AS diff"
	    " GROUP BY dead, queue HAVING SUM(kept) <> SUM(n) ORDER BY dead, queue");
	if (r == NULL)
		return rc;
	while ((row = db_res_next(r)) != NULL) {
		*out = xrealloc(*out, (*n + 1) * sizeof **out);
		(*out)[*n].queue = xstrdup(row[0] ? row[0] : "");
		(*out)[*n].dead = db_col_u64(row[1], 0) != 0;
		(*out)[*n].kept = db_col_i64(row[2], 0);
		(*out)[*n].rows = db_col_i64(row[3], 0);
		(*n)++;
	}
	db_res_free(r);
	return DB_OK;
}

void
queue_counts_drift_free(struct counts_drift *d, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(d[i].queue);
	free(d);
}

/* Makes jobq_counts agree with the rows of jobs and failed_jobs again,
 * with workers and applications writing all the while: it reruns the
 * statements that set the counts up in `jobq init` (sql/010-counts.sql
 * says why each is exact without a lock), taken from the migrations
 * compiled into jobq, so there is one copy of each.  With nothing to
 * correct they write nothing.  Each is rerun as a whole on a deadlock. */
int
queue_counts_repair(struct db *db, char *err)
{
	static const unsigned versions[] = { 10, 26 };
	struct buf sql;
	size_t i;
	int rc = DB_OK;

	buf_init(&sql);
	for (i = 0; rc == DB_OK && i < ARRAY_LEN(versions); i++) {
		if (schema_statement(versions[i], "INSERT INTO jobq_counts", &sql) < 0)
			fatal("queue_counts_repair: migration %u has no INSERT INTO jobq_counts", versions[i]);
		rc = db_exec_retry(db, &sql, NULL, 0, err);
	}
	buf_free(&sql);
	return rc;
}
