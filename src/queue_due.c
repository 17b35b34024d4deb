/* queue_due.c -- which priorities of a queue have due jobs.
 *
 * A claim must know the due priorities of a queue in order, and must
 * learn them without reading rows that are not due.  Two indexes serve
 * this, each where it is cheap:
 *  - jobs_due (queue, due_at, priority) holds a queue's due rows first:
 *    one statement reads, for every served queue, at most limit +
 *    DUE_SLACK of them (index entries only).  An idle poll finds none:
 *    one index dive per queue, however many priorities the delayed jobs
 *    use.  A queue with fewer due rows than that is answered completely
 *    by their priorities.
 *  - when the scan was cut short (a backlog), it still gives a bound: if
 *    P is the limit-th smallest priority among the rows it read, the
 *    groups up to P hold at least limit due rows, enough for the claim,
 *    so only the priority groups up to P are walked in jobs_reserve
 *    (queue, priority, due_at), one index dive per group; none when P
 *    is the queue's lowest priority.  (Many delayed priorities below a
 *    backlog still cost a dive each per claim: finding the smallest due
 *    priority needs either that or reading the whole due backlog.) */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "flow.h"
#include "queue_reserve_int.h"

/* Appends priority p to d. */
static void
due_push(struct due *d, int p)
{
	d->prio = xrealloc(d->prio, (d->n + 1) * sizeof *d->prio);
	d->prio[d->n++] = p;
}

/* Frees an array of n entries from queue_due_scan (NULL: nothing). */
void
queue_due_free(struct due *d, size_t n)
{
	size_t i;

	for (i = 0; d != NULL && i < n; i++)
		free(d[i].prio);
	free(d);
}

/* qsort's order of ints, ascending. */
static int
int_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* Sorts d's priorities (one per due row the scan read), sets d->bound
 * to the limit-th smallest of them (the priority groups up to it hold at
 * least limit due rows), and de-duplicates them. */
static void
due_sort(struct due *d, unsigned limit)
{
	size_t i, k = 0;

	if (d->n == 0)
		return;
	if (d->n > 1) /* qsort wants an array */
		qsort(d->prio, d->n, sizeof *d->prio, int_cmp);
	d->bound = d->prio[(limit > 0 && limit < d->n ? limit : d->n) - 1];
	for (i = 0; i < d->n; i++)
		if (k == 0 || d->prio[k - 1] != d->prio[i])
			d->prio[k++] = d->prio[i];
	d->n = k;
}

/* "p1,p2,..." of d into list. */
void
queue_due_list(const struct due *d, struct buf *list)
{
	size_t i;

	buf_reset(list);
	buf_adds(list, "");
	for (i = 0; i < d->n; i++)
		buf_printf(list, "%s%d", i ? "," : "", d->prio[i]);
}

/* The scan: up to scan due entries of each queue, in one statement;
 * each row also carries its queue's lowest priority (MIN over an index
 * prefix: one dive, answered from the index). */
void
queue_due_scan_sql(struct db *db, struct buf *sql, char *const *queues, unsigned scan)
{
	size_t i;

	for (i = 0; queues[i] != NULL; i++) {
		db_sql(db, sql,
		    "%s(SELECT %u AS q, priority, (SELECT MIN(priority) FROM jobs WHERE queue = %q)"
		    " FROM jobs FORCE INDEX (jobs_due) WHERE queue = %q AND due_at <= UTC_TIMESTAMP(6)",
		    i ? " UNION ALL " : "", (unsigned)i, queues[i], queues[i]);
		flow_paused_sql(db, sql, queues[i]); /* a paused queue has nothing due */
		db_sql(db, sql, " ORDER BY due_at LIMIT %u)", scan);
	}
}

/* Runs the scan for a claim of limit jobs; *due is a new array, one
 * entry per queue. */
int
queue_due_scan(struct db *db, char *const *queues, unsigned limit, struct due **due, char *err)
{
	unsigned scan = limit + DUE_SLACK;
	size_t nq = strv_len(queues);
	struct db_res *r;
	struct buf sql;
	char **row;
	int rc;

	*due = xcalloc(nq + 1, sizeof **due);
	if (nq == 0)
		return DB_OK;
	buf_init(&sql);
	queue_due_scan_sql(db, &sql, queues, scan);
	r = db_query_buf(db, &sql, &rc, err);
	buf_free(&sql);
	if (r == NULL) {
		queue_due_free(*due, nq);
		*due = NULL;
		return rc;
	}
	while ((row = db_res_next(r)) != NULL) {
		uint64_t q = db_col_u64(row[0], nq);

		if (q >= nq || row[1] == NULL)
			continue;
		due_push(&(*due)[q], (int)db_col_i64(row[1], 0));
		(*due)[q].rows++;
		(*due)[q].lowest = (int)db_col_i64(row[2], db_col_i64(row[1], 0));
	}
	db_res_free(r);
	for (size_t i = 0; i < nq; i++)
		due_sort(&(*due)[i], limit);
	return DB_OK;
}

