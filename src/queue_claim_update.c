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
 * any of them another worker stamped in between.
 *
 * The attempt is charged as in skip-locked mode: the UPDATE counts it
 * for the first rows read, as many as start at once (claim.charge), and
 * the rest, held reserved ahead, are charged when their handlers start
 * (job.charged), so that a worker killed while it holds them gives them
 * back with nothing counted.  Which rows the UPDATE charged is known
 * from the ids it named and the rows that carry the token (struct
 * charges). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "flow.h"
#include "queue_reserve_int.h"

/* Rounds of one ungated claim: when other workers stamped some of the
 * rows read, the claim reads again for the rest, this many times at
 * most. */
#define CLAIM_ROUNDS 4

/* The ids a claim's UPDATEs name to charge, at most claim.charge of
 * them over its rounds or parts.  A row named here that another worker
 * stamped first carries another token: it is not ours, and charges_keep
 * drops it once the rows read back say so. */
struct charges {
	uint64_t *id;
	size_t n;
};

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
 * queue, charging the first of them while ch holds fewer than cl->charge
 * (and adding those to ch); with readback, then readback_sql.  It must
 * find them by primary key: through an index on due_at (the server's
 * choice on a small table) it would lock-read past the due rows, up to
 * the next entry, which may be the uncommitted row of an application. */
static void
stamp_sql(struct db *db, struct buf *sql, const struct claim *cl, struct db_res *ids, struct charges *ch,
    int readback)
{
	size_t k = cl->charge > ch->n ? cl->charge - ch->n : 0, i = 0, nids = db_res_rows(ids);
	char **row;

	buf_adds(sql,
	    "UPDATE jobs FORCE INDEX (PRIMARY) SET available_at = " FELL_DUE_SET ","
	    " attempts = attempts + (attempts < 4294967295");
	if (k < nids) {
		buf_adds(sql, " AND id IN (0");
		db_res_rewind(ids);
		while (i++ < k && (row = db_res_next(ids)) != NULL)
			buf_printf(sql, ",%llu", (unsigned long long)db_col_u64(row[0], 0));
	}
	db_sql(db, sql,
	    "%s), reserved_at = UTC_TIMESTAMP(6), reserved_by = %q,"
	    " lease_token = %q, lease_expires_at = UTC_TIMESTAMP(6) + INTERVAL %I MICROSECOND"
	    " WHERE queue = %q%s AND due_at <= UTC_TIMESTAMP(6) AND id IN (0",
	    k < nids ? ")" : "", cl->req->worker, cl->token, cl->req->ttl_ms * 1000, cl->queue, cl->only);
	db_res_rewind(ids);
	for (i = 0; (row = db_res_next(ids)) != NULL; i++) {
		uint64_t id = db_col_u64(row[0], 0);

		buf_printf(sql, ",%llu", (unsigned long long)id);
		if (i < k)
			ch->id[ch->n++] = id;
	}
	buf_adds(sql, ");");
	if (readback)
		readback_sql(db, sql, cl);
}

/* Keeps in ch the ids of rows (the rows that carry the claim's token):
 * the ones the claim did stamp, and so charged. */
