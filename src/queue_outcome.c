/* queue_outcome.c -- write what became of reserved jobs, and extend
 * their leases.  Every statement here is fenced by the lease token the
 * reservation stamped (see queue_reserve.c for the rules): a worker that
 * lost its lease changes nothing and is told so.
 *
 * Sizes.  Every statement sent from here fits the server's
 * max_allowed_packet as read at connect (db_max_packet): past it the
 * server drops the connection, and a worker that resent it would loop
 * forever.  The handler's texts of an outcome are cut to fit (with a
 * marker saying how much), and outcomes are grouped into as few
 * transactions as fit, one round trip each.
 *
 * Refusals.  When the server refuses a group for good (DB_EFAIL), its
 * outcomes are written again one by one, so one bad outcome costs no
 * other its write.  The one it still refuses is written in plainer forms
 * until one is taken -- without the handler's texts, then without its
 * run row -- so that its job still reaches the state the handler earned.
 * A dead-letter whose id failed_jobs already holds (ids restarted after
 * a TRUNCATE jobs) first moves the older row to a new id (clash_sql,
 * queue_outcome_sql.c, where the statements of one outcome are made). */
#include "config.h"

#include <mysqld_error.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "capture.h"
#include "final.h"
#include "groups.h"
#include "queue.h"
#include "queue_follow.h"
#include "queue_outcome_int.h"
#include "queue_packet.h"
#include "utf8.h"

/* The most bytes a MEDIUMTEXT column holds. */
#define MEDIUMTEXT_MAX 16777215u
#define TX_BEGIN "START TRANSACTION;"
#define TX_END "COMMIT"
/* The largest payload the run that finishes a job as done keeps (sql/013):
 * what `jobq show` shows of a done job, bounded so that a big payload
 * never squeezes the handler's texts out of the statement. */
#define RUN_PAYLOAD_MAX 65536

/* Outcomes sent as one transaction in one round trip. */
struct group {
	struct buf sql;
	size_t nstmt;
	struct member *m;
	size_t n;
	int alone;
	uint64_t *affected; /* after group_run */
	/* Jobs whose handlers started uncharged, charged by this
	 * transaction (its first statements); marked once it committed. */
	struct job *const *charge;
	size_t ncharge;
	size_t tally; /* the bytes its groups' tallies will take (group_tally) */
	/* Its plain outcomes, bundled by group (queue_bundle.c), sent
	 * after the other outcomes. */
	struct bundle *b;
	size_t nb;
};

/* ---- fitting ---- */

static void
values_free(struct values *v)
{
	size_t i;

	for (i = 0; i < NTEXTS; i++)
		free(v->owned[i]);
	for (i = 0; i < ARRAY_LEN(v->clipped); i++)
		free(v->clipped[i]);
}

/* s cut to at most max bytes, on a character boundary (for VARCHAR
 * columns, whose limit counts characters: bytes are never fewer). */
static const char *
clip(const char *s, size_t max, char **owned)
{
	if (s == NULL || strlen(s) <= max)
		return s;
	*owned = xstrndup(s, utf8_valid_prefix(s, max));
	return *owned;
}

/* The values of o in form f; note (or, when NULL, a note for a minimal
 * outcome) replaces the texts in the plain forms. */
