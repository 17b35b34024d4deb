/* queue_claim_update.c -- the claim with one conditional UPDATE.
 *
 * The mode of servers without SKIP LOCKED (queue_probe): the UPDATE
 * stamps due rows with a token nobody else has, and the rows that carry
 * it are read back. */
#include "config.h"

#include "flow.h"
#include "queue_reserve_int.h"

/* The claiming UPDATE, built in one place so that `jobq check
 * --explain` examines exactly what workers run. */
void
queue_claim_update_sql(struct db *db, struct buf *sql, const struct claim *cl)
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
			queue_claim_update_sql(db, &sql, cl);
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
int
queue_claim_update(struct db *db, struct claim *cl, char *err)
{
	struct db_res *r;
	struct buf sql;
	uint64_t claimed;
	int rc;

	queue_claim_drop(cl);
	buf_init(&sql);
	/* The single UPDATE charges every row it stamps. */
	queue_lost_set(cl, 0, 1);
	if (cl->gate != NULL)
		rc = claim_update_gated(db, cl, &claimed, err);
	else {
		queue_claim_update_sql(db, &sql, cl);
		rc = db_exec_retry(db, &sql, NULL, 0, err);
		claimed = rc == DB_OK ? db_affected(db) : 0;
	}
	buf_free(&sql);
	if (rc != DB_OK || claimed == 0) {
		queue_lost_settle(cl, rc);
		return rc;
	}
	/* The claim is committed.  If reading it back fails, the jobs come
	 * back when their lease expires, one attempt used.  The index is
	 * forced, as for a hand-off's read (queue_handoff_sql). */
	r = db_query(db, &rc, err,
	    "SELECT " JOB_COLUMNS
	    "reserved_at FROM jobs FORCE INDEX (jobs_lease) WHERE lease_token = %q"
	    " ORDER BY priority, available_at, id",
	    cl->token);
	queue_lost_settle(cl, r == NULL ? rc : DB_OK);
	if (r == NULL)
		return rc;
	queue_claim_rows(cl, r, 0);
	db_res_free(r);
	return DB_OK;
}
