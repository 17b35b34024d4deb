/* ended.c -- how the jobs a job waits for stand (ended.h).
 *
 * A job is in jobs until it ends; then the dead letter holds it (dead),
 * or its last run row says how it ended (done, cancelled, expired).  The
 * ones still in jobs are locked (SELECT ... FOR UPDATE), so the
 * transaction that would end one either committed before -- and a later
 * table says how -- or waits for the caller's, and then sees what the
 * caller wrote (a new row of jobq_deps, say).
 *
 * A job also goes the other way, back from the dead letter to jobs (a
 * retry, one transaction that locks its dead row first).  So the rows of
 * the dead letter are locked before jobs is read: a retry that took its
 * lock first has committed by the time jobs is read, and the job counts
 * as in the queue; one that comes later waits for the caller's
 * transaction.  Read the other way round, a job retried between the two
 * reads was in neither table, and its last run ("dead") or none (pruned:
 * "done") spoke for a job that is in the queue again. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "ended.h"
#include "queue_states.h"

/* The mark of a job still in jobs. */
static const char LIVE[] = "live";

static int
by_id(const void *a, const void *b)
{
	uint64_t x = ((const struct ended *)a)->id, y = ((const struct ended *)b)->id;

	return x < y ? -1 : x > y;
}

/* Sorts k[0..*n) by id and drops repeats. */
void
ended_sort(struct ended *k, size_t *n)
{
	size_t i, m = 0;

	qsort(k, *n, sizeof *k, by_id);
	for (i = 0; i < *n; i++)
		if (m == 0 || k[m - 1].id != k[i].id)
			k[m++] = k[i];
	*n = m;
}

/* The entry of id in k (sorted by ended_sort), or NULL. */
struct ended *
ended_find(struct ended *k, size_t n, uint64_t id)
{
	struct ended key = { id, NULL, 0, 0, NULL };

	return bsearch(&key, k, n, sizeof *k, by_id);
}

/* Runs query (rows: id[, outcome]) and, for each id not found yet, sets
 * how: fixed, or the outcome of its last row that ends a job (rows come
 * ordered by run).  A row that ends nothing never hides an end before
 * it: a worker whose lease was lost writes its "lost" row late, after
 * the run of another worker that ended the job.  A dead job is found
 * in the dead letter first; its last run says "dead" once it was
 * forgotten there. */
static int
mark(struct db *db, struct ended *k, size_t n, const char *fixed, const struct buf *query, char *err)
{
	struct db_res *r;
	char **row;
	size_t i;
	int rc;

	if ((r = db_query_buf(db, query, &rc, err)) == NULL)
		return rc;
	for (i = 0; i < n; i++)
		k[i].run = NULL;
	while ((row = db_res_next(r)) != NULL) {
		struct ended *e = ended_find(k, n, db_col_u64(row[0], 0));
		const char *how = fixed != NULL ? fixed : run_end_word(row[1]);

		if (e != NULL && !e->found && how != NULL)
			e->run = how;
	}
	db_res_free(r);
	for (i = 0; i < n; i++)
		if (!k[i].found && k[i].run != NULL) {
			k[i].found = 1;
			k[i].how = k[i].run == LIVE ? NULL : k[i].run;
			k[i].forgotten = fixed == NULL && strcmp(k[i].run, "dead") == 0;
		}
	return DB_OK;
}

/* Inside a transaction: locks those of the n jobs k names (sorted by
 * ended_sort) that are still in jobs and learns how each other one
 * ended; one no table knows is left with found = 0. */
int
ended_lookup(struct db *db, struct ended *k, size_t n, char *err)
{
	static const char *const from[] = { "SELECT id FROM failed_jobs WHERE id IN (%s) ORDER BY id FOR UPDATE",
		"SELECT id FROM jobs WHERE id IN (%s) ORDER BY id FOR UPDATE",
		"SELECT id FROM failed_jobs WHERE id IN (%s)",
		"SELECT job_id, outcome FROM job_runs WHERE job_id IN (%s) ORDER BY job_id, id" };
	/* The first read only locks (see the top of this file); the dead
	 * letter is read again after jobs, for a job that ended meanwhile. */
	const char *fixed[] = { NULL, LIVE, "dead", NULL };
	struct db_res *r;
	struct buf list, q;
	size_t i;
	int rc = DB_OK;

	if (n == 0)
		return DB_OK;
	buf_init(&list);
	for (i = 0; i < n; i++) {
		k[i].found = 0;
		k[i].how = NULL;
		k[i].forgotten = 0;
		buf_printf(&list, "%s%llu", i ? "," : "", (unsigned long long)k[i].id);
	}
	for (i = 0; i < ARRAY_LEN(from) && rc == DB_OK; i++) {
		buf_init(&q);
		buf_printf(&q, from[i], list.data);
		if (i > 0)
			rc = mark(db, k, n, fixed[i], &q, err);
		else if ((r = db_query_buf(db, &q, &rc, err)) != NULL)
			db_res_free(r);
		buf_free(&q);
	}
	buf_free(&list);
	return rc;
}
