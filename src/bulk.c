/* bulk.c -- one action on every job a filter finds (bulk.h).  Each job
 * is acted on by the one-job function the dashboard's buttons and the
 * CLI use, in its own transaction: a bulk action holds no lock longer
 * than one job's, so workers claiming from the same queue never wait on
 * it, and a run cut short leaves every job either done or untouched.
 * A cancel takes a chunk in one transaction instead (cancel.c): a
 * backlog is cancelled at the pace of its statements, not of one commit
 * a job, its locks held for one short transaction, which claims skip
 * (SKIP LOCKED) or wait out; a chunk that fails is tried a job at a time. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"
#include "bulk.h"
#include "cancel.h"
#include "failed.h"
#include "queue.h"
#include "queue_list.h"
#include "queue_states.h"

typedef int bulk_act_fn(struct db *db, uint64_t id, const struct bulk_filter *f, char *err);
/* The action on ids[0..n) in one transaction: rc[i] for each as
 * bulk_each_fn takes it; DB_OK, or the error that left all untouched. */
typedef int bulk_chunk_fn(struct db *db, const uint64_t *ids, size_t n, const struct bulk_filter *f, int *rc,
    char *err);

struct bulk_kind {
	const char *name;
	const char *table; /* the place the jobs are */
	const char *cond;  /* which of its rows */
	bulk_act_fn *act;
	bulk_chunk_fn *chunk; /* NULL: act, one job a transaction */
};

/* The one-job functions, each writing f->audit (when set) in the job's
 * own transaction. */
static int
act_retry(struct db *db, uint64_t id, const struct bulk_filter *f, char *err)
{
	return failed_retry_audited(db, id, f->audit, err);
}

static int
act_forget(struct db *db, uint64_t id, const struct bulk_filter *f, char *err)
{
	return failed_forget_audited(db, id, f->audit, err);
}

/* A one-statement change of queue_list.c on a job, with its audit row
 * when f has one. */
static int
act_queue(struct db *db, uint64_t id, const struct bulk_filter *f, audit_job_fn *fn, char *err)
{
	struct audit_job c = { fn, id };

	return f->audit != NULL ? audit_tx(db, f->audit, id, audit_job_act, &c, err) : fn(db, id, err);
}

static int
act_release(struct db *db, uint64_t id, const struct bulk_filter *f, char *err)
{
	return act_queue(db, id, f, queue_release_one, err);
}

static int
act_delete(struct db *db, uint64_t id, const struct bulk_filter *f, char *err)
{
	return act_queue(db, id, f, queue_delete, err);
}

/* The audit rows of a cancel: the same for a job cancelled now and one
 * asked of its worker. */
static int
act_cancel(struct db *db, uint64_t id, const struct bulk_filter *f, char *err)
{
	enum cancel_state st;
	int rc = queue_cancel_audited(
	    db, id, f->by, f->audit != NULL ? (const struct audit_entry[2]){ *f->audit, *f->audit } : NULL, &st, err);

	if (rc == DB_OK && st == CANCEL_ENDED) {
		snprintf(err, ERRSZ, "job %llu had ended", (unsigned long long)id);
		return QUEUE_NOT_FOUND;
	}
	return rc;
}

static int
chunk_cancel(struct db *db, const uint64_t *ids, size_t n, const struct bulk_filter *f, int *rc, char *err)
{
	enum cancel_state *st = xcalloc(n, sizeof *st);
	int r = queue_cancel_many(db, ids, n, f->by,
	    f->audit != NULL ? (const struct audit_entry[2]){ *f->audit, *f->audit } : NULL, st, f->down, err);
	size_t i;

	for (i = 0; r == DB_OK && i < n; i++)
		rc[i] = st[i] == CANCEL_ENDED ? QUEUE_NOT_FOUND : DB_OK;
	free(st);
	return r;
}

static const struct bulk_kind kinds[] = {
	{ "retry", "failed_jobs", "TRUE", act_retry, NULL },
	{ "forget", "failed_jobs", "TRUE", act_forget, NULL },
	{ "release", "jobs", IS_STALE, act_release, NULL },
	/* queue_delete's own condition: a job others wait for or a group
	 * counts is not deleted (cancel it), so it is not counted either. */
	{ "delete", "jobs", "lease_token IS NULL AND has_waiters = 0 AND group_id IS NULL", act_delete, NULL },
	{ "cancel", "jobs", "TRUE", act_cancel, chunk_cancel },
};

const struct bulk_kind *
bulk_kind_find(const char *name)
{
	size_t i;

	for (i = 0; name != NULL && i < ARRAY_LEN(kinds); i++)
		if (strcmp(kinds[i].name, name) == 0)
			return &kinds[i];
	return NULL;
}

const char *
bulk_kind_name(const struct bulk_kind *k)
{
	return k->name;
}

int
bulk_kind_dead(const struct bulk_kind *k)
{
	return strcmp(k->table, "failed_jobs") == 0;
}