static void
charges_keep(struct charges *ch, struct db_res *rows)
{
	size_t i, k = 0;
	char **row;

	for (i = 0; i < ch->n; i++) {
		int ours = 0;

		db_res_rewind(rows);
		while (!ours && (row = db_res_next(rows)) != NULL)
			ours = db_col_u64(row[0], 0) == ch->id[i];
		if (ours)
			ch->id[k++] = ch->id[i];
	}
	ch->n = k;
	db_res_rewind(rows);
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
 * and stamps those still due, adding the rows stamped to *claimed and
 * the ones it charges to ch. */
static int
stamp_part(struct db *db, const struct claim *cl, const char *only, unsigned want, uint64_t *claimed,
    struct charges *ch, char *err)
{
	struct claim part = *cl;
	struct db_res *ids = NULL;
	struct buf sql;
	int rc;

	part.only = only;
	if ((rc = read_due(db, &part, want, &ids, err)) != DB_OK || ids == NULL)
		return rc;
	buf_init(&sql);
	stamp_sql(db, &sql, &part, ids, ch, 0);
	db_res_free(ids);
	queue_lost_set_ids(cl, ch->id, ch->n);
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
claim_update_gated(struct db *db, struct claim *cl, uint64_t *claimed, struct charges *ch, char *err)
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
		ch->n = 0;
		rc = flow_gate_open(db, cl->gate, &sql, &cl->limit, err);
		cl->held |= rc == DB_OK && cl->limit < limit;
		if (rc == DB_OK && cl->limit > 0)
			rc = stamp_part(db, cl, cl->only, cl->limit, claimed, ch, err);
		if (rc == DB_OK && cl->rest_only != NULL && limit + cl->rest > *claimed)
			rc = stamp_part(
			    db, cl, cl->rest_only, limit + cl->rest - (unsigned)*claimed, claimed, ch, err);
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
 * read again for the rest while the rows they read were a full batch,
 * charging in a later round what an earlier one could not.
 * *rows: the rows carrying the token, as the last round read them back. */
static int
claim_update_rounds(
    struct db *db, struct claim *cl, uint64_t *claimed, struct charges *ch, struct db_res **rows, char *err)
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
		stamp_sql(db, &sql, cl, ids, ch, 1);
		db_res_free(ids);
		queue_lost_set_ids(cl, ch->id, ch->n);
		if ((rc = db_exec_retry_rows(db, &sql, &stamped, 1, &back, err)) != DB_OK)
			break;
		db_res_free(*rows);
		*rows = back;
		charges_keep(ch, back);
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

/* Takes the rows of r (every row carrying cl's token) as cl's jobs: the
 * ones whose ids ch holds were charged by the claim; the others are
 * charged when they start, and their attempt is the row's count plus
 * one.  The charged ones come first, as the jobs that start at once. */
static void
claim_take(struct claim *cl, struct db_res *r, struct charges *ch)
{
	size_t i, n0 = cl->n, k;
	struct job **held;

	charges_keep(ch, r);
	queue_claim_rows(cl, r, 0);
	held = xcalloc(cl->n - n0 + 1, sizeof *held);
	for (i = k = n0; i < cl->n; i++) {
		struct job *j = cl->jobs[i];
		size_t c = 0;

		while (c < ch->n && ch->id[c] != j->id)
			c++;
		j->charged = c < ch->n;
		if (j->charged) {
			cl->jobs[k++] = j;
			continue;
		}
		j->attempt += j->attempt < ATTEMPTS_MAX;
		held[i - k] = j;
	}
	memcpy(cl->jobs + k, held, (cl->n - k) * sizeof *held);
	free(held);
	cl->charge -= ch->n < cl->charge ? (unsigned)ch->n : cl->charge;
}

/* No SKIP LOCKED: claims with the conditional UPDATE (see the top of
 * this file), then reads back what carries the token. */
int
queue_claim_update(struct db *db, struct claim *cl, char *err)
{
	struct charges ch = { xcalloc(cl->charge + 1, sizeof *ch.id), 0 };
	struct db_res *r = NULL;
	uint64_t claimed;
	int rc;

	queue_claim_drop(cl);
	if (cl->gate != NULL)
		rc = claim_update_gated(db, cl, &claimed, &ch, err);
	else
		rc = claim_update_rounds(db, cl, &claimed, &ch, &r, err);
	/* The claim is committed.  If reading it back fails, the jobs come
	 * back when their lease expires, the charged ones one attempt
	 * used. */
	if (rc == DB_OK && claimed > 0 && r == NULL) {
		struct buf sql;

		buf_init(&sql);
		readback_sql(db, &sql, cl);
		r = db_query_buf(db, &sql, &rc, err);
		buf_free(&sql);
	}
	if (rc == DB_OK && claimed > 0 && r != NULL)
		claim_take(cl, r, &ch);
	queue_lost_settle(cl, rc);
	db_res_free(r);
	free(ch.id);
	return rc;
}