static void
values_of(const struct outcome *o, enum form f, const char *note, struct values *v)
{
	size_t i;

	memset(v, 0, sizeof *v);
	v->text[T_LAST_ERROR] = o->kind == OUT_RETRY ? o->last_error : NULL;
	v->text[T_EXCEPTION] = o->kind == OUT_DEAD ? o->exception : NULL;
	v->with_run = o->run != NULL && f != FORM_NORUN && f != FORM_BARE;
	v->text[T_OUTPUT] = v->with_run ? o->run->output : NULL;
	v->text[T_ERROR] = v->with_run ? o->run->error : NULL;
	v->exit_status = o->exit_status;
	v->reason = o->reason;
	v->run_exit = o->run != NULL ? o->run->exit_status : NULL;
	if (f == FORM_FULL && v->with_run && (o->kind == OUT_DONE || o->kind >= OUT_CANCEL) &&
	    o->job->payload != NULL &&
	    o->job->payload_len <= RUN_PAYLOAD_MAX)
		v->payload = o->job->payload;
	if (f == FORM_FULL || f == FORM_NORUN)
		return;
	if (note == NULL)
		note =
		    "(not stored: writing this outcome with the handler's output kept losing the connection)";
	for (i = 0; i < NTEXTS; i++)
		if (v->text[i] != NULL)
			v->text[i] = i == T_OUTPUT ? NULL : note;
	/* The short columns too may be what the server objects to. */
	v->exit_status = clip(v->exit_status, 64, &v->clipped[0]);
	v->reason = clip(v->reason, 255, &v->clipped[1]);
	v->run_exit = clip(v->run_exit, 64, &v->clipped[2]);
}

/* Caps for n texts that cost cost[] and share avail bytes: a text that
 * costs no more than an equal share keeps all of it; the others split
 * what is left equally. */
static void
share(const size_t *cost, size_t n, size_t avail, size_t *cap)
{
	int capped[NTEXTS] = { 0 }, changed = 1;
	size_t i, left = n;

	while (changed && left > 0) {
		changed = 0;
		for (i = 0; i < n; i++)
			if (!capped[i] && cost[i] <= avail / left) {
				cap[i] = cost[i];
				avail -= cost[i];
				capped[i] = 1;
				left--;
				changed = 1;
				break;
			}
	}
	for (i = 0; i < n; i++)
		if (!capped[i])
			cap[i] = avail / left;
}

/* What o's statements take beyond OUTCOME_FIXED_MAX and the handler's
 * texts, at most: its follow-up jobs, its result and the payload a done
 * run keeps, escaped. */
static size_t
extra_cost(const struct outcome *o)
{
	size_t i, n = o->run != NULL && o->run->result != NULL ? 2 * strlen(o->run->result) : 0;

	if (o->checkpoint != NULL)
		n += 2 * strlen(o->checkpoint);

	if ((o->kind == OUT_DONE || o->kind >= OUT_CANCEL) && o->job->payload_len <= RUN_PAYLOAD_MAX)
		n += 2 * o->job->payload_len;

	for (i = 0; o->kind == OUT_DONE && i < o->nfollow; i++)
		n += 2 * (o->follow[i].payload_len + strlen(o->follow[i].type) + strlen(o->follow[i].queue)) +
		    (o->follow[i].group != NULL ? 4096 : 512);
	return n;
}

/* Cuts the texts of v so that the statements of o fit in budget bytes
 * and each text fits its MEDIUMTEXT column. */
static void
fit(struct db *db, const struct outcome *o, struct values *v, int clash, size_t budget)
{
	struct values bare = *v;
	struct buf probe;
	struct member m;
	size_t cost[NTEXTS], cap[NTEXTS], idx[NTEXTS], n = 0, i, fixed, total;
	int columns_ok;

	for (i = 0; i < NTEXTS; i++)
		if (v->text[i] != NULL) {
			bare.text[i] = "";
			cost[n] = db_quoted_len(v->text[i], strlen(v->text[i]));
			idx[n++] = i;
		}
	/* The common case, far from every limit, needs no measuring. */
	for (i = 0, total = OUTCOME_FIXED_MAX + extra_cost(o), columns_ok = 1; i < n; i++) {
		total += cost[i];
		columns_ok &= cost[i] <= MEDIUMTEXT_MAX;
	}
	if (columns_ok && total <= budget)
		return;
	buf_init(&probe);
	piece_sql(db, &probe, o, &bare, clash, 0, &m);
	fixed = probe.len;
	buf_free(&probe);
	share(cost, n, budget > fixed ? budget - fixed : 0, cap);
	for (i = 0; i < n; i++) {
		const char *t = v->text[idx[i]];
		const char *why = "to fit max_allowed_packet";

		if (cap[i] > MEDIUMTEXT_MAX)
			cap[i] = MEDIUMTEXT_MAX, why = "to fit the column";
		if (cost[i] <= cap[i])
			continue;
		free(v->owned[idx[i]]);
		v->owned[idx[i]] = utf8_shorten(t, strlen(t), cap[i], db_quoted_len, why);
		v->text[idx[i]] = v->owned[idx[i]];
		v->cut = 1;
	}
}

