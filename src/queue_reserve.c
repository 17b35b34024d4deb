/* queue_reserve.c -- reserve jobs race-free, and explain how.
 *
 * The rules every function here keeps (DESIGN.md section 5):
 *  - every state change of a job is one transaction or one conditional
 *    statement, so a crash at any point leaves the job in exactly one
 *    table, in one state;
 *  - every outcome write and lease extension is conditional on the lease
 *    token the reservation stamped (fencing): a worker that lost its lease
 *    changes nothing and is told so (QUEUE_LOST);
 *  - all times are the database's (UTC_TIMESTAMP(6)); the worker only
 *    sends durations;
 *  - deadlocks and lock wait timeouts rerun the whole transaction.
 *
 * How reservation stays cheap with a large backlog: due_at is
 * COALESCE(lease_expires_at, available_at), and the index (queue,
 * priority, due_at) keeps, within each priority, the due rows ahead of
 * the delayed, backing-off and reserved ones.  A loose index scan first
 * finds which (queue, priority) groups have anything due (one index dive
 * per group); the claim then reads the due rows of those priorities only,
 * in the order it takes them, and stops after LIMIT rows.  Neither ever
 * reads a row that is not due, so the cost is O(batch + groups) whatever
 * the table holds. */
#include "config.h"

#include <mysqld_error.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "queue.h"

#define JOB_COLUMNS                                                                 \
	"id, queue, type, payload, priority, attempts, COALESCE(max_attempts, 0), " \
	"TIMESTAMPDIFF(MICROSECOND, created_at, UTC_TIMESTAMP(6)) DIV 1000, created_at, "

/* Finds out, by trying, whether the server knows SKIP LOCKED. */
int
queue_probe(struct db *db, enum reserve_mode *mode, char *err)
{
	struct db_res *r;
	int rc;

	if ((rc = db_begin(db, err)) != DB_OK)
		return rc;
	r = db_query(db, &rc, err, "SELECT id FROM jobs WHERE id = 0 FOR UPDATE SKIP LOCKED");
	if (r != NULL) {
		db_res_free(r);
		*mode = RESERVE_SKIP_LOCKED;
	} else if (db_errno(db) == ER_PARSE_ERROR || db_errno(db) == ER_NOT_SUPPORTED_YET) {
		*mode = RESERVE_UPDATE;
		rc = DB_OK;
	}
	db_rollback(db);
	return rc;
}

void
job_free(struct job *j)
{
	if (j == NULL)
		return;
	free(j->queue);
	free(j->type);
	free(j->payload);
	free(j);
}

static struct job *
job_from_row(char **row, const unsigned long *len, int add_attempt)
{
	struct job *j = xcalloc(1, sizeof *j);

	j->id = strtoull(row[0], NULL, 10);
	j->queue = xstrdup(row[1]);
	j->type = xstrdup(row[2]);
	j->payload = xstrndup(row[3], len[3]);
	j->payload_len = len[3];
	j->priority = atoi(row[4]);
	j->attempt = (unsigned)strtoul(row[5], NULL, 10) + (add_attempt ? 1 : 0);
	j->max_attempts = (unsigned)strtoul(row[6], NULL, 10);
	j->age_ms = row[7] ? strtoll(row[7], NULL, 10) : 0;
	snprintf(j->created_at, sizeof j->created_at, "%.10sT%.15sZ", row[8], row[8] + 11);
	snprintf(j->reserved_at, sizeof j->reserved_at, "%s", row[9]);
	return j;
}

/* Appends "p1,p2,..." of the due priorities of queue to list; returns
 * how many. */
static int
due_priorities(char **rows_q, const int *rows_p, size_t nrows, const char *queue, struct buf *list)
{
	size_t i;
	int n = 0;

	buf_reset(list);
	for (i = 0; i < nrows; i++)
		if (strcmp(rows_q[i], queue) == 0)
			buf_printf(list, "%s%d", n++ ? "," : "", rows_p[i]);
	return n;
}

struct claim {
	const struct reserve_req *req;
	const char *queue;
	const char *priorities;
	unsigned limit;
	char token[LEASE_TOKEN_LEN + 1];
	struct job **jobs;
	size_t n;
};

static void
claim_drop(struct claim *cl)
{
	size_t i;

	for (i = 0; i < cl->n; i++)
		job_free(cl->jobs[i]);
	cl->n = 0;
}

