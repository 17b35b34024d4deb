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
 * COALESCE(lease_expires_at, available_at), so a delayed, backing-off or
 * reserved row is simply one whose due_at lies ahead.  Two indexes keep
 * the due rows apart from the rest: jobs_due (queue, due_at, priority)
 * tells which priorities of a queue have due rows (see "which
 * priorities have due jobs" below), and jobs_reserve (queue, priority,
 * due_at) serves the claim, which reads the due rows of those priorities
 * only, in the order it takes them, and stops after LIMIT rows.  No row
 * that is not due is ever read (a backlog costs at most one index dive
 * per priority group), so a claim costs O(batch) rows whatever the table
 * holds, and an idle poll one index dive per queue whatever the number
 * of priorities.
 *
 * Rows written by other programs (plain INSERTs are a documented way to
 * enqueue) may hold any value the schema allows: the claim's arithmetic
 * saturates, every column is read NULL-safe, and job_defect() names what
 * makes a job unfit to run so the worker dead-letters it. */
#include "config.h"

#include <limits.h>
#include <mysqld_error.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "flow.h"
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

/* The attempt counter's ceiling (attempts is INT UNSIGNED). */
#define ATTEMPTS_MAX 4294967295u

/* Reads one claimed row.  Only the columns the schema makes NOT NULL
 * are read as they are; the rest may be NULL in a row another program
 * wrote.  add_attempt: the row holds the attempts before this claim;
 * the count saturates at ATTEMPTS_MAX as the claim's SQL does. */
static struct job *
job_from_row(char **row, const unsigned long *len, int add_attempt)
{
	struct job *j = xcalloc(1, sizeof *j);
	uint64_t attempts = db_col_u64(row[5], 0);

	if (attempts > ATTEMPTS_MAX)
		attempts = ATTEMPTS_MAX;
	j->id = db_col_u64(row[0], 0);
	j->queue = xstrdup_or_empty(row[1]);
	j->type = xstrdup_or_empty(row[2]);
	j->payload = row[3] ? xstrndup(row[3], len[3]) : xstrdup("");
	j->payload_len = row[3] ? len[3] : 0;
	j->priority = (int)db_col_i64(row[4], 0);
	j->attempt = (unsigned)attempts + (add_attempt && attempts < ATTEMPTS_MAX ? 1 : 0);
	j->max_attempts = (unsigned)db_col_u64(row[6], 0);
	j->age_ms = db_col_i64(row[7], 0);
	if (row[8] != NULL && strlen(row[8]) > 11)
		snprintf(j->created_at, sizeof j->created_at, "%.10sT%.15sZ", row[8], row[8] + 11);
	snprintf(j->reserved_at, sizeof j->reserved_at, "%s", row[9] ? row[9] : "");
	return j;
}

/* Why job j, as reserved, cannot be given to a handler: NULL when it
 * can.  Rows written by other programs need not keep what `jobq
 * enqueue` promises handlers (DESIGN.md section 3): a payload that is
 * JSON, an attempt count that can still count.  Such a job is
 * dead-lettered at once, with this reason, rather than run or left to
 * loop. */
const char *
job_defect(const struct job *j, char *why, size_t whylen)
{
	const char *end = NULL;
	cJSON *json;

	if (j->attempt >= ATTEMPTS_MAX) {
		snprintf(why, whylen, "attempts counter at its limit (%u): the row was changed outside jobq",
		    j->attempt);
		return why;
	}
	if (memchr(j->payload, '\0', j->payload_len) != NULL) {
		snprintf(why, whylen, "payload is not valid JSON (it holds a NUL byte)");
		return why;
	}
	json = cJSON_ParseWithLengthOpts(j->payload, j->payload_len, &end, 0);
	if (json != NULL)
		while (end < j->payload + j->payload_len && strchr(" \t\r\n", *end) != NULL)
			end++;
	cJSON_Delete(json);
	if (json == NULL || end != j->payload + j->payload_len) {
		snprintf(why, whylen, "payload is not valid JSON (at byte %zu of %zu)",
		    end != NULL && end >= j->payload ? (size_t)(end - j->payload) : (size_t)0,
		    j->payload_len);
		return why;
	}
	return NULL;
}

