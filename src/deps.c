/* deps.c -- jobs that wait for other jobs (deps.h, sql/021-deps.sql).
 *
 * A waiting job counts in waiting_on the jobs it waits for that have not
 * ended, and sits at available_at DEPS_NEVER, out of every claim's
 * reach.  Each job that ends takes itself off the count of the jobs that
 * wait for it, in the transaction that ends it (deps_ended_sql): so each
 * release happens exactly once, with whatever ended the job -- a worker's
 * outcome, the dead-letter move, a cancel, the expiry sweep.  The one
 * that brings a count to 0 makes its job due (at the time it was meant to
 * be due, or now).  A job of policy all whose dependency ended dead,
 * cancelled or expired is marked for cancelling instead, naming that job,
 * and made due; the transaction that ended the job then finalizes it
 * unstarted, and those its end marks in turn, down the graph
 * (final_cascade: a worker's outcome, a cancel, the sweep), up to a
 * bound past which the next claim of its queue (or the expiry sweep,
 * should no worker serve the queue) finalizes it, as it does any job
 * that carries a cancel request. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deps.h"
#include "park.h"
#include "queue_states.h"

/* The jobs waiting for id, joined by index (a single-table UPDATE with
 * IN (subquery) is not turned into a join by every server, and would
 * read all of jobs). */
#define WAITERS "UPDATE jobs j JOIN jobq_deps d ON d.job_id = j.id SET "

/* Appends the statements that tell the jobs waiting for job id that it
 * ended as how ("done", "dead", "cancelled" or "expired"); each runs only
 * while guard (SQL, e.g. "@jobq_fence > 0") holds, so that the caller
 * ties them to the statement that ended the job.  parts (DEPS_*) says
 * which are needed: a caller that knows the job has no waiters, or
 * never waited, leaves those out.  Returns how many.
 *
 * The jobs this end releases (their count was 1) are made due and their
 * count set to 0 in one statement, unless the caller did that itself
 * (DEPS_RELEASED); then the counts above 1 are taken down, unless the
 * caller knows there are none (DEPS_SOLE: each waiter waits for this
 * job alone): a released job's row and index entries are written once.
 * Each statement's assignments are independent of each other, which a
 * multi-table UPDATE needs: it promises no order.  The job's own rows of
 * jobq_deps go: it waits for nothing any more.
 *
 * A waiter released or marked here gets a wait_until if it had none
 * (plain SQL may leave it out: due as soon as released), as now: the
 * value is the same either way, and every later end of the job -- a
 * claim's outcome, the dead letter, a cancel, the sweep -- tells by it
 * that the job waited and drops its rows of jobq_deps (DEPS_OWN). */
size_t
deps_ended_sql(
    struct db *db, struct buf *sql, uint64_t id, const char *how, const char *guard, unsigned parts)
{
	int done = strcmp(how, "done") == 0;
	char reason[64];
	size_t n = 0;