/* The most bytes the outcomes of one transaction may take: what the
 * server takes, less the transaction's own statements and slack. */
static size_t
budget_of(const struct db *db)
{
	size_t max = db_max_packet(db), over = PACKET_SLACK + strlen(TX_BEGIN) + strlen(TX_END);

	if (max == 0)
		max = 1024 * 1024; /* never connected: the statement will not be sent anyway */
	return max > over ? max - over : 0;
}

/* ---- groups ---- */

static void
group_init(struct group *g)
{
	memset(g, 0, sizeof *g);
	buf_init(&g->sql);
	buf_adds(&g->sql, TX_BEGIN);
	g->nstmt = 1;
}

static void
group_free(struct group *g)
{
	buf_free(&g->sql);
	bundles_free(g->b, g->nb);
	free(g->m);
	free(g->affected);
	memset(g, 0, sizeof *g);
}

/* One outcome's statements, built before its group is chosen. */
struct piece {
	struct buf sql; /* a plain outcome's: its branch of the bundle's INSERT */
	struct buf del; /* a plain outcome's: its term of the bundle's DELETE */
	size_t nstmt;
	struct member m; /* counted from the piece's first statement */
	uint64_t own;    /* a plain outcome's job, if it waited for other jobs; else 0 */
};

/* Builds the statements of o[k] in form f, fitted to budget; note
 * stands in for the texts of the plain forms. */
static void
piece_build(struct db *db, struct outcome *o, size_t k, enum form f, int clash, const char *note,
    size_t budget, struct piece *p)
{
	struct values v;

	values_of(&o[k], f, note, &v);
	/* A job of a group leaves room for its group's tally. */
	fit(db, &o[k], &v, clash,
	    o[k].job->group_id == 0 ? budget : budget > GROUPS_TALLY_MAX ? budget - GROUPS_TALLY_MAX : 0);
	o[k].cut = v.cut;
	buf_init(&p->sql);
	buf_init(&p->del);
	memset(&p->m, 0, sizeof p->m);
	p->m.out = k;
	p->m.bundle = piece_plain(&o[k], &v, clash); /* which bundle: group_add */
	p->own = 0;
	if (p->m.bundle) {
		bundle_add_sql(db, &p->sql, &p->del, &o[k], &v);
		p->m.group_id = o[k].job->group_id;
		p->own = o[k].job->waited ? o[k].job->id : 0;
		p->nstmt = 0;
	} else {
		p->nstmt = piece_sql(db, &p->sql, &o[k], &v, clash, 0, &p->m);
	}
	values_free(&v);
}

/* Whether no member of g tallies group gid yet. */
static int
tally_new(const struct group *g, uint64_t gid)
{
	size_t i;

	for (i = 0; i < g->n && g->m[i].group_id != gid; i++)
		;
	return gid != 0 && i == g->n;
}

/* The bytes g would send, beyond TX_BEGIN and TX_END, with p in it. */
static size_t
group_len_with(const struct group *g, const struct piece *p)
{
	size_t n = g->sql.len - strlen(TX_BEGIN) + g->tally + bundles_len(g->b, g->nb);

	if (tally_new(g, p->m.group_id))
		n += GROUPS_TALLY_MAX;
	return n + (p->m.bundle ? bundle_len_one(p->sql.len + p->del.len) : p->sql.len);
}

/* Moves p into g: a plain outcome's parts into its group's bundle, any other's
 * statements after those g holds, its results' places counted on. */