static int
claim_rows(struct claim *cl, struct db_res *r, int add_attempt)
{
	char **row;

	while ((row = db_res_next(r)) != NULL) {
		struct job *j = job_from_row(row, db_res_lengths(r), add_attempt);

		memcpy(j->token, cl->token, sizeof j->token);
		cl->jobs[cl->n++] = j;
	}
	return DB_OK;
}

/* The claim statements, built in one place so that `jobq check
 * --explain` examines exactly what workers run. */
static void
claim_select_sql(struct db *db, struct buf *sql, const struct claim *cl)
{
	db_sql(db, sql,
	    "SELECT " JOB_COLUMNS "UTC_TIMESTAMP(6) FROM jobs"
	    " WHERE queue = %q AND priority IN (%s) AND due_at <= UTC_TIMESTAMP(6)"
	    " ORDER BY priority, due_at, id LIMIT %u FOR UPDATE SKIP LOCKED",
	    cl->queue, cl->priorities, cl->limit);
}

static void
claim_update_sql(struct db *db, struct buf *sql, const struct claim *cl)
{
	db_sql(db, sql,
	    "UPDATE jobs SET attempts = attempts + 1, reserved_at = UTC_TIMESTAMP(6), reserved_by = %q,"
	    " lease_token = %q, lease_expires_at = UTC_TIMESTAMP(6) + INTERVAL %I MICROSECOND"
	    " WHERE queue = %q AND priority IN (%s) AND due_at <= UTC_TIMESTAMP(6)"
	    " ORDER BY priority, due_at, id LIMIT %u",
	    cl->req->worker, cl->token, cl->req->ttl_ms * 1000, cl->queue, cl->priorities, cl->limit);
}

/* SKIP LOCKED: lock the first due rows nobody else has locked, stamp
 * them, commit; two round trips.  The claim counts only once the COMMIT
 * succeeded (on Galera the COMMIT itself may report a deadlock): any
 * error rolls back and the caller reruns the whole transaction. */
static int
claim_skip_locked(struct db *db, struct claim *cl, char *err)
{
	struct db_res *r;
	struct buf sql;
	size_t i;
	int rc;

	claim_drop(cl);
	buf_init(&sql);
	buf_adds(&sql, "START TRANSACTION;");
	claim_select_sql(db, &sql, cl);
	r = db_query_buf(db, &sql, &rc, err);
	buf_reset(&sql);
	if (r == NULL) {
		db_rollback(db);
		buf_free(&sql);
		return rc;
	}
	claim_rows(cl, r, 1);
	db_res_free(r);
	if (cl->n > 0) {
		db_sql(db, &sql,
		    "UPDATE jobs SET attempts = attempts + 1, reserved_at = UTC_TIMESTAMP(6), reserved_by = "
		    "%q,"
		    " lease_token = %q, lease_expires_at = UTC_TIMESTAMP(6) + INTERVAL %I MICROSECOND WHERE "
		    "id IN (",
		    cl->req->worker, cl->token, cl->req->ttl_ms * 1000);
		for (i = 0; i < cl->n; i++)
			buf_printf(&sql, "%s%llu", i ? "," : "", (unsigned long long)cl->jobs[i]->id);
		buf_adds(&sql, ");");
	}
	buf_adds(&sql, "COMMIT");
	rc = db_exec_buf(db, &sql, err);
	buf_free(&sql);
	if (rc != DB_OK) {
		db_rollback(db);
		claim_drop(cl);
	}
	return rc;
}

static int
claim_skip_locked_retry(struct db *db, struct claim *cl, char *err)
{
	int attempt = 0, rc;

	do
		rc = claim_skip_locked(db, cl, err);
	while (db_retry_after(rc, ++attempt));
	return rc;
}

/* No SKIP LOCKED: one conditional UPDATE claims the rows by stamping a
 * token nobody else has; then we read back what carries it. */
static int
claim_update(struct db *db, struct claim *cl, char *err)
{
	struct db_res *r;
	struct buf sql;
	int rc;

	claim_drop(cl);
	buf_init(&sql);
	claim_update_sql(db, &sql, cl);
	rc = db_exec_retry(db, &sql, NULL, 0, err);
	buf_free(&sql);
	if (rc != DB_OK || db_affected(db) == 0)
		return rc;
	/* The claim is committed.  If reading it back fails, the jobs come
	 * back when their lease expires, one attempt used. */
	r = db_query(db, &rc, err,
	    "SELECT " JOB_COLUMNS "reserved_at FROM jobs WHERE lease_token = %q ORDER BY priority, id",
	    cl->token);
	if (r == NULL)
		return rc;
	claim_rows(cl, r, 0);
	db_res_free(r);
	return DB_OK;
}

