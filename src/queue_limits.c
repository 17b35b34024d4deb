/* queue_limits.c -- the claims of one queue, under its flow limits.
 *
 * Where flow limits (flow.c) apply, the types with limits of their own
 * are claimed apart from the rest, each under its gate; every claim is
 * made in the worker's mode (queue_claim_skip.c or
 * queue_claim_update.c). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flow.h"
#include "queue_reserve_int.h"

/* Appends the query of the first due job of cl's queue and priorities
 * that only (SQL: "AND type ...") lets through, in the order a claim
 * takes them, as the columns cols: the claim's own shape, so the index
 * that serves the claim serves it, one entry read past those it skips. */
static void
head_sql(struct db *db, struct buf *sql, const struct claim *cl, const char *only, const char *cols)
{
	db_sql(db, sql,
	    "SELECT %s FROM jobs WHERE queue = %q%s AND priority IN (%s)"
	    " AND due_at <= UTC_TIMESTAMP(6) ORDER BY priority, due_at, id LIMIT 1",
	    cols, cl->queue, only, cl->priorities);
}

/* Sets *left when due jobs of cl's kind remain after a claim that a
 * flow limit cut short (for --stop-when-empty: such a queue is not
 * empty).  A plain read: the rows just claimed are no longer due. */
static int
claim_left_due(struct db *db, const struct claim *cl, int *left, char *err)
{
	struct db_res *r;
	struct buf sql;
	int rc;

	buf_init(&sql);
	head_sql(db, &sql, cl, cl->only, "1");
	r = db_query_buf(db, &sql, &rc, err);
	buf_free(&sql);
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

/* One of a queue's claims under flow limits: the jobs of one type with
 * a limit of its own (handler: its index in the configuration), or the
 * queue's other types (handler: OTHERS).  due: it has a due job (or
 * was not looked at); prio, at, id: the first one's order keys. */
#define OTHERS ((size_t)-1)

struct group {
	size_t handler;
	int due;
	int64_t prio;
	char at[32];
	uint64_t id;
};

/* Orders groups as a claim orders jobs: priority, then due, then id;
 * groups with nothing due last. */
static int
group_cmp(const void *a, const void *b)
{
	const struct group *x = a, *y = b;
	int c;

	if (x->due != y->due)
		return x->due ? -1 : 1;
	if (x->prio != y->prio)
		return x->prio < y->prio ? -1 : 1;
	if ((c = strcmp(x->at, y->at)) != 0)
		return c;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* The filter ("AND type ...") of group g into *only. */
static void
group_only(struct db *db, const struct conf *c, const struct group *g, const char *others, struct buf *only)
{
	buf_reset(only);
	if (g->handler == OTHERS)
		buf_adds(only, others);
	else
		db_sql(db, only, " AND type = %q", c->handlers[g->handler]->type);
}

/* Appends the read of the first due job of each of the ng groups g, in
 * one round trip: a UNION ALL of head_sql, one part per group, whose
 * first column is the group's index in g. */
static void
groups_order_sql(struct db *db, const struct claim *cl, const char *others, const struct group *g, size_t ng,
    struct buf *sql)
{
	const struct conf *c = cl->req->flow;
	struct buf only, cols;
	size_t i;

	buf_init(&only);
	buf_init(&cols);
	for (i = 0; i < ng; i++) {
		group_only(db, c, &g[i], others, &only);
		buf_reset(&cols);
		buf_printf(&cols, "%zu, priority, due_at, id", i);
		buf_adds(sql, i ? " UNION ALL (" : "(");
		head_sql(db, sql, cl, only.data, cols.data);
		buf_adds(sql, ")");
	}
	buf_free(&only);
	buf_free(&cols);
}

/* Reads the first due job of every group in one round trip and sorts
 * the groups by it, so that the claims follow the queue's order (a
 * smaller priority first, then the oldest due): a limited type with a
 * backlog is claimed before the others only when its jobs come first. */
static int
groups_order(struct db *db, const struct claim *cl, const char *others, struct group *g, size_t ng, char *err)
{
	struct buf sql;
	struct db_res *r;
	char **row;
	int rc;

	buf_init(&sql);
	groups_order_sql(db, cl, others, g, ng, &sql);
	r = db_query_buf(db, &sql, &rc, err);
	buf_free(&sql);
	if (r == NULL)
		return rc;
	while ((row = db_res_next(r)) != NULL) {
		struct group *h = &g[db_col_u64(row[0], 0) % ng];

		h->due = 1;
		h->prio = db_col_i64(row[1], 0);
		snprintf(h->at, sizeof h->at, "%s", row[2] != NULL ? row[2] : "");
		h->id = db_col_u64(row[3], 0);
	}
	db_res_free(r);
	qsort(g, ng, sizeof *g, group_cmp);
	return DB_OK;
}

/* The groups a claim under the flow config c makes, in *ng (each type
 * with a limit of its own, then OTHERS), and in others the filter of the
 * OTHERS group (" AND type NOT IN (...)", empty when no type is
 * limited).  Free the array with free(). */
static struct group *
groups_make(struct db *db, const struct conf *c, struct buf *others, size_t *ng)
{
	struct group *g = xcalloc(c->nhandlers + 1, sizeof *g);
	size_t i;

	*ng = 0;
	for (i = 0; i < c->nhandlers; i++)
		if (flow_type_limited(c->handlers[i])) {
			db_sql(db, others, "%s%q", others->len ? ", " : " AND type NOT IN (",
			    c->handlers[i]->type);
			g[(*ng)++].handler = i;
		}
	if (others->len)
		buf_addc(others, ')');
	g[(*ng)++].handler = OTHERS;
	return g;
}

/* The read that orders a claim's groups under cl->req->flow, into sql
 * (for jobq check --explain); sql is left empty when no type has a limit
 * of its own, as a worker then sends no such read. */
void
queue_limits_order_sql(struct db *db, const struct claim *cl, struct buf *sql)
{
	struct buf others;
	struct group *g;
	size_t ng;

	if (cl->req->flow == NULL)
		return;
	buf_init(&others);
	g = groups_make(db, cl->req->flow, &others, &ng);
	if (ng > 1)
		groups_order_sql(db, cl, others.len ? others.data : "", g, ng, sql);
	free(g);
	buf_free(&others);
}

/* Claims from cl->queue.  Where flow limits (flow.c) apply, each type
 * with a max_running or rate of its own is claimed on its own, under
 * its gate and through jobs_type, and the queue's other types together,
 * under the queue's max_running if it has one: a limited type at its
 * limit is left where it is and never holds back the rest.  The claims
 * go in the order of the first due job of each (groups_order), so a
 * limited type below its limit does not take every free slot ahead of
 * others' smaller priorities or older jobs; a type with nothing due
 * costs no claim. */
int
queue_limits_claim(struct db *db, struct claim *cl, struct job **jobs, size_t *n, char *err)
{
	const struct conf *c = cl->req->flow;
	struct flow_gate gate;
	struct buf only, others;
	const char *rest;
	struct group *g;
	size_t i, ng = 0;
	int rc = DB_OK;

	cl->only = "";
	cl->gate = NULL;
	if (c == NULL)
		return claim_one(db, cl, jobs, n, err);
	buf_init(&only);
	buf_init(&others);
	g = groups_make(db, c, &others, &ng);
	rest = others.len ? others.data : "";
	for (i = 0; i < ng; i++)
		g[i].due = ng == 1;
	if (ng > 1)
		rc = groups_order(db, cl, rest, g, ng, err);
	for (i = 0; i < ng && g[i].due && rc == DB_OK && *n < cl->req->limit; i++) {
		group_only(db, c, &g[i], rest, &only);
		cl->only = only.data;
		cl->gate = flow_gate_for(c, cl->queue,
		               g[i].handler == OTHERS ? NULL : c->handlers[g[i].handler]->type, &gate)
		    ? &gate
		    : NULL;
		rc = claim_one(db, cl, jobs, n, err);
	}
	cl->only = "";
	cl->gate = NULL;
	free(g);
	buf_free(&only);
	buf_free(&others);
	return rc;
}
