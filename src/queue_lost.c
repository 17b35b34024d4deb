/* queue_lost.c -- a claim whose answer never came.
 *
 * A claim's stamping statement (the UPDATE and COMMIT of SKIP LOCKED, the
 * conditional UPDATE) may be applied by the server while the connection
 * drops before its answer arrives.  Its rows then carry a token nobody
 * holds, with the attempt charged, until their lease expires; with
 * max_attempts = 1 such a job would be dead-lettered without ever
 * running.  So the claim is noted before the statement goes out
 * (queue_lost_set), forgotten when the answer says what happened
 * (queue_lost_settle), and a note that survives a lost connection is
 * acted on once the worker is back (queue_release_lost): the rows that
 * carry the token go back to the queue, due as they were, their charge
 * refunded. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "queue_reserve_int.h"

/* Frees what l holds and empties it. */
void
queue_lost_free(struct claim_lost *l)
{
	free(l->charged);
	memset(l, 0, sizeof *l);
}

/* Notes cl's claim in cl->req->lost (when the caller wants it) before
 * its stamping statement is sent: its token and the ids of the n jobs
 * in charged, the ones it charges (a row of them it did not stamp
 * carries another token, and is not touched).  Called again before each
 * further statement of the same claim, with every id charged so far. */
void
queue_lost_set_ids(const struct claim *cl, const uint64_t *charged, size_t n)
{
	struct claim_lost *l = cl->req->lost;

	if (l == NULL)
		return;
	queue_lost_free(l);
	memcpy(l->token, cl->token, sizeof l->token);
	if (n > 0) {
		l->charged = xcalloc(n, sizeof *l->charged);
		memcpy(l->charged, charged, n * sizeof *l->charged);
	}
	l->ncharged = n;
}

/* queue_lost_set_ids for the first ncharged of cl's jobs. */
void
queue_lost_set(struct claim *cl, size_t ncharged)
{
	uint64_t *ids;
	size_t i;

	if (cl->req->lost == NULL)
		return;
	ids = xcalloc(ncharged + 1, sizeof *ids);
	for (i = 0; i < ncharged; i++)
		ids[i] = cl->jobs[i]->id;
	queue_lost_set_ids(cl, ids, ncharged);
	free(ids);
}

/* Forgets the note unless rc says the answer was lost (DB_EGONE): a
 * claim that answered, or failed with an answer (deadlock, refusal),
 * left nothing behind. */
void
queue_lost_settle(struct claim *cl, int rc)
{
	if (cl->req->lost != NULL && rc != DB_EGONE)
		queue_lost_free(cl->req->lost);
}

/* Gives back the rows of the lost claim l: unreserved, due as they
 * were, the charged ones refunded.  One statement, fenced by the token,
 * so that it acts once however often it is sent.  *released: how many
 * rows it gave back.  l is emptied once the statement went through. */
int
queue_release_lost(struct db *db, struct claim_lost *l, uint64_t *released, char *err)
{
	struct buf sql;
	size_t i;
	int rc;

	*released = 0;
	if (l->token[0] == '\0')
		return DB_OK;
	buf_init(&sql);
	buf_adds(&sql, "UPDATE jobs SET attempts = IF(attempts > 0 AND ");
	if (l->ncharged == 0)
		buf_adds(&sql, "0");
	else {
		buf_adds(&sql, "id IN (");
		for (i = 0; i < l->ncharged; i++)
			buf_printf(&sql, "%s%llu", i ? "," : "", (unsigned long long)l->charged[i]);
		buf_adds(&sql, ")");
	}
	db_sql(db, &sql,
	    ", attempts - 1, attempts), reserved_at = NULL, reserved_by = NULL, lease_token = NULL,"
	    " lease_expires_at = NULL WHERE lease_token = %q",
	    l->token);
	rc = db_exec_buf(db, &sql, err);
	buf_free(&sql);
	if (rc == DB_OK) {
		*released = db_affected(db);
		queue_lost_free(l);
	}
	return rc;
}
