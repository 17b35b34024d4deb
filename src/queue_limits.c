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

/* Appends the read of the first limit due jobs of cl's queue and
 * priorities that only (SQL: "AND type ...") lets through, in the order
 * a claim takes them, as the columns cols: the claim's own shape, so
 * the index that serves the claim serves it, one entry read past those
 * it returns. */
static void
head_sql(struct db *db, struct buf *sql, const struct claim *cl, const char *only, const char *cols,
    unsigned limit)
{
	db_sql(db, sql,
	    "SELECT %s FROM jobs WHERE queue = %q%s AND priority IN (%s)"
	    " AND due_at <= UTC_TIMESTAMP(6) ORDER BY priority, due_at, id LIMIT %u",
	    cols, cl->queue, only, cl->priorities, limit);
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
	head_sql(db, &sql, cl, cl->only, "1", 1);
	r = db_query_buf(db, &sql, &rc, err);
	buf_free(&sql);
	if (r == NULL)
		return rc;
	*left = db_res_rows(r) > 0;
	db_res_free(r);
	return DB_OK;
}

/* How many of cl's jobs its gated part took: with a second part
 * (cl->rest_only, the types no gate governs), those of the gate's type. */
static size_t
claim_gated(const struct claim *cl)
{
	size_t i, k = 0;

	if (cl->rest_only == NULL)
		return cl->n;
	for (i = 0; i < cl->n; i++)
		k += strcmp(cl->jobs[i]->type, cl->gate->type) == 0;
	return k;
}

/* One claim of cl->queue, up to want jobs, appended to jobs[*n..];
 * cl->held tells afterwards whether its gate let fewer be claimed. */
static int
claim_one(struct db *db, struct claim *cl, unsigned want, struct job **jobs, size_t *n, char *err)
{
	size_t i;
	int rc;

	cl->limit = want;
	cl->held = 0;
	random_hex(cl->token, LEASE_TOKEN_LEN / 2);
	if (cl->req->mode == RESERVE_UPDATE)
		rc = queue_claim_update(db, cl, err);
	else
		rc = queue_claim_skip(db, cl, err);
	if (rc != DB_OK) {
		queue_claim_drop(cl);
		return rc;
	}
	/* A job it took that is to wait goes back to wait; a failure to put
	 * it back costs the others nothing. */
	if (queue_claim_park(db, cl, cl->req->parked, err) != DB_OK)
		err[0] = '\0';
	for (i = 0; i < cl->n; i++)
		jobs[(*n)++] = cl->jobs[i];
	if (cl->held && claim_gated(cl) == cl->limit && cl->req->held != NULL && !*cl->req->held)
		rc = claim_left_due(db, cl, cl->req->held, err);
	cl->n = 0;
	return rc;
}

/* One of a queue's claims under flow limits: the jobs of one type with
 * a limit of its own (handler: its index in the configuration), or the
 * queue's other types (handler: OTHERS).  rows: its due jobs the order
 * read returned (at most the claim's size), first: the place of the
 * first of them in the queue's order; claimed: it had its turn; more:
 * it took all it was given and may have more due, so slots that others
 * left may go to it. */
#define OTHERS ((size_t)-1)
#define NO_GROUP ((size_t)-1)

struct group {
	size_t handler;
	unsigned rows;
	size_t first;
	int claimed;
	int more;
};

/* A due job of the order read: its group (index) and order keys. */
struct head {
	size_t g;
	int64_t prio;
	char at[32];
	uint64_t id;
};