struct claim {
	const struct reserve_req *req;
	const char *queue;
	const char *priorities;
	unsigned limit;
	const char *only;             /* SQL: "AND type ..." of a flow-governed claim, or "" */
	const struct flow_gate *gate; /* max_running and rate (flow.c); NULL: none */
	int held;                     /* the gate let fewer jobs be claimed than asked */
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
	    " WHERE queue = %q%s AND priority IN (%s) AND due_at <= UTC_TIMESTAMP(6)"
	    " ORDER BY priority, due_at, id LIMIT %u FOR UPDATE SKIP LOCKED",
	    cl->queue, cl->only, cl->priorities, cl->limit);
}

static void
claim_update_sql(struct db *db, struct buf *sql, const struct claim *cl)
{
	db_sql(db, sql,
	    "UPDATE jobs SET attempts = attempts + (attempts < 4294967295), reserved_at = UTC_TIMESTAMP(6), "
	    "reserved_by = %q,"
	    " lease_token = %q, lease_expires_at = UTC_TIMESTAMP(6) + INTERVAL %I MICROSECOND"
	    " WHERE queue = %q%s AND priority IN (%s) AND due_at <= UTC_TIMESTAMP(6)"
	    " ORDER BY priority, due_at, id LIMIT %u",
	    cl->req->worker, cl->token, cl->req->ttl_ms * 1000, cl->queue, cl->only, cl->priorities,
	    cl->limit);
}

/* Keeps of cl's jobs those that carry its token, when the UPDATE stamped
 * fewer rows than the SELECT locked.  Inside one transaction that cannot
 * happen; it does on Galera when another node's claim aborted ours between
 * the two statements and the node reran the UPDATE on its own, outside
 * the transaction (wsrep_retry_autocommit): the UPDATE's own due_at test
 * then kept it off the rows the other node took, and only what it did
 * stamp is ours.  Rows stamped but not read back return when their lease
 * expires. */
static int
claim_keep_stamped(struct db *db, struct claim *cl, char *err)
{
	struct db_res *r;
	size_t i, k = 0;
	char **row;
	int rc;

	r = db_query(db, &rc, err, "SELECT id FROM jobs WHERE lease_token = %q", cl->token);
	if (r == NULL) {
		claim_drop(cl);
		return rc;
	}
	for (i = 0; i < cl->n; i++) {
		int held = 0;

		db_res_rewind(r);
		while ((row = db_res_next(r)) != NULL)
			held |= db_col_u64(row[0], 0) == cl->jobs[i]->id;
		if (held)
			cl->jobs[k++] = cl->jobs[i];
		else
			job_free(cl->jobs[i]);
	}
	cl->n = k;
	db_res_free(r);
	return DB_OK;
}

/* SKIP LOCKED: lock the first due rows nobody else has locked, stamp
 * them, commit; two round trips.  The UPDATE re-checks that each row is
 * still due (unclaimed), so that a rerun of it alone can never take a
 * job another worker holds, and its row count is checked against the
 * rows locked.  The claim counts only once the COMMIT
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
	if (cl->gate != NULL) {
		unsigned want = cl->limit;

		rc = flow_gate_open(db, cl->gate, &sql, &cl->limit, err);
		cl->held |= rc == DB_OK && cl->limit < want;
		buf_reset(&sql);
		if (rc != DB_OK || cl->limit == 0) {
			db_rollback(db);
			buf_free(&sql);
			return rc;
		}
	}
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
		    "UPDATE jobs SET attempts = attempts + (attempts < 4294967295), reserved_at = "
		    "UTC_TIMESTAMP(6), reserved_by = "
		    "%q,"
		    " lease_token = %q, lease_expires_at = UTC_TIMESTAMP(6) + INTERVAL %I MICROSECOND WHERE "
		    "due_at <= UTC_TIMESTAMP(6) AND id IN (",
		    cl->req->worker, cl->token, cl->req->ttl_ms * 1000);
		for (i = 0; i < cl->n; i++)
			buf_printf(&sql, "%s%llu", i ? "," : "", (unsigned long long)cl->jobs[i]->id);
		buf_adds(&sql, ");");
		if (cl->gate != NULL)
			flow_gate_charge_sql(db, &sql, cl->gate, cl->token);
	}
	buf_adds(&sql, "COMMIT");
	rc = db_exec_buf(db, &sql, err);
	buf_free(&sql);
	if (rc != DB_OK) {
		db_rollback(db);
		claim_drop(cl);
	} else if (cl->n > 0 && db_affected(db) != cl->n)
		rc = claim_keep_stamped(db, cl, err);
	return rc;
}

static int
claim_skip_locked_retry(struct db *db, struct claim *cl, char *err)
{
	unsigned limit = cl->limit;
	int attempt = 0, rc;

	do {
		cl->limit = limit; /* the gate may have lowered it */
		rc = claim_skip_locked(db, cl, err);
	} while (db_retry_after(rc, ++attempt));
	return rc;
}