static void
group_add(struct group *g, struct piece *p, int alone)
{
	struct member *m;

	if (tally_new(g, p->m.group_id))
		g->tally += GROUPS_TALLY_MAX;
	g->m = xrealloc(g->m, (g->n + 1) * sizeof *g->m);
	m = &g->m[g->n++];
	*m = p->m;
	g->alone |= alone;
	if (m->bundle) {
		m->bundle = bundle_join(&g->b, &g->nb, m->group_id, &p->sql, &p->del, p->own);
	} else {
		m->fence += g->nstmt;
		if (m->renumber > 0) /* 0 is "none": the move is never a piece's first statement */
			m->renumber += g->nstmt;
		if (m->handoff > 0) /* the same */
			m->handoff += g->nstmt;
		buf_add(&g->sql, p->sql.data, p->sql.len);
		g->nstmt += p->nstmt;
	}
	buf_free(&p->sql);
	buf_free(&p->del);
}

/* Puts the charges of the n jobs in charge at the head of g, which must
 * hold nothing else yet: each job's attempt is counted, fenced by its
 * lease (a job no longer ours is not touched), by setting the count to
 * the attempt's number: sent again after a lost answer, it changes
 * nothing. */
static void
group_charge(struct db *db, struct group *g, struct job *const *charge, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		db_sql(db, &g->sql,
		    "UPDATE jobs SET attempts = %u WHERE id = %U AND lease_token = %q;", charge[i]->attempt,
		    charge[i]->id, charge[i]->token);
	g->nstmt += n;
	g->charge = charge;
	g->ncharge = n;
}

static int
gid_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* Appends g's bundles, then the statements that write the counts of
 * the groups g's outcomes tallied (their own statements' and their
 * bundles'), one set per group, in the order of their ids (two
 * transactions lock group rows in one order), and puts the statement
 * that zeroes the tallies first, right after TX_BEGIN, moving the
 * members' statement numbers on by one. */
static void
group_tally(struct db *db, struct group *g)
{
	uint64_t *gid = xcalloc(g->n + 1, sizeof *gid);
	size_t n = 0, i, k;
	struct buf sql;

	for (i = 0; i < g->n; i++) {
		for (k = 0; k < n && gid[k] != g->m[i].group_id; k++)
			;
		if (g->m[i].group_id != 0 && k == n)
			gid[n++] = g->m[i].group_id;
	}
	if (n > 0) {
		qsort(gid, n, sizeof *gid, gid_cmp);
		buf_init(&sql);
		buf_adds(&sql, TX_BEGIN);
		groups_tally_reset_sql(db, &sql, gid, n);
		buf_add(&sql, g->sql.data + strlen(TX_BEGIN), g->sql.len - strlen(TX_BEGIN));
		buf_free(&g->sql);
		g->sql = sql;
		g->nstmt++;
		for (i = 0; i < g->n; i++) {
			g->m[i].fence++;
			g->m[i].renumber += g->m[i].renumber > 0;
			g->m[i].handoff += g->m[i].handoff > 0;
		}
	}
	g->nstmt += bundles_sql(&g->sql, g->b, g->nb, g->nstmt);
	if (n > 0) {
		for (i = 0; i < n; i++)
			g->nstmt += groups_tally_sql(db, &g->sql, gid[i]);
	}
	free(gid);
}

/* Keeps in h the jobs its hand-off's read returned.  Every read of one
 * queue_write returns all its hand-offs so far (they share the token):
 * the newest replaces those before. */
static void
handoff_keep(struct handoff *h, struct db_res *rows)
{
	size_t i;

	for (i = 0; i < h->njobs; i++)
		job_free(h->jobs[i]);
	free(h->jobs);
	queue_handoff_rows(rows, h->token, &h->jobs, &h->njobs);
	db_res_free(rows);
}

