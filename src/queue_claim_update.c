/* queue_claim_update.c -- the claim with a conditional UPDATE.
 *
 * The mode of servers without SKIP LOCKED (queue_probe).  A plain read
 * picks the first due rows as committed, then one conditional UPDATE
 * stamps those of them that are still due with a token nobody else has,
 * and the rows that carry it are read back.
 *
 * Why not one UPDATE ... ORDER BY ... LIMIT n: it locks the rows it
 * scans, and so waits for a row an open transaction holds, such as the
 * job an application inserted in its own transaction (README, "Enqueue
 * from your application") and has not committed yet.  Every claim of
 * the queue then waited for that application, and timed out, for as
 * long as its transaction stayed open.  The read locks nothing and, under
 * READ COMMITTED, sees no uncommitted row; the UPDATE locks only the rows
 * the read named, by primary key, and its own due_at test keeps it off
 * any of them another worker stamped in between. */
#include "config.h"

#include "flow.h"
#include "queue_reserve_int.h"

/* Rounds of one ungated claim: when other workers stamped some of the
 * rows read, the claim reads again for the rest, this many times at
 * most. */
#define CLAIM_ROUNDS 4

/* The claim's read (the statement that scans the reservation index),
 * built in one place so that `jobq check --explain` examines exactly
 * what workers run. */
void
queue_claim_update_sql(struct db *db, struct buf *sql, const struct claim *cl)
{
	db_sql(db, sql,
	    "SELECT id FROM jobs WHERE queue = %q%s AND priority IN (%s) AND due_at <= UTC_TIMESTAMP(6)"
	    " ORDER BY priority, due_at, id LIMIT %u",
	    cl->queue, cl->only, cl->priorities, cl->limit);
}

/* Appends the read of every row carrying cl's token.  Its index is
 * forced, as for a hand-off's read (queue_handoff_sql). */
static void
readback_sql(struct db *db, struct buf *sql, const struct claim *cl)
{
	db_sql(db, sql,
	    "SELECT " JOB_COLUMNS "reserved_at FROM jobs FORCE INDEX (jobs_lease) WHERE lease_token = %q"
	    " ORDER BY priority, available_at, id",
	    cl->token);
}

/* Appends the UPDATE that stamps the rows of ids still due and of cl's
 * queue; with readback, then readback_sql.  It must find them by primary
 * key: through an index on due_at (the server's choice on a small
 * table) it would lock-read past the due rows, up to the next entry,
 * which may be the uncommitted row of an application. */
static void
stamp_sql(struct db *db, struct buf *sql, const struct claim *cl, struct db_res *ids, int readback)
{
	char **row;
	int first = 1;

	db_sql(db, sql,
	    "UPDATE jobs FORCE INDEX (PRIMARY) SET available_at = " FELL_DUE_SET ","
	    " attempts = attempts + (attempts < 4294967295),"
	    " reserved_at = UTC_TIMESTAMP(6), "
	    "reserved_by = %q,"
	    " lease_token = %q, lease_expires_at = UTC_TIMESTAMP(6) + INTERVAL %I MICROSECOND"
	    " WHERE queue = %q%s AND due_at <= UTC_TIMESTAMP(6) AND id IN (",
	    cl->req->worker, cl->token, cl->req->ttl_ms * 1000, cl->queue, cl->only);
	db_res_rewind(ids);
	while ((row = db_res_next(ids)) != NULL) {
		buf_printf(sql, "%s%llu", first ? "" : ",", (unsigned long long)db_col_u64(row[0], 0));
		first = 0;
	}
	buf_adds(sql, ");");
	if (readback)
		readback_sql(db, sql, cl);
}

/* Reads the first want due rows of cl's queue; *ids is NULL (and rc
 * DB_OK) when none is due. */
static int
read_due(struct db *db, const struct claim *cl, unsigned want, struct db_res **ids, char *err)
{
	struct claim c = *cl;
	struct buf sql;
	int rc;

	c.limit = want;
	buf_init(&sql);
	queue_claim_update_sql(db, &sql, &c);
	*ids = db_query_buf(db, &sql, &rc, err);
	buf_free(&sql);
	if (*ids != NULL && db_res_rows(*ids) == 0) {
		db_res_free(*ids);
		*ids = NULL;
	}
	return *ids != NULL ? DB_OK : rc;
}