	if (parts & DEPS_OWN) {
		db_sql(db, sql, "DELETE FROM jobq_deps WHERE job_id = %U AND %s;", id, guard);
		n++;
	}
	if (!(parts & DEPS_WAITERS))
		return n;
	if (!(parts & DEPS_RELEASED)) {
		db_sql(db, sql,
		    WAITERS "j.available_at = GREATEST(COALESCE(j.wait_until, UTC_TIMESTAMP(6)), UTC_TIMESTAMP(6)),"
		            " j.waiting_on = 0, j.wait_until = COALESCE(j.wait_until, UTC_TIMESTAMP(6))"
		            " WHERE d.after_id = %U AND %s AND j.waiting_on = 1 AND (%d OR j.after_any = 1);",
		    id, guard, done);
		n++;
	}
	if (!(parts & DEPS_SOLE)) {
		db_sql(db, sql,
		    WAITERS "j.waiting_on = j.waiting_on - 1 WHERE d.after_id = %U AND %s AND j.waiting_on > 1"
		            " AND (%d OR j.after_any = 1);",
		    id, guard, done);
		n++;
	}
	if (!done) {
		/* The jobs this end cancels are parked first, while
		 * cancel_by still tells them from those cancelled before. */
		n += park_waiters_sql(db, sql, id, how, guard);
		snprintf(reason, sizeof reason, "dependency %llu (%s)", (unsigned long long)id, how);
		db_sql(db, sql,
		    WAITERS
		    "j.cancel_by = COALESCE(j.cancel_by, %q), j.cancel_at = COALESCE(j.cancel_at,"
		    " UTC_TIMESTAMP(6)), j.expires_at = UTC_TIMESTAMP(6), j.available_at = UTC_TIMESTAMP(6),"
		    " j.wait_until = COALESCE(j.wait_until, UTC_TIMESTAMP(6))"
		    " WHERE d.after_id = %U AND %s AND j.waiting_on > 0 AND j.after_any = 0;",
		    reason, id, guard);
	}
	return n + !done;
}

/* Appends the statement that drops the own rows of jobq_deps of those
 * jobs in ids (a comma-separated list of job ids) that no longer exist;
 * returns 1.  It follows a statement that ended several jobs under
 * their fences at once (a bundle of plain outcomes, queue_outcome_sql.c),
 * where deps_ended_sql's DEPS_OWN, one per job, would cost a statement
 * each: a job whose fence failed is still there, and keeps its rows for
 * the outcome that will end it; one that is gone waits for nothing. */
size_t
deps_gone_sql(struct buf *sql, const struct buf *ids)
{
	buf_adds(sql, "DELETE FROM jobq_deps WHERE job_id IN (");
	buf_add(sql, ids->data, ids->len);
	buf_adds(sql, ") AND NOT EXISTS (SELECT 1 FROM jobs WHERE jobs.id = jobq_deps.job_id);");
	return 1;
}

/* Reads the (id, state) rows of r into a new array. */
static struct dep_view *
views_of(struct db_res *r, size_t *n)
{
	struct dep_view *d = xcalloc(db_res_rows(r) + 1, sizeof *d);
	char **row;

	*n = 0;
	while ((row = db_res_next(r)) != NULL) {
		d[*n].id = db_col_u64(row[0], 0);
		d[*n].state = xstrdup(row[1] != NULL ? row[1] : "gone");
		(*n)++;
	}
	db_res_free(r);
	return d;
}

/* Fills l with job id's links: the jobs it waits for (each with its
 * state, or how it ended), those that wait for it, and, of the parked
 * (park.c), the dead job whose retry re-opens it (down the chain of
 * cancels) and the jobs a retry of it re-opens, all by id.  Free with deps_links_free, whatever it
 * returns. */
int
deps_links(struct db *db, uint64_t id, struct deps_links *l, char *err)
{
	static const char *const q[] = {
		"SELECT d.after_id, " JOB_STATE_OF("d.after_id") " FROM jobq_deps d WHERE d.job_id = %U ORDER BY d.after_id",
		"SELECT d.job_id, " JOB_STATE_OF("d.job_id") " FROM jobq_deps d WHERE d.after_id = %U ORDER BY d.job_id",
		"SELECT p.id, " JOB_STATE_OF("p.id") " FROM jobq_parked p WHERE p.parked_by = %U ORDER BY p.id",
	};
	struct dep_view **into[] = { &l->after, &l->by, &l->reopens };
	size_t *count[] = { &l->nafter, &l->nby, &l->nreopens };
	struct db_res *r;
	char **row;
	size_t i;
	int rc = DB_OK;

	memset(l, 0, sizeof *l);
	for (i = 0; i < ARRAY_LEN(q) && rc == DB_OK; i++)
		if ((r = db_query(db, &rc, err, q[i], id)) != NULL)
			*into[i] = views_of(r, count[i]);
	/* A job parked under a cancelled one comes back when the dead job
	 * at the top of the chain is retried: that is the one to name.  The
	 * bound stays under MySQL's cte_max_recursion_depth (1,000), which
	 * would fail the statement rather than stop it. */
	if (rc == DB_OK &&
	    (r = db_query(db, &rc, err,
	         "WITH RECURSIVE up (id, parked_by, n) AS (SELECT id, parked_by, 0 FROM jobq_parked WHERE id = %U"
	         " UNION ALL SELECT p.id, p.parked_by, up.n + 1 FROM jobq_parked p JOIN up ON p.id = up.parked_by"
	         " WHERE up.n < 998) SELECT parked_by FROM up ORDER BY n DESC LIMIT 1",
	         id)) != NULL) {
		if ((row = db_res_next(r)) != NULL)
			l->reopened_by = db_col_u64(row[0], 0);
		db_res_free(r);
	}
	return rc;
}