/* Reads back into h the jobs whose lease carries h's token, outside any
 * write: those an earlier write handed off when its answer never came
 * (it may have been applied).  Reserved for this worker, they would
 * otherwise wait, charged an attempt, until their lease expired.  The
 * caller kept the token for this, and drops the jobs it took before. */
int
queue_handoff_read(struct db *db, struct handoff *h, char *err)
{
	struct db_res *rows;
	struct buf sql;
	int rc;

	buf_init(&sql);
	queue_handoff_sql(db, &sql, h->token);
	rows = db_query_buf(db, &sql, &rc, err);
	buf_free(&sql);
	if (rows != NULL)
		handoff_keep(h, rows);
	return rows != NULL ? DB_OK : rc;
}

/* The outcome of g whose transaction cannot be one round trip (alone in
 * g: outcomes_send): its follow-ups wait for jobs, or its end cancels
 * the jobs that wait for it (piece_cascades); else NULL. */
static struct outcome *
group_open(const struct group *g, struct outcome *o)
{
	struct outcome *x = g->n == 1 && !g->m[0].bundle ? &o[g->m[0].out] : NULL;

	return x != NULL && (follow_waits(x) || piece_cascades(x)) ? x : NULL;
}

/* Sends g, whose one outcome x is group_open's, as a transaction of
 * several round trips: x's follow-ups that wait for jobs first
 * (follow_begin, which opens it: g's START TRANSACTION is sent as a
 * statement that does nothing, so that the others keep their numbers),
 * then g's statements, then, when x's fence held and its end cancelled
 * the jobs that waited for it, their end and that of theirs down the
 * graph (final_cascade, counted in x->cascaded), then COMMIT when x's
 * fence held or its lease was already lost; rerun whole on a deadlock
 * (as db_exec_retry_rows reruns).  *rebuild: rolled back, x is to be
 * built again in full (its job gained a waiter since the claim). */
static int
group_exec_open(struct db *db, struct group *g, struct outcome *x, struct db_res **rows, int *rebuild,
    char *err)
{
	int64_t start = mono_ms(), limit = db_wait_limit(db);
	int follow = follow_waits(x), cascade = piece_cascades(x);
	char id[24];
	struct buf sql;
	int rc, lost, attempt = 0;

	snprintf(id, sizeof id, "%llu", (unsigned long long)x->job->id);
	buf_init(&sql);
	buf_adds(&sql, "DO 0;");
	buf_add(&sql, g->sql.data + strlen(TX_BEGIN), g->sql.len - strlen(TX_BEGIN));
	*rebuild = 0;
	do {
		x->cascaded[0] = x->cascaded[1] = 0;
		if ((rc = follow ? follow_begin(db, x, err) : db_begin(db, err)) == FOLLOW_REBUILD) {
			*rebuild = 1;
			rc = DB_OK;
			break;
		}
		lost = rc == FOLLOW_LOST;
		if (lost || rc == DB_OK)
			rc = db_exec_many_rows(db, &sql, g->affected, g->nstmt, rows, err);
		if (rc == DB_OK && follow && !lost && g->affected[g->m[0].fence] == 0)
			*rebuild = 1; /* cannot be, with the row locked: never commit follow-ups without it */
		else if (rc == DB_OK && cascade && g->affected[g->m[0].fence] > 0)
			rc = final_cascade(db, x->worker != NULL ? x->worker : "a worker", 0, id, x->cascaded, err);
		if (!*rebuild && rc == DB_OK && (rc = db_commit(db, err)) == DB_OK)
			break;
		db_rollback(db);
		if (rows != NULL) {
			db_res_free(*rows);
			*rows = NULL;
		}
		/* Under a wait limit, as db_exec_retry_rows: not rerun after a
		 * long wait; the caller tries again later. */
		if (*rebuild || (limit > 0 && mono_ms() - start >= limit / 2))
			break;
	} while (db_retry_after(rc, ++attempt));
	if (rc != DB_OK)
		x->cascaded[0] = x->cascaded[1] = 0;
	buf_free(&sql);
	return rc;
}

