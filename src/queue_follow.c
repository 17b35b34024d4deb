/* queue_follow.c -- follow-ups that wait for other jobs (fd 3 "after"),
 * written in their parent's outcome transaction (queue_outcome.c).
 *
 * A follow-up that waits must know, as it is inserted, how many of the
 * jobs it names have not ended, and how the others ended: after.c finds
 * that out with locking reads and decides in C.  So an outcome with
 * such follow-ups is not one round trip: its transaction opens here,
 * locks the job's own row under its lease token, inserts every
 * follow-up of the run through after.c (in the order the handler wrote
 * them, refs resolved to their ids), and leaves @jobq_follow naming
 * them for the run row; the outcome's statements follow in the same
 * transaction, and it commits only when their fence held.
 *
 * The job's row is locked before anything is written, so the fence
 * cannot fail afterwards unless has_waiters differs from what the
 * outcome's statements were built for (a waiter gained since the claim):
 * that is found here, before the follow-ups, and the outcome is built
 * again in full (FOLLOW_REBUILD).  A follow-up naming its own parent
 * waits for nothing more: the parent ends done in this transaction. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "after.h"
#include "queue_follow.h"

/* Whether o is a done outcome with a follow-up that waits for jobs. */
int
follow_waits(const struct outcome *o)
{
	size_t i;

	for (i = 0; o->kind == OUT_DONE && i < o->nfollow; i++)
		if (o->follow[i].nafter + o->follow[i].nafter_refs > 0)
			return 1;
	return 0;
}

/* The jobs of o's follow-ups for after_insert; ids without o's own. */
static struct after_job *
jobs_of(const struct outcome *o, uint64_t **ids)
{
	struct after_job *a = xcalloc(o->nfollow + 1, sizeof *a);
	size_t i, k;

	*ids = xcalloc(o->nfollow + 1, sizeof **ids);
	for (i = 0; i < o->nfollow; i++) {
		const struct enqueue_item *f = &o->follow[i];
		uint64_t *mine = xcalloc(f->nafter + 1, sizeof *mine);

		a[i].e = *f;
		for (k = 0; k < f->nafter; k++)
			if (f->after[k] != o->job->id)
				mine[a[i].nids++] = f->after[k];
		a[i].ids = mine;
		a[i].refs = f->after_refs;
		a[i].nrefs = f->nafter_refs;
		a[i].after_any = f->after_any;
	}
	return a;
}

static void
jobs_free(struct after_job *a, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free((uint64_t *)a[i].ids);
	free(a);
}

/* Inserts o's follow-ups and sets @jobq_follow to their ids. */
static int
insert_all(struct db *db, const struct outcome *o, char *err)
{
	uint64_t *ids;
	struct after_job *a = jobs_of(o, &ids);
	struct buf sql;
	size_t i;
	int rc = after_insert(db, a, o->nfollow, o->run != NULL ? o->run->worker : "a worker", ids, err);

	buf_init(&sql);
	buf_adds(&sql, "SET @jobq_follow = '");
	for (i = 0; i < o->nfollow; i++)
		buf_printf(&sql, "%s%llu", i ? "," : "", (unsigned long long)ids[i]);
	buf_adds(&sql, "'");
	if (rc == DB_OK)
		rc = db_exec_buf(db, &sql, err);
	buf_free(&sql);
	jobs_free(a, o->nfollow);
	free(ids);
	return rc;
}

/* Opens o's transaction (follow_waits(o)) and writes its follow-ups;
 * the caller sends the outcome's statements (without their START
 * TRANSACTION) and commits.  Returns DB_OK; FOLLOW_LOST when the lease
 * is no longer o's (nothing written, @jobq_follow NULL: the outcome's
 * fence fails and its run row says "lost", committed as usual);
 * FOLLOW_REBUILD when has_waiters is not what o's statements were built
 * for (rolled back: build them again in full, with o->gained_waiter);
 * or a DB_* error (rolled back). */
int
follow_begin(struct db *db, const struct outcome *o, char *err)
{
	const struct job *j = o->job;
	struct db_res *r;
	char **row;
	int rc = db_begin(db, err), hw = -1;

	if (rc != DB_OK)
		return rc;
	r = db_query(db, &rc, err, "SELECT has_waiters FROM jobs WHERE id = %U AND lease_token = %q FOR UPDATE",
	    j->id, j->token);
	if (r != NULL && (row = db_res_next(r)) != NULL)
		hw = (int)db_col_u64(row[0], 0);
	db_res_free(r);
	if (rc == DB_OK && hw < 0)
		rc = db_exec(db, err, "SET @jobq_follow = NULL");
	if (rc == DB_OK && hw < 0)
		return FOLLOW_LOST;
	if (rc == DB_OK && !o->gained_waiter && hw != j->waiters) {
		db_rollback(db);
		return FOLLOW_REBUILD;
	}
	if (rc == DB_OK)
		rc = insert_all(db, o, err);
	if (rc != DB_OK)
		db_rollback(db);
	return rc;
}