struct due {
	char **queue;
	int *priority;
	size_t n;
};

static void
due_free(struct due *d)
{
	size_t i;

	for (i = 0; i < d->n; i++)
		free(d->queue[i]);
	free(d->queue);
	free(d->priority);
}

/* Which (queue, priority) groups of the served queues hold a due job.
 *
 * Found with index dives only, whatever the optimizer's statistics say:
 * MIN() over a prefix of jobs_reserve with constant bounds is answered
 * from the index ("Select tables optimized away"), and an uncorrelated
 * scalar subquery is such a constant.  So the k-th smallest priority of a
 * queue is MIN(priority) above the (k-1)-th, nested, and whether that
 * group has anything due is MIN(due_at) of it.  One statement asks this
 * for DIVE_DEPTH priorities of every queue (a correlated subquery or a
 * GROUP BY would be the natural SQL, but the first scans the queue's rows
 * and the second becomes a full index scan when the statistics are
 * stale, as they are after a burst of enqueues); a queue with more
 * priorities is asked again from its last one. */
#define DIVE_DEPTH 4

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

static void
due_sql(struct db *db, struct buf *sql, char *const *queues, char **after, const int *ask)
{
	size_t i;
	int k, first = 1;

	buf_adds(sql, "SELECT ");
	for (i = 0; queues[i] != NULL; i++) {
		if (!ask[i])
			continue;
		for (k = 1; k <= DIVE_DEPTH; k++) {
			buf_adds(sql, first ? "" : ", ");
			first = 0;
			min_priority_sql(db, sql, queues[i], after[i], k);
			db_sql(db, sql,
			    ", (SELECT MIN(due_at) FROM jobs WHERE queue = %q AND priority = ", queues[i]);
			min_priority_sql(db, sql, queues[i], after[i], k);
			buf_adds(sql, ") <= UTC_TIMESTAMP(6)");
		}
	}
}

static void
due_add(struct due *d, const char *queue, int priority)
{
	d->queue = xrealloc(d->queue, (d->n + 1) * sizeof *d->queue);
	d->priority = xrealloc(d->priority, (d->n + 1) * sizeof *d->priority);
	d->queue[d->n] = xstrdup(queue);
	d->priority[d->n++] = priority;
}

/* Reads one answer of due_sql; ask[i] stays set (and after[i] moves on)
 * for a queue that may have more priorities. */
static void
due_read(struct due *d, char **row, char *const *queues, char **after, int *ask)
{
	size_t i, col = 0;
	int k;

	for (i = 0; queues[i] != NULL; i++) {
		if (!ask[i])
			continue;
		ask[i] = 0;
		for (k = 1; k <= DIVE_DEPTH; k++, col += 2) {
			if (row[col] == NULL)
				continue;
			if (row[col + 1] != NULL && strcmp(row[col + 1], "1") == 0)
				due_add(d, queues[i], atoi(row[col]));
			if (k == DIVE_DEPTH) {
				free(after[i]);
				after[i] = xstrdup(row[col]);
				ask[i] = 1;
			}
		}
	}
}

static int
due_groups(struct db *db, char *const *queues, struct due *d, char *err)
{
	size_t n = strv_len(queues), i;
	char **after = xcalloc(n + 1, sizeof *after);
	int *ask = xcalloc(n + 1, sizeof *ask), rc = DB_OK, more = n > 0;
	struct buf sql;

	memset(d, 0, sizeof *d);
	buf_init(&sql);
	for (i = 0; i < n; i++)
		ask[i] = 1;
	while (more && rc == DB_OK) {
		struct db_res *r;
		char **row;

		buf_reset(&sql);
		due_sql(db, &sql, queues, after, ask);
		if ((r = db_query_buf(db, &sql, &rc, err)) == NULL)
			break;
		if ((row = db_res_next(r)) != NULL)
			due_read(d, row, queues, after, ask);
		db_res_free(r);
		for (more = 0, i = 0; i < n; i++)
			more |= ask[i];
	}
	buf_free(&sql);
	strv_free(after);
	free(ask);
	if (rc != DB_OK)
		due_free(d);
	return rc;
}