/* Orders due jobs as a claim takes them: priority, then due, then id. */
static int
head_cmp(const void *a, const void *b)
{
	const struct head *x = a, *y = b;
	int c;

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

/* Appends to *sql the filter (" AND type NOT IN (...)") of the types
 * without a limit of their own under c and of the type of handler skip
 * (OTHERS: none); nothing when every other type is unlimited. */
static void
limited_but(struct db *db, const struct conf *c, size_t skip, struct buf *sql)
{
	size_t i, len = sql->len;

	for (i = 0; i < c->nhandlers; i++)
		if (i != skip && flow_type_limited(c->handlers[i]))
			db_sql(db, sql, "%s%q", sql->len > len ? ", " : " AND type NOT IN (",
			    c->handlers[i]->type);
	if (sql->len > len)
		buf_addc(sql, ')');
}

/* Appends the read of the first limit due jobs of each of the ng groups
 * g, in one round trip: a UNION ALL of head_sql, one part per group,
 * whose first column is the group's index in g.  The parts are merged
 * in C (heads_merge), so the server sorts nothing. */
static void
groups_order_sql(struct db *db, const struct claim *cl, const char *others, const struct group *g, size_t ng,
    unsigned limit, struct buf *sql)
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
		head_sql(db, sql, cl, only.data, cols.data, limit);
		buf_adds(sql, ")");
	}
	buf_free(&only);
	buf_free(&cols);
}

/* Reads the first limit due jobs of every group in one round trip, into
 * *m (*nm of them, in the queue's order: free it with free()), and
 * sets each group's rows and first. */
static int
groups_order(struct db *db, const struct claim *cl, const char *others, struct group *g, size_t ng,
    unsigned limit, struct head **m, size_t *nm, char *err)
{
	struct buf sql;
	struct db_res *r;
	char **row;
	size_t i;
	int rc;

	buf_init(&sql);
	groups_order_sql(db, cl, others, g, ng, limit, &sql);
	r = db_query_buf(db, &sql, &rc, err);
	buf_free(&sql);
	*m = NULL;
	*nm = 0;
	if (r == NULL)
		return rc;
	*m = xcalloc(db_res_rows(r) + 1, sizeof **m);
	while ((row = db_res_next(r)) != NULL) {
		struct head *h = &(*m)[(*nm)++];

		h->g = db_col_u64(row[0], 0) % ng;
		h->prio = db_col_i64(row[1], 0);
		snprintf(h->at, sizeof h->at, "%s", row[2] != NULL ? row[2] : "");
		h->id = db_col_u64(row[3], 0);
	}
	db_res_free(r);
	qsort(*m, *nm, sizeof **m, head_cmp);
	for (i = *nm; i-- > 0;) {
		g[(*m)[i].g].rows++;
		g[(*m)[i].g].first = i;
	}
	return DB_OK;
}

/* The next group to claim from: of those with due jobs that have not had
 * their turn (or, in the second round, that may take more), the types
 * with a limit of their own first, in the order of their first due job,
 * and the queue's other types last: a gate that holds a type back then
 * leaves its slots to the groups claimed after it, and the other types,
 * which no type's gate holds, take what all of them left. */
static size_t
group_next(const struct group *g, size_t ng, int second)
{
	size_t i, best = NO_GROUP;

	for (i = 0; i < ng; i++) {
		if (g[i].rows == 0 || (second ? !g[i].more : g[i].claimed))
			continue;
		if (best == NO_GROUP || (g[best].handler == OTHERS && g[i].handler != OTHERS) ||
		    ((g[best].handler == OTHERS) == (g[i].handler == OTHERS) && g[i].first < g[best].first))
			best = i;
	}
	return best;
}

/* How many of the first left due jobs in the queue's order, of the
 * groups that have not had their turn, are group k's: what it wins
 * against the others by priority and age.  *seen: how many that is in
 * all (fewer than left when fewer are due). */
static unsigned
group_share(const struct head *m, size_t nm, const struct group *g, size_t k, unsigned left, unsigned *seen)
{
	unsigned won = 0;
	size_t i;

	*seen = 0;
	for (i = 0; i < nm && *seen < left; i++)
		if (m[i].g == k || !g[m[i].g].claimed) {
			(*seen)++;
			won += m[i].g == k;
		}
	return won;
}

/* What the claims of one queue under flow limits share: the filter of
 * the other types, the claim's size when the order was read, and the
 * other types' group when no gate governs it (the queue has no
 * max_running), so that it may go with a limited type's claim. */