static void
views_free(struct dep_view *d, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(d[i].state);
	free(d);
}

void
deps_links_free(struct deps_links *l)
{
	views_free(l->after, l->nafter);
	views_free(l->by, l->nby);
	views_free(l->reopens, l->nreopens);
	memset(l, 0, sizeof *l);
}

/* Sets counts[i] to the count query (rows: id, count; "%s" takes the
 * list of ids) gives ids[i], for each of the n (at most a page of a
 * list: the caller bounds n) jobs. */
static int
count_by(struct db *db, const char *query, const uint64_t *ids, size_t n, uint64_t *counts, char *err)
{
	struct db_res *r;
	struct buf in;
	char **row;
	size_t i;
	int rc;

	memset(counts, 0, n * sizeof *counts);
	if (n == 0)
		return DB_OK;
	buf_init(&in);
	buf_add_ids(&in, ids, n);
	r = db_query(db, &rc, err, query, in.data);
	buf_free(&in);
	if (r == NULL)
		return rc;
	while ((row = db_res_next(r)) != NULL)
		for (i = 0; i < n; i++)
			if (ids[i] == db_col_u64(row[0], 0))
				counts[i] = db_col_u64(row[1], 0);
	db_res_free(r);
	return DB_OK;
}

/* Sets waiting[i] to how many jobs wait for ids[i] now (the rows of
 * jobq_deps, which stay until the waiting job ends) and reopens[i] to
 * how many a retry of it from the dead letter re-opens (jobq_parked,
 * the first level of the graph), for each of the n jobs.  Served by the
 * primary key and jobq_parked_by. */
int
deps_count_waiters(struct db *db, const uint64_t *ids, size_t n, uint64_t *waiting, uint64_t *reopens, char *err)
{
	int rc = count_by(db, "SELECT after_id, COUNT(*) FROM jobq_deps WHERE after_id IN (%s) GROUP BY after_id", ids, n,
	    waiting, err);

	if (rc == DB_OK)
		rc = count_by(db, "SELECT parked_by, COUNT(*) FROM jobq_parked WHERE parked_by IN (%s) GROUP BY parked_by",
		    ids, n, reopens, err);
	return rc;
}

/* The list d as a JSON array of {"id", "state"}, lowest id first: what
 * `jobq show --json` and the dashboard's job page give for what a job
 * waits for and what waits for it.  The caller owns the array. */
cJSON *
deps_json(const struct dep_view *d, size_t n)
{
	cJSON *a = cJSON_CreateArray(), *e;
	size_t i;

	for (i = 0; a != NULL && i < n; i++) {
		if ((e = cJSON_CreateObject()) == NULL || !cJSON_AddItemToArray(a, e))
			fatal("cJSON: out of memory");
		cJSON_AddNumberToObject(e, "id", (double)d[i].id);
		cJSON_AddStringToObject(e, "state", d[i].state);
	}
	if (a == NULL)
		fatal("cJSON: out of memory");
	return a;
}