/* Reserves up to req->limit due jobs, draining req->queues in order,
 * then by priority (smaller first), then oldest due first.  Each job's
 * attempt count has grown by one and it carries a fresh lease token.
 * *jobs is a new array (free each with job_free, then the array). */
int
queue_reserve(struct db *db, const struct reserve_req *req, struct job ***jobs, size_t *n, char *err)
{
	struct claim cl;
	struct due d;
	struct buf prio;
	size_t qi;
	int rc;

	*jobs = xcalloc(req->limit + 1, sizeof **jobs);
	*n = 0;
	if ((rc = due_groups(db, req->queues, &d, err)) != DB_OK)
		return rc;
	buf_init(&prio);
	memset(&cl, 0, sizeof cl);
	cl.req = req;
	cl.jobs = xcalloc(req->limit + 1, sizeof *cl.jobs);
	for (qi = 0; req->queues[qi] != NULL && *n < req->limit; qi++) {
		size_t i;

		if (due_priorities(d.queue, d.priority, d.n, req->queues[qi], &prio) == 0)
			continue;
		cl.queue = req->queues[qi];
		cl.priorities = prio.data;
		cl.limit = req->limit - (unsigned)*n;
		random_hex(cl.token, LEASE_TOKEN_LEN / 2);
		if (req->mode == RESERVE_UPDATE)
			rc = claim_update(db, &cl, err);
		else
			rc = claim_skip_locked_retry(db, &cl, err);
		if (rc != DB_OK) {
			claim_drop(&cl);
			break;
		}
		for (i = 0; i < cl.n; i++)
			(*jobs)[(*n)++] = cl.jobs[i];
		cl.n = 0;
	}
	free(cl.jobs);
	buf_free(&prio);
	due_free(&d);
	/* Jobs already claimed stay claimed even if a later queue failed:
	 * the caller runs them and reports the error. */
	return *n > 0 ? DB_OK : rc;
}

/* ---- jobq check --explain ---- */

static const char *const read_counters[] = {
	"Handler_read_first",
	"Handler_read_key",
	"Handler_read_last",
	"Handler_read_next",
	"Handler_read_prev",
	"Handler_read_rnd",
	"Handler_read_rnd_next",
};

/* Sum of this session's Handler_read_* counters (SHOW STATUS does not
 * count itself). */
static int
rows_read(struct db *db, uint64_t *sum, char *err)
{
	struct db_res *r;
	char **row;
	size_t i;
	int rc;

	*sum = 0;
	if ((r = db_query(db, &rc, err, "SHOW SESSION STATUS LIKE 'Handler_read%%'")) == NULL)
		return rc;
	while ((row = db_res_next(r)) != NULL)
		for (i = 0; i < ARRAY_LEN(read_counters); i++)
			if (strcmp(row[0], read_counters[i]) == 0)
				*sum += strtoull(row[1], NULL, 10);
	db_res_free(r);
	return DB_OK;
}

static void
add_distinct(char *list, size_t size, const char *item)
{
	size_t n = strlen(list);

	if (*item == '\0' || strstr(list, item) != NULL)
		return;
	snprintf(list + n, size - n, "%s%s", n ? "; " : "", item);
}

/* EXPLAINs stmt.  With summary, its rows (one per subquery) become one
 * step: type "dives", rows the number of subqueries, extra the distinct
 * Extra values; else each row is a step of its own. */
static int
explain_one(struct db *db, const char *label, const struct buf *stmt, int summary, struct explain_report *x,
    char *err)
{
	struct explain_step *s = NULL;
	struct buf sql;
	struct db_res *r;
	char **row;
	int rc, type, key, rows, extra, n = 0;

	buf_init(&sql);
	buf_printf(&sql, "EXPLAIN %s", stmt->data);
	r = db_query_buf(db, &sql, &rc, err);
	buf_free(&sql);
	if (r == NULL)
		return rc;
	type = db_res_column(r, "type");
	key = db_res_column(r, "key");
	rows = db_res_column(r, "rows");
	extra = db_res_column(r, "Extra");
	while ((row = db_res_next(r)) != NULL) {
		if (s == NULL || !summary) {
			if (x->nsteps == ARRAY_LEN(x->steps))
				break;
			s = &x->steps[x->nsteps++];
			memset(s, 0, sizeof *s);
			snprintf(s->query, sizeof s->query, "%s", label);
		}
		n++;
		if (summary) {
			snprintf(s->type, sizeof s->type, "dives");
			snprintf(s->rows, sizeof s->rows, "%d", n);
			if (key >= 0 && row[key] != NULL)
				add_distinct(s->key, sizeof s->key, row[key]);
			if (extra >= 0 && row[extra] != NULL)
				add_distinct(s->extra, sizeof s->extra, row[extra]);
			continue;
		}
		snprintf(s->type, sizeof s->type, "%s", type >= 0 && row[type] ? row[type] : "");
		snprintf(s->key, sizeof s->key, "%s", key >= 0 && row[key] ? row[key] : "");
		snprintf(s->rows, sizeof s->rows, "%s", rows >= 0 && row[rows] ? row[rows] : "");
		snprintf(s->extra, sizeof s->extra, "%s", extra >= 0 && row[extra] ? row[extra] : "");
	}
	db_res_free(r);
	return DB_OK;
}