/* Sends g as one transaction (rerun on deadlock).  On success each
 * member's state says whether its lease still held, or, for a lean one
 * whose fence failed (its job gained a waiter, or the lease is lost: the
 * rewrite tells), is OUTS_PENDING again with gained_waiter set, to be
 * written in full (bundled ones: bundle_settle); on a retryable error
 * each is OUTS_FAILED; on DB_EFAIL nothing is marked.  When an outcome of g may hand a job
 * off, the transaction reads the hand-offs back before its COMMIT
 * (handoff_keep). */
static int
group_run(struct db *db, struct group *g, struct outcome *o, char *err)
{
	struct outcome *waits = group_open(g, o);
	struct handoff *h = NULL;
	struct db_res *rows = NULL;
	size_t i;
	int rc, rebuild = 0;

	group_tally(db, g);
	for (i = 0; i < g->n; i++)
		if (g->m[i].handoff > 0)
			h = o[g->m[i].out].handoff;
	if (h != NULL) {
		queue_handoff_sql(db, &g->sql, h->token);
		g->nstmt++;
	}
	g->affected = xcalloc(g->nstmt + 1, sizeof *g->affected);
	if (waits != NULL) {
		rc = group_exec_open(db, g, waits, h != NULL ? &rows : NULL, &rebuild, err);
	} else {
		buf_adds(&g->sql, TX_END);
		g->nstmt++;
		rc = db_exec_retry_rows(db, &g->sql, g->affected, g->nstmt, h != NULL ? &rows : NULL, err);
	}
	if (rows != NULL)
		handoff_keep(h, rows);
	if (rebuild) {
		waits->state = OUTS_PENDING;
		waits->gained_waiter = 1;
		return rc;
	}
	for (i = 0; rc == DB_OK && i < g->ncharge; i++)
		g->charge[i]->charged = 1;
	for (i = 0; i < g->n; i++) {
		struct outcome *x = &o[g->m[i].out];

		if (g->m[i].bundle)
			continue;
		if (rc == DB_OK && g->affected[g->m[i].fence] == 0 && g->m[i].lean) {
			x->state = OUTS_PENDING;
			x->gained_waiter = 1;
		} else if (rc == DB_OK) {
			x->state = g->affected[g->m[i].fence] > 0 ? OUTS_WRITTEN : OUTS_LOST;
		}
		else if (rc != DB_EFAIL)
			x->state = OUTS_FAILED;
	}
	return g->nb > 0 ? bundle_settle(db, g->b, g->nb, g->m, g->n, o, rc, g->affected, err) : rc;
}

/* ---- refusals ---- */

/* What each form leaves out. */
static const char *const form_lacks[] = { "", "the handler's output", "its run record",
	"the handler's output and its run record" };

/* Appends to o's note. */
static void PRINTFLIKE(2, 3) note_add(struct outcome *o, const char *fmt, ...)
{
	size_t len = strlen(o->note);
	va_list ap;

	if (len > 0 && len + 2 < sizeof o->note)
		len += (size_t)snprintf(o->note + len, sizeof o->note - len, "; ");
	va_start(ap, fmt);
	vsnprintf(o->note + len, sizeof o->note - len, fmt, ap);
	va_end(ap);
}

/* Whether failed_jobs already holds o's job id; *when gets its failed_at. */
static int
id_clash(struct db *db, const struct outcome *o, int *clash, char *when, size_t whenlen, char *err)
{
	struct db_res *r;
	char **row;
	int rc;

	*clash = 0;
	if (o->kind != OUT_DEAD)
		return DB_OK;
	r = db_query(db, &rc, err, "SELECT failed_at FROM failed_jobs WHERE id = %U", o->job->id);
	if (r == NULL)
		return rc;
	if ((row = db_res_next(r)) != NULL) {
		*clash = 1;
		snprintf(when, whenlen, "%s", row[0] != NULL ? row[0] : "?");
	}
	db_res_free(r);
	return DB_OK;
}