/* The conditional UPDATE under a flow gate: lock and count, stamp at
 * most what the limits leave, charge the rate, in one transaction that
 * is rerun as a whole on a deadlock. */
static int
claim_update_gated(struct db *db, struct claim *cl, uint64_t *claimed, char *err)
{
	unsigned limit = cl->limit;
	int attempt = 0, rc;
	struct buf sql;

	buf_init(&sql);
	do {
		buf_reset(&sql);
		buf_adds(&sql, "START TRANSACTION;");
		cl->limit = limit;
		*claimed = 0;
		rc = flow_gate_open(db, cl->gate, &sql, &cl->limit, err);
		cl->held |= rc == DB_OK && cl->limit < limit;
		if (rc == DB_OK && cl->limit > 0) {
			buf_reset(&sql);
			claim_update_sql(db, &sql, cl);
			if ((rc = db_exec_buf(db, &sql, err)) == DB_OK)
				*claimed = db_affected(db);
		}
		if (rc == DB_OK && *claimed > 0) {
			buf_reset(&sql);
			flow_gate_charge_sql(db, &sql, cl->gate, cl->token);
			buf_adds(&sql, "COMMIT");
			rc = db_exec_many(db, &sql, NULL, 0, err);
		}
		if (rc != DB_OK || *claimed == 0)
			db_rollback(db);
	} while (db_retry_after(rc, ++attempt));
	buf_free(&sql);
	return rc;
}

/* No SKIP LOCKED: one conditional UPDATE claims the rows by stamping a
 * token nobody else has; then we read back what carries it. */
static int
claim_update(struct db *db, struct claim *cl, char *err)
{
	struct db_res *r;
	struct buf sql;
	uint64_t claimed;
	int rc;

	claim_drop(cl);
	buf_init(&sql);
	if (cl->gate != NULL)
		rc = claim_update_gated(db, cl, &claimed, err);
	else {
		claim_update_sql(db, &sql, cl);
		rc = db_exec_retry(db, &sql, NULL, 0, err);
		claimed = rc == DB_OK ? db_affected(db) : 0;
	}
	buf_free(&sql);
	if (rc != DB_OK || claimed == 0)
		return rc;
	/* The claim is committed.  If reading it back fails, the jobs come
	 * back when their lease expires, one attempt used. */
	r = db_query(db, &rc, err,
	    "SELECT " JOB_COLUMNS "reserved_at FROM jobs WHERE lease_token = %q ORDER BY priority, available_at, id",
	    cl->token);
	if (r == NULL)
		return rc;
	claim_rows(cl, r, 0);
	db_res_free(r);
	return DB_OK;
}

/* ---- which priorities have due jobs ----
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
#define DUE_SLACK 16

/* The due priorities of one queue, ascending. */
struct due {
	int *prio;
	size_t n;
	unsigned rows; /* due index entries the scan returned */
	int lowest;    /* the queue's smallest priority, due or not */
	int bound;     /* the groups up to this one hold enough due rows */
};

static void
due_push(struct due *d, int p)
{
	d->prio = xrealloc(d->prio, (d->n + 1) * sizeof *d->prio);
	d->prio[d->n++] = p;
}