struct split {
	const char *others;
	unsigned limit;
	struct group *free_others;
};

/* Claims up to want jobs of group h under its gate and, with o, up to
 * rest jobs of the other types (o) in the same transaction, with what
 * h's gate held back; notes whether each may take more (it took all it
 * was given, and more are due). */
static int
group_claim(struct db *db, struct claim *cl, const struct split *sp, struct group *h, struct group *o,
    unsigned want, unsigned rest, struct job **jobs, size_t *n, char *err)
{
	const struct conf *c = cl->req->flow;
	const char *type = h->handler == OTHERS ? NULL : c->handlers[h->handler]->type;
	struct flow_gate gate;
	struct buf only, both;
	size_t before = *n, mine, i;
	int rc;

	buf_init(&only);
	buf_init(&both);
	group_only(db, c, h, sp->others, &only);
	cl->only = only.data;
	cl->gate = flow_gate_for(c, cl->queue, type, &gate) ? &gate : NULL;
	if (o != NULL) {
		limited_but(db, c, h->handler, &both);
		cl->rest_only = sp->others;
		cl->both_only = both.len ? both.data : "";
		cl->rest = rest;
	}
	rc = claim_one(db, cl, want, jobs, n, err);
	mine = *n - before;
	if (o != NULL) {
		size_t theirs;

		for (mine = 0, i = before; i < *n; i++)
			mine += strcmp(jobs[i]->type, type) == 0;
		theirs = *n - before - mine;
		o->more = theirs == want + rest - mine && (o->rows > theirs || o->rows >= sp->limit);
	}
	h->more = !cl->held && mine == want && (h->rows > want || h->rows >= sp->limit);
	cl->only = "";
	cl->gate = NULL;
	cl->rest_only = NULL;
	cl->both_only = NULL;
	cl->rest = 0;
	buf_free(&only);
	buf_free(&both);
	return rc;
}

/* Group k's turn in the first round: it takes what it wins (if
 * anything), and when the other types are the only others among the
 * first due jobs and no gate governs them, they go with it, in one
 * claim. */
static int
group_turn(struct db *db, struct claim *cl, const struct split *sp, struct group *g, size_t k,
    const struct head *m, size_t nm, struct job **jobs, size_t *n, char *err)
{
	unsigned left = cl->req->limit - (unsigned)*n, want, rest = 0, seen;
	struct group *o = sp->free_others;

	want = group_share(m, nm, g, k, left, &seen);
	if (o == &g[k] || o == NULL || o->claimed || o->rows == 0)
		o = NULL;
	else if (want + (rest = group_share(m, nm, g, (size_t)(o - g), left, &seen)) < seen || rest == 0)
		o = NULL, rest = 0; /* other limited types come in between, or none of the others */
	g[k].claimed = 1;
	g[k].more = 1;
	if (want == 0)
		return DB_OK;
	if (o != NULL)
		o->claimed = 1;
	return group_claim(db, cl, sp, &g[k], o, want, rest, jobs, n, err);
}

/* The claims of a queue's ng groups g (ng > 1) in the queue's order:
 * each group takes as many jobs as it wins in the merged order of their
 * due jobs (group_share), so a limited type below its limit takes its
 * share of the slots, not every one of them.  What a gate or another
 * worker left over goes to the groups claimed after it, then, in a
 * second round, to those claimed before it that have more due.  A
 * limited type that wins slots costs a claim (a transaction) of its own;
 * the other types go with it when only they share its slots and no gate
 * governs them (group_turn), so that mixing them costs no more claims
 * than claiming either alone.  The read returns up to the claim's size
 * of rows per group; the other types' part filters the limited types
 * out on an index without the type, so a ready backlog of a limited
 * type ahead of them in the queue's order is read past, entry by entry
 * (as their claim reads past it). */