/* Reads the first want due rows of cl's queue that only lets through
 * and stamps those still due, adding the rows stamped to *claimed. */
static int
stamp_part(
    struct db *db, const struct claim *cl, const char *only, unsigned want, uint64_t *claimed, char *err)
{
	struct claim part = *cl;
	struct db_res *ids = NULL;
	struct buf sql;
	int rc;

	part.only = only;
	if ((rc = read_due(db, &part, want, &ids, err)) != DB_OK || ids == NULL)
		return rc;
	buf_init(&sql);
	stamp_sql(db, &sql, &part, ids, 0);
	db_res_free(ids);
	if ((rc = db_exec_buf(db, &sql, err)) == DB_OK)
		*claimed += db_affected(db);
	buf_free(&sql);
	return rc;
}

/* The claim under a flow gate: lock and count, read and stamp at most
 * what the limits leave, then the second part (cl->rest_only) if any,
 * charge the rate, in one transaction that is rerun as a whole on a
 * deadlock.  The gate's lock keeps the claims of its scope from racing
 * each other, so one round is enough. */
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
		if (rc == DB_OK && cl->limit > 0)
			rc = stamp_part(db, cl, cl->only, cl->limit, claimed, err);
		if (rc == DB_OK && cl->rest_only != NULL && limit + cl->rest > *claimed)
			rc = stamp_part(
			    db, cl, cl->rest_only, limit + cl->rest - (unsigned)*claimed, claimed, err);
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

/* The claim without a gate: read, then stamp and read back in one round
 * trip (the UPDATE commits on its own).  Workers that read the same rows
 * queue on their row locks; the ones that come second stamp fewer, and
 * read again for the rest while the rows they read were a full batch.
 * *rows: the rows carrying the token, as the last round read them back. */
static int
claim_update_rounds(struct db *db, struct claim *cl, uint64_t *claimed, struct db_res **rows, char *err)
{
	struct db_res *ids, *back;
	struct buf sql;
	uint64_t stamped;
	size_t nids;
	int round, rc = DB_OK;

	*claimed = 0;
	*rows = NULL;
	buf_init(&sql);
	for (round = 0; round < CLAIM_ROUNDS && *claimed < cl->limit; round++) {
		if ((rc = read_due(db, cl, cl->limit - (unsigned)*claimed, &ids, err)) != DB_OK || ids == NULL)
			break;
		nids = db_res_rows(ids);
		buf_reset(&sql);
		stamp_sql(db, &sql, cl, ids, 1);
		db_res_free(ids);
		if ((rc = db_exec_retry_rows(db, &sql, &stamped, 1, &back, err)) != DB_OK)
			break;
		db_res_free(*rows);
		*rows = back;
		*claimed += stamped;
		if (stamped == nids || nids < cl->limit - (*claimed - stamped))
			break;
	}
	buf_free(&sql);
	/* A later round's failure leaves the rows stamped before it ours:
	 * they are run, and the error waits for the next poll.  A lost
	 * connection is the exception: those rows go back as a lost claim. */
	if (rc != DB_OK && *rows != NULL && rc != DB_EGONE)
		rc = DB_OK;
	return rc;
}

/* No SKIP LOCKED: claims with the conditional UPDATE (see the top of
 * this file), then reads back what carries the token. */
int
queue_claim_update(struct db *db, struct claim *cl, char *err)
{
	struct db_res *r = NULL;
	uint64_t claimed;
	int rc;

	queue_claim_drop(cl);
	/* The UPDATE charges every row it stamps. */
	queue_lost_set(cl, 0, 1);
	if (cl->gate != NULL)
		rc = claim_update_gated(db, cl, &claimed, err);
	else
		rc = claim_update_rounds(db, cl, &claimed, &r, err);
	if (rc != DB_OK || claimed == 0) {
		db_res_free(r);
		queue_lost_settle(cl, rc);
		return rc;
	}
	/* The claim is committed.  If reading it back fails, the jobs come
	 * back when their lease expires, one attempt used. */
	if (r == NULL) {
		struct buf sql;

		buf_init(&sql);
		readback_sql(db, &sql, cl);
		r = db_query_buf(db, &sql, &rc, err);
		buf_free(&sql);
	}
	queue_lost_settle(cl, r == NULL ? rc : DB_OK);
	if (r == NULL)
		return rc;
	queue_claim_rows(cl, r, 0);
	db_res_free(r);
	return DB_OK;
}