static void
due_free(struct due *d, size_t n)
{
	size_t i;

	for (i = 0; d != NULL && i < n; i++)
		free(d[i].prio);
	free(d);
}

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
static void
due_list(const struct due *d, struct buf *list)
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
static void
due_scan_sql(struct db *db, struct buf *sql, char *const *queues, unsigned scan)
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
static int
due_scan(struct db *db, char *const *queues, unsigned limit, struct due **due, char *err)
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
	due_scan_sql(db, &sql, queues, scan);
	r = db_query_buf(db, &sql, &rc, err);
	buf_free(&sql);
	if (r == NULL) {
		due_free(*due, nq);
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
walk_sql(struct db *db, struct buf *sql, const char *queue, const char *after)
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
static int
walk_groups(struct db *db, const char *queue, int bound, struct due *d, char *err)
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
		walk_sql(db, &sql, queue, *after ? after : NULL);
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
static int
due_needs_walk(const struct due *d, unsigned scan)
{
	return d->rows >= scan && d->n > 0 && d->bound != d->lowest;
}

static int
due_complete(struct db *db, const char *queue, unsigned scan, struct due *d, char *err)
{
	size_t i, k = 0;

	if (d->rows < scan)
		return DB_OK; /* the scan saw every due row */
	if (d->bound != d->lowest)
		return walk_groups(db, queue, d->bound, d, err);
	/* Nothing lies below the bound: the groups up to it are known. */
	for (i = 0; i < d->n; i++)
		if (d->prio[i] <= d->bound)
			d->prio[k++] = d->prio[i];
	d->n = k;
	return DB_OK;
}

/* Sets *left when due jobs of cl's kind remain after a claim that a
 * flow limit cut short (for --stop-when-empty: such a queue is not
 * empty).  A plain read: the rows just claimed are no longer due. */
static int
claim_left_due(struct db *db, const struct claim *cl, int *left, char *err)
{
	struct db_res *r;
	int rc;

	r = db_query(db, &rc, err,
	    "SELECT 1 FROM jobs WHERE queue = %q%s AND priority IN (%s)"
	    " AND due_at <= UTC_TIMESTAMP(6) LIMIT 1",
	    cl->queue, cl->only, cl->priorities);
	if (r == NULL)
		return rc;
	*left = db_res_rows(r) > 0;
	db_res_free(r);
	return DB_OK;
}

/* One claim of cl->queue, up to req->limit jobs in all, appended to
 * jobs[*n..]. */
static int
claim_one(struct db *db, struct claim *cl, struct job **jobs, size_t *n, char *err)
{
	size_t i;
	int rc;

	cl->limit = cl->req->limit - (unsigned)*n;
	random_hex(cl->token, LEASE_TOKEN_LEN / 2);
	if (cl->req->mode == RESERVE_UPDATE)
		rc = claim_update(db, cl, err);
	else
		rc = claim_skip_locked_retry(db, cl, err);
	if (rc != DB_OK) {
		claim_drop(cl);
		return rc;
	}
	for (i = 0; i < cl->n; i++)
		jobs[(*n)++] = cl->jobs[i];
	if (cl->held && cl->n == cl->limit && cl->req->held != NULL && !*cl->req->held)
		rc = claim_left_due(db, cl, cl->req->held, err);
	cl->n = 0;
	cl->held = 0;
	return rc;
}

/* Claims from cl->queue.  Where flow limits (flow.c) apply, each type
 * with a max_running or rate of its own is claimed on its own, under
 * its gate and through jobs_type, and then the queue's other types
 * together, under the queue's max_running if it has one: a limited type
 * at its limit is left where it is and never holds back the rest. */
static int
claim_queue(struct db *db, struct claim *cl, struct job **jobs, size_t *n, char *err)
{
	const struct conf *c = cl->req->flow;
	struct flow_gate gate;
	struct buf only, others;
	size_t i;
	int rc = DB_OK;

	cl->only = "";
	cl->gate = NULL;
	if (c == NULL)
		return claim_one(db, cl, jobs, n, err);
	buf_init(&only);
	buf_init(&others);
	for (i = 0; i < c->nhandlers && rc == DB_OK && *n < cl->req->limit; i++) {
		if (!flow_type_limited(c->handlers[i]))
			continue;
		buf_reset(&only);
		db_sql(db, &only, " AND type = %q", c->handlers[i]->type);
		db_sql(db, &others, "%s%q", others.len ? ", " : " AND type NOT IN (", c->handlers[i]->type);
		flow_gate_for(c, cl->queue, c->handlers[i]->type, &gate);
		cl->only = only.data;
		cl->gate = &gate;
		rc = claim_one(db, cl, jobs, n, err);
	}
	if (others.len)
		buf_addc(&others, ')');
	cl->only = others.len ? others.data : "";
	cl->gate = flow_gate_for(c, cl->queue, NULL, &gate) ? &gate : NULL;
	if (rc == DB_OK && *n < cl->req->limit)
		rc = claim_one(db, cl, jobs, n, err);
	cl->only = "";
	cl->gate = NULL;
	buf_free(&only);
	buf_free(&others);
	return rc;
}

/* Reserves up to req->limit due jobs, draining req->queues in order,
 * then by priority (smaller first), then oldest due first.  Each job's
 * attempt count has grown by one (saturating at the column's maximum)
 * and it carries a fresh lease token.  *jobs is a new array (free each
 * with job_free, then the array). */
int
queue_reserve(struct db *db, const struct reserve_req *req, struct job ***jobs, size_t *n, char *err)
{
	unsigned scan = req->limit + DUE_SLACK;
	struct claim cl;
	struct due *due;
	struct buf prio;
	size_t qi;
	int rc;

	*jobs = xcalloc(req->limit + 1, sizeof **jobs);
	*n = 0;
	if ((rc = due_scan(db, req->queues, req->limit, &due, err)) != DB_OK)
		return rc;
	buf_init(&prio);
	memset(&cl, 0, sizeof cl);
	cl.req = req;
	cl.jobs = xcalloc(req->limit + 1, sizeof *cl.jobs);
	for (qi = 0; req->queues[qi] != NULL && *n < req->limit; qi++) {
		if (due[qi].n == 0)
			continue;
		/* Under flow limits the types are claimed apart: a backlog of a
		 * limited type must not hide the other types' priorities, so
		 * every due priority is walked. */
		if (req->flow != NULL && flow_governed(req->flow, req->queues[qi]) && due[qi].rows >= scan)
			rc = walk_groups(db, req->queues[qi], INT_MAX, &due[qi], err);
		else
			rc = due_complete(db, req->queues[qi], scan, &due[qi], err);
		if (rc != DB_OK)
			break;
		if (due[qi].n == 0)
			continue;
		due_list(&due[qi], &prio);
		cl.queue = req->queues[qi];
		cl.priorities = prio.data;
		if ((rc = claim_queue(db, &cl, *jobs, n, err)) != DB_OK)
			break;
	}
	free(cl.jobs);
	buf_free(&prio);
	due_free(due, strv_len(req->queues));
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
			if (row[0] != NULL && strcmp(row[0], read_counters[i]) == 0)
				*sum += db_col_u64(row[1], 0);
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

/* How explain_one turns EXPLAIN's rows (one per subquery) into steps. */
enum step_kind {
	STEP_EACH,  /* each row a step of its own */
	STEP_DIVES, /* one step, type "dives", rows the number of subqueries */
	STEP_MERGED /* one step, the distinct access types, keys and extras */
};

/* EXPLAINs stmt as kind says; rows for a UNION's result (no table
 * access of its own) are left out. */
static int
explain_one(struct db *db, const char *label, const struct buf *stmt, enum step_kind kind,
    struct explain_report *x, char *err)
{
	struct explain_step *s = NULL;
	struct buf sql;
	struct db_res *r;
	char **row;
	int rc, type, key, rows, extra, table, n = 0;

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
	table = db_res_column(r, "table");
	while ((row = db_res_next(r)) != NULL) {
		if (table >= 0 && row[table] != NULL && strncmp(row[table], "<union", 6) == 0)
			continue;
		if (s == NULL || kind == STEP_EACH) {
			if (x->nsteps == ARRAY_LEN(x->steps))
				break;
			s = &x->steps[x->nsteps++];
			memset(s, 0, sizeof *s);
			snprintf(s->query, sizeof s->query, "%s", label);
		}
		n++;
		if (kind != STEP_EACH) {
			if (kind == STEP_DIVES)
				snprintf(s->type, sizeof s->type, "dives");
			else if (type >= 0 && row[type] != NULL)
				add_distinct(s->type, sizeof s->type, row[type]);
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

/* The scan and walk of queue_reserve for the first served queue with
 * anything due, explained, with the index entries they read. */
static int
explain_due(struct db *db, const struct reserve_req *req, struct due **due, size_t *qi,
    struct explain_report *x, char *err)
{
	unsigned scan = req->limit + DUE_SLACK;
	uint64_t before, after;
	struct buf stmt;
	int rc;

	*due = NULL;
	buf_init(&stmt);
	due_scan_sql(db, &stmt, req->queues, scan);
	if (req->queues[0] != NULL && (rc = explain_one(db, "due scan", &stmt, STEP_MERGED, x, err)) != DB_OK)
		goto out;
	if ((rc = rows_read(db, &before, err)) != DB_OK ||
	    (rc = due_scan(db, req->queues, req->limit, due, err)) != DB_OK)
		goto out;
	for (*qi = 0; req->queues[*qi] != NULL && (*due)[*qi].n == 0; (*qi)++)
		;
	if (req->queues[*qi] != NULL && due_needs_walk(&(*due)[*qi], scan)) {
		x->walked = 1;
		buf_reset(&stmt);
		walk_sql(db, &stmt, req->queues[*qi], NULL);
		if ((rc = explain_one(db, "due groups", &stmt, STEP_DIVES, x, err)) != DB_OK ||
		    (rc = due_complete(db, req->queues[*qi], scan, &(*due)[*qi], err)) != DB_OK)
			goto out;
	}
	if ((rc = rows_read(db, &after, err)) == DB_OK)
		x->due_rows_read = after - before;
out:
	buf_free(&stmt);
	return rc;
}

/* Explains and measures one reservation as a worker would make it for
 * req, changing nothing: the plan of each statement (key, type, Extra)
 * and how many rows the server read to find the due priorities and to
 * claim how many jobs. */
int
queue_explain(struct db *db, const struct reserve_req *req, struct explain_report *x, char *err)
{
	struct buf stmt, prio;
	struct claim cl;
	struct due *due = NULL;
	size_t qi = 0;
	uint64_t read = 0, got = 0;
	int rc;

	memset(x, 0, sizeof *x);
	memset(&cl, 0, sizeof cl);
	buf_init(&stmt);
	buf_init(&prio);
	if ((rc = explain_due(db, req, &due, &qi, x, err)) != DB_OK)
		goto out;
	if (req->queues[qi] == NULL || due[qi].n == 0) {
		x->nothing_due = 1;
		goto out;
	}
	x->due_groups = due[qi].n;
	due_list(&due[qi], &prio);
	cl.req = req;
	cl.limit = req->limit;
	snprintf(cl.token, sizeof cl.token, "%032d", 0);
	cl.only = "";
	cl.queue = req->queues[qi];
	cl.priorities = prio.data;
	snprintf(x->queue, sizeof x->queue, "%s", cl.queue);
	snprintf(x->priorities, sizeof x->priorities, "%s", prio.data);
	if (req->mode == RESERVE_UPDATE)
		claim_update_sql(db, &stmt, &cl);
	else
		claim_select_sql(db, &stmt, &cl);
	if ((rc = explain_one(db, "claim", &stmt, STEP_EACH, x, err)) == DB_OK &&
	    (rc = measure(db, &stmt, req->mode != RESERVE_UPDATE, &read, &got, err)) == DB_OK) {
		x->claim_rows_read = read;
		x->claimed = got;
	}
out:
	due_free(due, strv_len(req->queues));
	buf_free(&stmt);
	buf_free(&prio);
	return rc;
}