/* Writes o alone in form f; DB_OK, DB_EFAIL (refused) or a retryable
 * rc.  Fills the note when an older dead-letter was moved aside. */
static int
write_alone(
    struct db *db, struct outcome *o, enum form f, int clash, const char *note, const char *when, char *err)
{
	struct group g;
	struct piece p;
	int rc;

	group_init(&g);
	piece_build(db, o, 0, f, clash, note, budget_of(db), &p);
	group_add(&g, &p, 1);
	rc = group_run(db, &g, o, err);
	if (rc == DB_OK && clash && g.affected[g.m[0].renumber] > 0) {
		struct db_res *r = db_query(db, &rc, err, "SELECT @jobq_moved");
		char **row = r != NULL ? db_res_next(r) : NULL;

		note_add(o,
		    "failed_jobs already held an older dead job %llu (failed at %s UTC, before the id was "
		    "reused); it is kept as dead job %s",
		    (unsigned long long)o->job->id, when, row != NULL && row[0] != NULL ? row[0] : "?");
		db_res_free(r);
		rc = DB_OK; /* the move is committed whatever the read said */
	}
	group_free(&g);
	return rc;
}

/* o, alone, was refused for good in form `failed`: writes it in the
 * first form the server takes.  A dead-letter id clash is resolved first;
 * otherwise what the server objects to is looked for in the handler's
 * texts, then in the run row, then in both.  When every form is refused o is
 * OUTS_REFUSED and its note says why; the job returns when its lease
 * expires.  Returns DB_OK or a retryable rc. */
static int
write_refused(struct db *db, struct outcome *o, enum form failed, const char *why, char *err)
{
	char first[ERRSZ], when[64] = "", *note;
	struct buf fixed;
	int clash, rc;
	enum form f;

	snprintf(first, sizeof first, "%s", why);
	/* A lookup the server refuses too only means: no clash to resolve. */
	if ((rc = id_clash(db, o, &clash, when, sizeof when, err)) != DB_OK && rc != DB_EFAIL)
		return rc;
	/* The note is stored: server messages quote our SQL, maybe cut inside
	 * a character. */
	buf_init(&fixed);
	utf8_repair(first, strlen(first), &fixed);
	note = xasprintf("(not stored: the server refused this outcome with its texts: %s)", fixed.data);
	buf_free(&fixed);
	rc = DB_EFAIL;
	for (f = clash ? failed : failed + 1; f <= FORM_BARE && rc == DB_EFAIL; f++)
		if ((!o->minimal || f == FORM_PLAIN || f == FORM_BARE) &&
		    (rc = write_alone(db, o, f, clash, note, when, err)) == DB_OK && f != FORM_FULL &&
		    o->state == OUTS_WRITTEN)
			note_add(o, "written without %s, which the server refused: %s", form_lacks[f], first);
	free(note);
	if (rc == DB_EFAIL) {
		o->state = OUTS_REFUSED;
		note_add(o, "the server refused every form of this outcome: %s", first);
		return DB_OK;
	}
	return rc;
}

/* g was refused for good: its outcomes are written one at a time, so
 * that the one the server objects to costs no other its write. */
static int
group_refused(struct db *db, struct group *g, struct outcome *o, const char *why, char *err)
{
	size_t i;
	int rc = DB_OK;

	for (i = 0; i < g->n && rc == DB_OK; i++) {
		struct outcome *x = &o[g->m[i].out];
		enum form f = x->minimal ? FORM_PLAIN : FORM_FULL;

		if (g->n == 1 || (rc = write_alone(db, x, f, 0, NULL, "", err)) == DB_EFAIL)
			rc = write_refused(db, x, f, g->n == 1 ? why : err, err);
		else if (rc == DB_OK)
			note_add(x,
			    "written on its own: the transaction it shared with %zu other outcomes was "
			    "refused: %s",
			    g->n - 1, why);
	}
	for (; i < g->n; i++)
		o[g->m[i].out].state = OUTS_PENDING;
	return rc;
}