static int
groups_claim(struct db *db, struct claim *cl, struct group *g, size_t ng, const char *others,
    struct job **jobs, size_t *n, char *err)
{
	struct split sp = { others, cl->req->limit - (unsigned)*n, NULL };
	struct flow_gate gate;
	struct head *m;
	size_t nm, k;
	int rc;

	if (!flow_gate_for(cl->req->flow, cl->queue, NULL, &gate))
		sp.free_others = &g[ng - 1]; /* groups_make puts OTHERS last */
	rc = groups_order(db, cl, others, g, ng, sp.limit, &m, &nm, err);
	while (rc == DB_OK && *n < cl->req->limit && (k = group_next(g, ng, 0)) != NO_GROUP)
		rc = group_turn(db, cl, &sp, g, k, m, nm, jobs, n, err);
	while (rc == DB_OK && *n < cl->req->limit && (k = group_next(g, ng, 1)) != NO_GROUP)
		rc = group_claim(db, cl, &sp, &g[k], NULL, cl->req->limit - (unsigned)*n, 0, jobs, n, err);
	free(m);
	return rc;
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
	limited_but(db, c, OTHERS, others);
	for (i = 0; i < c->nhandlers; i++)
		if (flow_type_limited(c->handlers[i]))
			g[(*ng)++].handler = i;
	g[(*ng)++].handler = OTHERS;
	return g;
}

/* The read that orders a claim's groups under cl->req->flow, for a claim
 * of cl->limit jobs, into sql (for jobq check --explain); sql is left
 * empty when no type has a limit of its own, as a worker then sends no
 * such read. */
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
		groups_order_sql(db, cl, others.len ? others.data : "", g, ng, cl->limit, sql);
	free(g);
	buf_free(&others);
}

/* How many of the groups of a claim of cl->limit jobs under
 * cl->req->flow have due jobs, by the read queue_limits_order_sql shows
 * (for jobq check --explain). */
int
queue_limits_order_groups(struct db *db, const struct claim *cl, uint64_t *groups, char *err)
{
	struct buf others;
	struct group *g;
	struct head *m = NULL;
	size_t i, ng, nm;
	int rc = DB_OK;

	*groups = 0;
	if (cl->req->flow == NULL)
		return DB_OK;
	buf_init(&others);
	g = groups_make(db, cl->req->flow, &others, &ng);
	if (ng > 1 &&
	    (rc = groups_order(db, cl, others.len ? others.data : "", g, ng, cl->limit, &m, &nm, err)) ==
	        DB_OK)
		for (i = 0; i < ng; i++)
			*groups += g[i].rows > 0;
	free(m);
	free(g);
	buf_free(&others);
	return rc;
}

/* Claims from cl->queue.  Where flow limits (flow.c) apply, each type
 * with a max_running or rate of its own is claimed on its own, under
 * its gate and through jobs_type, and the queue's other types together,
 * under the queue's max_running if it has one (or in a limited type's
 * transaction, when the queue has none): a limited type at its
 * limit is left where it is and never holds back the rest.  The slots
 * are shared out in the queue's order (groups_claim), so a limited type
 * below its limit does not take every free slot ahead of others'
 * smaller priorities or older jobs; a type with nothing due costs no
 * claim. */
int
queue_limits_claim(struct db *db, struct claim *cl, struct job **jobs, size_t *n, char *err)
{
	const struct conf *c = cl->req->flow;
	struct buf others;
	struct group *g;
	size_t ng = 0;
	int rc;

	cl->only = "";
	cl->gate = NULL;
	if (c == NULL)
		return claim_one(db, cl, cl->req->limit - (unsigned)*n, jobs, n, err);
	buf_init(&others);
	g = groups_make(db, c, &others, &ng);
	if (ng == 1) {
		struct split sp = { "", 0, NULL };

		rc = group_claim(db, cl, &sp, &g[0], NULL, cl->req->limit - (unsigned)*n, 0, jobs, n, err);
	} else
		rc = groups_claim(db, cl, g, ng, others.data, jobs, n, err);
	free(g);
	buf_free(&others);
	return rc;
}
