/* queue_limits.c -- the claims of one queue, under its flow limits.
 *
 * Where flow limits (flow.c) apply, the types with limits of their own
 * are claimed apart from the rest, each under its gate; every claim is
 * made in the worker's mode (queue_claim_skip.c or
 * queue_claim_update.c). */
#include "config.h"

#include "flow.h"
#include "queue_reserve_int.h"

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
		rc = queue_claim_update(db, cl, err);
	else
		rc = queue_claim_skip(db, cl, err);
	if (rc != DB_OK) {
		queue_claim_drop(cl);
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
int
queue_limits_claim(struct db *db, struct claim *cl, struct job **jobs, size_t *n, char *err)
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
