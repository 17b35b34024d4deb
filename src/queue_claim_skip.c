/* queue_claim_skip.c -- the claim with SELECT ... FOR UPDATE SKIP LOCKED.
 *
 * The mode of every server that knows SKIP LOCKED (queue_probe): lock
 * the first due rows nobody else has locked, stamp them with the
 * claim's token, commit. */
#include "config.h"

#include <string.h>

#include "flow.h"
#include "queue_reserve_int.h"

/* The claim statements, built in one place so that `jobq check
 * --explain` examines exactly what workers run. */
void
queue_claim_skip_sql(struct db *db, struct buf *sql, const struct claim *cl)
{
	db_sql(db, sql,
	    "SELECT " JOB_COLUMNS_UNSTAMPED "UTC_TIMESTAMP(6) FROM jobs"
	    " WHERE queue = %q%s AND priority IN (%s) AND due_at <= UTC_TIMESTAMP(6)"
	    " ORDER BY priority, due_at, id LIMIT %u FOR UPDATE SKIP LOCKED",
	    cl->queue, cl->only, cl->priorities, cl->limit);
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
		queue_claim_drop(cl);
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

/* The UPDATE that stamps the rows claim_skip_locked locked: each still
 * due gets the lease; the first cl->charge of them (the jobs that start
 * at once) are charged their attempt, the rest are charged when they
 * start (job.charged). */
static void
stamp_sql(struct db *db, struct buf *sql, const struct claim *cl)
{
	size_t i, k = cl->charge < cl->n ? cl->charge : cl->n;

	buf_adds(sql, "UPDATE jobs SET available_at = " FELL_DUE_SET ", attempts = attempts + (attempts < 4294967295");
	if (k < cl->n) {
		buf_adds(sql, " AND id IN (");
		for (i = 0; i < k; i++)
			buf_printf(sql, "%s%llu", i ? "," : "", (unsigned long long)cl->jobs[i]->id);
		buf_adds(sql, k == 0 ? "0)" : ")");
	}
	db_sql(db, sql,
	    "), reserved_at = UTC_TIMESTAMP(6), reserved_by = %q, lease_token = %q,"
	    " lease_expires_at = UTC_TIMESTAMP(6) + INTERVAL %I MICROSECOND"
	    " WHERE due_at <= UTC_TIMESTAMP(6) AND id IN (",
	    cl->req->worker, cl->token, cl->req->ttl_ms * 1000);
	for (i = 0; i < cl->n; i++)
		buf_printf(sql, "%s%llu", i ? "," : "", (unsigned long long)cl->jobs[i]->id);
	buf_adds(sql, ");");
}

/* Locks the first limit due rows of cl's queue that only lets through
 * and nobody else has locked, adding them to cl's jobs; the read is
 * appended to sql (which may begin the transaction), sent, and sql
 * emptied. */
static int
lock_part(struct db *db, struct claim *cl, struct buf *sql, const char *only, unsigned limit, char *err)
{
	struct claim part = *cl;
	struct db_res *r;
	int rc;

	part.only = only;
	part.limit = limit;
	queue_claim_skip_sql(db, sql, &part);
	r = db_query_buf(db, sql, &rc, err);
	buf_reset(sql);
	if (r == NULL)
		return rc;
	queue_claim_rows(cl, r, 1);
	db_res_free(r);
	return DB_OK;
}

/* Locks the first want + cl->rest due rows of both of cl's parts in one
 * read (their queue's order shares them out), keeping at most want of
 * the gated type's: more of them than it won come only when other
 * workers held some of the rest, and those stay where they are. */
static int
lock_both(struct db *db, struct claim *cl, struct buf *sql, unsigned want, char *err)
{
	size_t i, k = 0, gated = 0;
	int rc;

	if ((rc = lock_part(db, cl, sql, cl->both_only, want + cl->rest, err)) != DB_OK)
		return rc;
	for (i = 0; i < cl->n; i++) {
		if (strcmp(cl->jobs[i]->type, cl->gate->type) == 0 && gated++ >= want) {
			job_free(cl->jobs[i]);
			continue;
		}
		cl->jobs[k++] = cl->jobs[i];
	}
	cl->n = k;
	return DB_OK;
}

/* Opens cl's gate, if it has one, lowering cl->limit to what it allows
 * (*want: the limit asked); the gate's statements are sent after sql's
 * (the START TRANSACTION), and sql is emptied. */
static int
gate_open(struct db *db, struct claim *cl, unsigned *want, struct buf *sql, char *err)
{
	int rc;

	*want = cl->limit;
	if (cl->gate == NULL)
		return DB_OK;
	rc = flow_gate_open(db, cl->gate, sql, &cl->limit, err);
	cl->held |= rc == DB_OK && cl->limit < *want;
	buf_reset(sql);
	return rc;
}

/* SKIP LOCKED: lock the first due rows nobody else has locked (of both
 * parts in one read, or of the gated part, then of the rest, when the
 * gate cut the first short), stamp them, commit; two round trips, one
 * more for a gate and for a second read.  The UPDATE re-checks that
 * each row is still due (unclaimed), so that a rerun of it alone can
 * never take a job another worker holds, and its row count is checked
 * against the rows locked.  The claim counts only once the COMMIT
 * succeeded (on Galera the COMMIT itself may report a deadlock): any
 * error rolls back and the caller reruns the whole transaction. */
static int
claim_skip_locked(struct db *db, struct claim *cl, char *err)
{
	struct buf sql;
	unsigned want;
	size_t i;
	int rc;

	queue_claim_drop(cl);
	buf_init(&sql);
	buf_adds(&sql, "START TRANSACTION;");
	rc = gate_open(db, cl, &want, &sql, err);
	if (rc == DB_OK && cl->rest_only != NULL && cl->limit == want)
		rc = lock_both(db, cl, &sql, want, err);
	else {
		if (rc == DB_OK && cl->limit > 0)
			rc = lock_part(db, cl, &sql, cl->only, cl->limit, err);
		if (rc == DB_OK && cl->rest_only != NULL && want + cl->rest > cl->n)
			rc = lock_part(db, cl, &sql, cl->rest_only, want + cl->rest - (unsigned)cl->n, err);
	}
	if (rc != DB_OK || (cl->limit == 0 && cl->rest_only == NULL)) {
		db_rollback(db);
		queue_claim_drop(cl);
		buf_free(&sql);
		return rc;
	}
	if (cl->n > 0) {
		stamp_sql(db, &sql, cl);
		if (cl->gate != NULL)
			flow_gate_charge_sql(db, &sql, cl->gate, cl->token);
		queue_lost_set(cl, cl->charge < cl->n ? cl->charge : cl->n);
	}
	buf_adds(&sql, "COMMIT");
	rc = db_exec_buf(db, &sql, err);
	buf_free(&sql);
	if (rc != DB_OK) {
		if (cl->n > 0)
			queue_lost_settle(cl, rc);
		db_rollback(db);
		queue_claim_drop(cl);
		return rc;
	}
	for (i = 0; i < cl->n; i++)
		cl->jobs[i]->charged = i < cl->charge;
	cl->charge -= cl->n < cl->charge ? (unsigned)cl->n : cl->charge;
	if (cl->n > 0 && db_affected(db) != cl->n)
		rc = claim_keep_stamped(db, cl, err);
	if (cl->n > 0 || rc != DB_OK)
		queue_lost_settle(cl, rc);
	return rc;
}

/* Claims as claim_skip_locked does, rerun while it deadlocks. */
int
queue_claim_skip(struct db *db, struct claim *cl, char *err)
{
	unsigned limit = cl->limit;
	int attempt = 0, rc;

	do {
		cl->limit = limit; /* the gate may have lowered it */
		rc = claim_skip_locked(db, cl, err);
	} while (db_retry_after(rc, ++attempt));
	return rc;
}