/* Runs stmt inside a transaction that is rolled back, and counts the
 * rows the server read for it and how many rows it returned or changed. */
static int
measure(struct db *db, const struct buf *stmt, int returns_rows, uint64_t *read, uint64_t *got, char *err)
{
	uint64_t before, after;
	struct db_res *r;
	int rc;

	if ((rc = db_begin(db, err)) != DB_OK)
		return rc;
	if ((rc = rows_read(db, &before, err)) != DB_OK)
		goto out;
	if (returns_rows) {
		if ((r = db_query_buf(db, stmt, &rc, err)) == NULL)
			goto out;
		*got = db_res_rows(r);
		db_res_free(r);
	} else {
		if ((rc = db_exec_buf(db, stmt, err)) != DB_OK)
			goto out;
		*got = db_affected(db);
	}
	if ((rc = rows_read(db, &after, err)) == DB_OK)
		*read = after - before;
out:
	db_rollback(db);
	return rc;
}

/* Explains and measures one reservation as a worker would make it for
 * req, changing nothing: the plan of each statement (key, type, Extra)
 * and how many rows the server read to claim how many jobs. */
int
queue_explain(struct db *db, const struct reserve_req *req, struct explain_report *x, char *err)
{
	struct buf stmt, prio;
	struct claim cl;
	struct due d;
	size_t qi;
	uint64_t read = 0, got = 0;
	int rc;

	memset(x, 0, sizeof *x);
	memset(&cl, 0, sizeof cl);
	buf_init(&stmt);
	buf_init(&prio);
	{
		size_t n = strv_len(req->queues), i;
		char **after = xcalloc(n + 1, sizeof *after);
		int *ask = xcalloc(n + 1, sizeof *ask);
		uint64_t before, after_reads;

		for (i = 0; i < n; i++)
			ask[i] = 1;
		due_sql(db, &stmt, req->queues, after, ask);
		free(after);
		free(ask);
		if ((rc = explain_one(db, "due groups", &stmt, 1, x, err)) != DB_OK ||
		    (rc = rows_read(db, &before, err)) != DB_OK ||
		    (rc = due_groups(db, req->queues, &d, err)) != DB_OK)
			goto out;
		if ((rc = rows_read(db, &after_reads, err)) != DB_OK) {
			due_free(&d);
			goto out;
		}
		x->due_rows_read = after_reads - before;
		x->due_groups = d.n;
	}
	cl.req = req;
	cl.limit = req->limit;
	snprintf(cl.token, sizeof cl.token, "%032d", 0);
	for (qi = 0; req->queues[qi] != NULL; qi++)
		if (due_priorities(d.queue, d.priority, d.n, req->queues[qi], &prio) > 0)
			break;
	if (req->queues[qi] == NULL) {
		x->nothing_due = 1;
		due_free(&d);
		goto out;
	}
	cl.queue = req->queues[qi];
	cl.priorities = prio.data;
	snprintf(x->queue, sizeof x->queue, "%s", cl.queue);
	snprintf(x->priorities, sizeof x->priorities, "%s", prio.data);
	buf_reset(&stmt);
	if (req->mode == RESERVE_UPDATE)
		claim_update_sql(db, &stmt, &cl);
	else
		claim_select_sql(db, &stmt, &cl);
	if ((rc = explain_one(db, "claim", &stmt, 0, x, err)) == DB_OK &&
	    (rc = measure(db, &stmt, req->mode != RESERVE_UPDATE, &read, &got, err)) == DB_OK) {
		x->claim_rows_read = read;
		x->claimed = got;
	}
	due_free(&d);
out:
	buf_free(&stmt);
	buf_free(&prio);
	return rc;
}