/* Sends g and deals with a refusal; returns DB_OK or a retryable rc. */
static int
group_flush(struct db *db, struct group *g, struct outcome *o, char *err)
{
	int rc = group_run(db, g, o, err);

	if (rc == DB_EFAIL) {
		char why[ERRSZ];

		snprintf(why, sizeof why, "%s", err);
		rc = group_refused(db, g, o, why, err);
	}
	group_free(g);
	group_init(g);
	return rc;
}

/* Writes the outcomes of o[0..n) still pending, in as few transactions
 * as fit budget, the first of them g (which may hold charges already);
 * see queue_write. */
static int
outcomes_send(struct db *db, struct group *g, struct outcome *o, size_t n, size_t budget, char *err)
{
	size_t i;
	int rc = DB_OK, alone;

	for (i = 0; i < n && rc == DB_OK; i++) {
		struct piece p;

		if (o[i].state != OUTS_PENDING)
			continue;

		piece_build(db, o, i, o[i].minimal ? FORM_PLAIN : FORM_FULL, 0, NULL, budget, &p);
		/* Send what is gathered first when o[i] must be alone, follows
		 * one that must, or does not fit beside them. */
		alone = o[i].alone || follow_waits(&o[i]) || piece_cascades(&o[i]);
		if (g->n + g->ncharge > 0 && (g->alone || alone || group_len_with(g, &p) > budget) &&
		    (rc = group_flush(db, g, o, err)) != DB_OK) {
			buf_free(&p.sql);
			buf_free(&p.del);
			break;
		}
		group_add(g, &p, alone);
	}
	if (rc == DB_OK && g->n + g->ncharge > 0)
		rc = group_flush(db, g, o, err);
	return rc;
}

/* Writes n outcomes, each fenced by its job's lease token, in as few
 * transactions as fit the server's max_allowed_packet (an outcome with
 * `alone` set gets one of its own; one with `minimal` set is written
 * without the handler's texts), cutting texts that would not fit.
 * o[i].state tells what became of each, o[i].note anything the caller
 * should log.  Returns DB_OK when none is left to try again, else the
 * retryable rc (err set) that stopped it: the outcomes before it are
 * written, those of its transaction are OUTS_FAILED, the rest
 * OUTS_PENDING.  A permanent error never stops it (see group_refused).
 *
 * The first transaction also charges the attempts of the ncharge jobs in
 * charge (running jobs reserved ahead, started since the last write);
 * each gets job.charged set once that transaction committed, and is
 * left for the next call otherwise.  n may be 0. */
int
queue_write(struct db *db, struct outcome *o, size_t n, struct job *const *charge, size_t ncharge,
    char *err)
{
	size_t budget = budget_of(db), i;
	struct group g;
	int rc = DB_OK;

	for (i = 0; i < n; i++) {
		o[i].state = OUTS_PENDING;
		o[i].gained_waiter = 0;
		o[i].cut = 0;
		o[i].note[0] = '\0';
		o[i].cascaded[0] = o[i].cascaded[1] = 0;
	}
	for (i = 0; i < n && rc == DB_OK; i++)
		if (o[i].unsure && (rc = queue_outcome_applied(db, &o[i], err)) == DB_OK &&
		    o[i].state != OUTS_PENDING)
			note_add(&o[i], "its earlier write's answer was lost, and the database shows it applied");
	if (rc != DB_OK)
		return rc;
	group_init(&g);
	group_charge(db, &g, charge, ncharge);
	rc = outcomes_send(db, &g, o, n, budget, err);
	/* What is still pending after a pass that failed nowhere gained a
	 * waiter while it ran: once more, in full. */
	for (i = 0; rc == DB_OK && i < n; i++)
		if (o[i].state == OUTS_PENDING) {
			rc = outcomes_send(db, &g, o, n, budget, err);
			break;
		}
	group_free(&g);
	return rc;
}