/* The walk asks DIVE_DEPTH groups per statement, found with index dives
 * only, whatever the optimizer's statistics say: MIN() over a prefix of
 * jobs_reserve with constant bounds is answered from the index ("Select
 * tables optimized away"), and an uncorrelated scalar subquery is such a
 * constant.  So the k-th priority above `after` is MIN(priority) above
 * the (k-1)-th, nested, and whether that group has anything due is
 * MIN(due_at) of it.  (A correlated subquery or a GROUP BY would be the
 * natural SQL, but the first scans the queue's rows and the second
 * becomes a full index scan when the statistics are stale, as they are
 * after a burst of enqueues.) */
#define DIVE_DEPTH 4

/* The depth-th smallest priority of queue above after (NULL: any),
 * as nested MIN() subqueries. */
static void
min_priority_sql(struct db *db, struct buf *sql, const char *queue, const char *after, int depth)
{
	db_sql(db, sql, "(SELECT MIN(priority) FROM jobs WHERE queue = %q", queue);
	if (depth > 1) {
		buf_adds(sql, " AND priority > ");
		min_priority_sql(db, sql, queue, after, depth - 1);
	} else if (after != NULL)
		buf_printf(sql, " AND priority > %s", after);
	buf_addc(sql, ')');
}

/* One step of the walk: DIVE_DEPTH groups above after (NULL: from
 * the first), each with whether it has anything due. */
void
queue_due_walk_sql(struct db *db, struct buf *sql, const char *queue, const char *after)
{
	int k;

	buf_adds(sql, "SELECT ");
	for (k = 1; k <= DIVE_DEPTH; k++) {
		buf_adds(sql, k > 1 ? ", " : "");
		min_priority_sql(db, sql, queue, after, k);
		db_sql(db, sql, ", (SELECT MIN(due_at) FROM jobs WHERE queue = %q AND priority = ", queue);
		min_priority_sql(db, sql, queue, after, k);
		buf_adds(sql, ") <= UTC_TIMESTAMP(6)");
	}
}

/* Replaces d's priorities by every due priority of queue up to bound,
 * walked in order. */
int
queue_due_walk(struct db *db, const char *queue, int bound, struct due *d, char *err)
{
	char after[16] = "";
	struct buf sql;
	int rc = DB_OK, more = 1;

	d->n = 0;
	buf_init(&sql);
	while (more) {
		struct db_res *r;
		char **row;
		int k;

		more = 0;
		buf_reset(&sql);
		queue_due_walk_sql(db, &sql, queue, *after ? after : NULL);
		if ((r = db_query_buf(db, &sql, &rc, err)) == NULL)
			break;
		row = db_res_next(r);
		for (k = 0; row != NULL && k < DIVE_DEPTH; k++) {
			int p = (int)db_col_i64(row[2 * k], 0);

			if (row[2 * k] == NULL || p > bound)
				break;
			if (db_col_u64(row[2 * k + 1], 0) == 1)
				due_push(d, p);
			if (k == DIVE_DEPTH - 1 && p < bound) {
				snprintf(after, sizeof after, "%d", p);
				more = 1;
			}
		}
		db_res_free(r);
	}
	buf_free(&sql);
	return rc;
}

/* Whether the scan of d stopped short of the queue's due rows and the
 * groups up to its highest priority must be walked. */
int
queue_due_needs_walk(const struct due *d, unsigned scan)
{
	return d->rows >= scan && d->n > 0 && d->bound != d->lowest;
}

/* Makes d's priorities those the claim needs, walking the groups up
 * to the bound when the scan was cut short. */
int
queue_due_complete(struct db *db, const char *queue, unsigned scan, struct due *d, char *err)
{
	size_t i, k = 0;

	if (d->rows < scan)
		return DB_OK; /* the scan saw every due row */
	if (d->bound != d->lowest)
		return queue_due_walk(db, queue, d->bound, d, err);
	/* Nothing lies below the bound: the groups up to it are known. */
	for (i = 0; i < d->n; i++)
		if (d->prio[i] <= d->bound)
			d->prio[k++] = d->prio[i];
	d->n = k;
	return DB_OK;
}