/* The WHERE of the action's jobs under f, ids up to upto (0: any). */
static void
where_sql(struct db *db, struct buf *w, const struct bulk_kind *k, const struct bulk_filter *f, uint64_t upto)
{
	db_sql(db, w, "(%s)", k->cond);
	if (f->state != NULL && strcmp(f->state, "ready") == 0)
		buf_adds(w, " AND " IS_READY);
	else if (f->state != NULL && strcmp(f->state, "delayed") == 0)
		buf_adds(w, " AND " IS_DELAYED);
	else if (f->state != NULL && strcmp(f->state, "waiting") == 0)
		buf_adds(w, " AND " IS_WAITING);
	else if (f->state != NULL && strcmp(f->state, "reserved") == 0)
		buf_adds(w, " AND " IS_RESERVED);
	else if (f->state != NULL && strcmp(f->state, "stale") == 0)
		buf_adds(w, " AND " IS_STALE);
	if (f->queue != NULL)
		db_sql(db, w, " AND queue = %q", db_ascii(f->queue));
	if (f->type != NULL)
		db_sql(db, w, " AND type = %q", db_ascii(f->type));
	if (f->handlers != NULL && k->act == act_retry)
		failed_servable_sql(db, w, f->handlers, f->unknown_types);
	if (upto != 0)
		db_sql(db, w, " AND id <= %U", upto);
}

static int
count_sql(struct db *db, const struct bulk_kind *k, const struct bulk_filter *f, uint64_t upto_in,
    uint64_t *n, uint64_t *upto, char *err)
{
	struct buf w;
	struct db_res *r;
	char **row;
	int rc;

	buf_init(&w);
	where_sql(db, &w, k, f, upto_in);
	r = db_query(db, &rc, err, "SELECT COUNT(*), COALESCE(MAX(id), 0) FROM %s WHERE %s", k->table, w.data);
	buf_free(&w);
	if (r == NULL)
		return rc;
	row = db_res_next(r);
	*n = row != NULL ? db_col_u64(row[0], 0) : 0;
	if (upto != NULL)
		*upto = row != NULL ? db_col_u64(row[1], 0) : 0;
	db_res_free(r);
	return DB_OK;
}

int
bulk_count(struct db *db, const struct bulk_kind *k, const struct bulk_filter *f, uint64_t *n,
    uint64_t *upto, char *err)
{
	return count_sql(db, k, f, 0, n, upto, err);
}

int
bulk_count_upto(struct db *db, const struct bulk_kind *k, const struct bulk_filter *f, uint64_t upto,
    uint64_t *n, char *err)
{
	if (upto == 0) {
		*n = 0;
		return DB_OK;
	}
	return count_sql(db, k, f, upto, n, NULL, err);
}

/* Acts on ids[0..n) one job a transaction, telling each(); stops at a
 * job whose answer was lost, or before one f->still refuses.  *last
 * gets the last id told. */
static int
act_each(struct db *db, const struct bulk_kind *k, const struct bulk_filter *f, const uint64_t *ids, size_t n,
    bulk_each_fn *each, void *arg, uint64_t *last, char *err)
{
	size_t i;
	int rc;

	for (i = 0; i < n; i++) {
		if (audit_still_ok(f->still, err) != DB_OK)
			return AUDIT_STOPPED;
		rc = k->act(db, ids[i], f, err);
		if (rc == DB_EGONE) /* unknown whether it happened: not told, not passed */
			return rc;
		*last = ids[i];
		each(arg, ids[i], rc, err);
	}
	return DB_OK;
}

/* Acts on ids[0..n) in one transaction (k->chunk), telling each(); a
 * chunk that fails otherwise than by a lost answer is tried a job at a
 * time, so that one row locked or refused refuses one job. */
static int
act_chunk(struct db *db, const struct bulk_kind *k, const struct bulk_filter *f, const uint64_t *ids, size_t n,
    bulk_each_fn *each, void *arg, uint64_t *last, char *err)
{
	int *rc, r;
	size_t i;

	if (audit_still_ok(f->still, err) != DB_OK)
		return AUDIT_STOPPED;
	rc = xcalloc(n, sizeof *rc);
	r = k->chunk(db, ids, n, f, rc, err);
	if (r == DB_OK)
		for (i = 0; i < n; i++) {
			if (rc[i] == QUEUE_NOT_FOUND)
				snprintf(err, ERRSZ, "job %llu had ended", (unsigned long long)ids[i]);
			*last = ids[i];
			each(arg, ids[i], rc[i], err);
		}
	free(rc);
	if (r == DB_OK || r == DB_EGONE)
		return r;
	return act_each(db, k, f, ids, n, each, arg, last, err);
}

int
bulk_step(struct db *db, const struct bulk_kind *k, const struct bulk_filter *f, uint64_t after,
    uint64_t upto, unsigned limit, bulk_each_fn *each, void *arg, uint64_t *last, int *more, char *err)
{
	struct buf w;
	struct db_res *r;
	uint64_t *ids;
	size_t n = 0;
	char **row;
	int rc = DB_OK;

	*last = after;
	*more = 0;
	if (upto <= after)
		return DB_OK;
	buf_init(&w);
	where_sql(db, &w, k, f, upto);
	r = db_query(db, &rc, err, "SELECT id FROM %s WHERE %s AND id > %U ORDER BY id LIMIT %u", k->table, w.data,
	    after, limit);
	buf_free(&w);
	if (r == NULL)
		return rc;
	ids = xcalloc(db_res_rows(r) + 1, sizeof *ids);
	while ((row = db_res_next(r)) != NULL)
		ids[n++] = db_col_u64(row[0], 0);
	db_res_free(r);
	if (n > 0)
		rc = k->chunk != NULL ? act_chunk(db, k, f, ids, n, each, arg, last, err)
		                      : act_each(db, k, f, ids, n, each, arg, last, err);
	free(ids);
	*more = rc == DB_OK && n == limit && *last < upto;
	return rc;
}
