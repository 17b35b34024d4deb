/* cancel.c -- cancelling jobs (cancel.h).
 *
 * A job no worker holds (ready, delayed, waiting, stale) is finalized at
 * once as cancelled (final.c).  One under a live lease gets a request
 * instead: cancel_by and cancel_at say who asked and when, and its worker,
 * which looks for requests on the jobs it holds twice a second, stops the
 * handler's process group (SIGTERM, SIGKILL after kill_grace) and writes
 * the cancelled outcome under its lease.  The request also moves the
 * job's expiry to now: should the job come back to the queue uncancelled
 * (its handler's outcome was a retry written just before the worker saw
 * the request, or the worker died), the next claim or the expiry sweep
 * finalizes it, as cancelled since it carries the request.  A job whose
 * handler's outcome reached the database first stays as that outcome
 * ended it (done or dead): that run says so.
 *
 * One transaction cancels any number of jobs: it locks their rows, then
 * finalizes those no worker holds and asks the workers of the others,
 * with the release of what waits for each and its group's count, as the
 * expiry sweep does.  A bulk cancel of a large backlog so costs one
 * commit a chunk, not one a job. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"
#include "cancel.h"
#include "deps.h"
#include "final.h"
#include "groups.h"
#include "park.h"
#include "queue.h"
#include "queue_states.h"

/* One row a cancel locked, and what its end needs. */
struct held {
	uint64_t id;
	int reserved;   /* under a live lease: its worker is asked */
	int requested;  /* it carried a cancel request already */
	unsigned parts; /* the DEPS_* its end needs */
	char group[24]; /* its group's id, or "" */
};

/* Inside a transaction: locks the rows of ids[0..n) still in jobs, in id
 * order, and reads into h what their cancel needs; *nheld gets how many
 * (the others have ended). */
static int
lock_rows(struct db *db, const uint64_t *ids, size_t n, struct held *h, size_t *nheld, char *err)
{
	struct db_res *r;
	struct buf in;
	char **row;
	size_t i;
	int rc;

	buf_init(&in);
	for (i = 0; i < n; i++)
		buf_printf(&in, "%s%llu", i ? "," : "", (unsigned long long)ids[i]);
	r = db_query(db, &rc, err,
	    "SELECT id, (" IS_RESERVED "), cancel_by IS NOT NULL, has_waiters <> 0,"
	    " waiting_on > 0 OR wait_until IS NOT NULL, group_id FROM jobs WHERE id IN (%s) ORDER BY id FOR UPDATE",
	    in.data);
	buf_free(&in);
	if (r == NULL)
		return rc;
	for (*nheld = 0; (row = db_res_next(r)) != NULL && *nheld < n; (*nheld)++) {
		struct held *x = &h[*nheld];

		x->id = db_col_u64(row[0], 0);
		x->reserved = row[1] != NULL && row[1][0] == '1';
		x->requested = row[2] != NULL && row[2][0] == '1';
		x->parts = (row[3] != NULL && row[3][0] == '1' ? DEPS_WAITERS : 0) |
		           (row[4] != NULL && row[4][0] == '1' ? DEPS_OWN : 0);
		snprintf(x->group, sizeof x->group, "%s", row[5] != NULL ? row[5] : "");
	}
	db_res_free(r);
	return DB_OK;
}

/* Whether the cancel ends h now: no worker holds it, and with settle only
 * a job that carries a request is ended (cancel_settle). */
static int
ends_now(const struct held *h, int settle)
{
	return !h->reserved && (!settle || h->requested);
}

/* Appends the statements of the cancel of the rows h[0..n)
 * holds, then COMMIT unless open: unless settle, the request on every one of them (a
 * second request keeps the first one's who and when: that is the request
 * the run names); the end of those ends_now picks, with the release of
 * what waits for each (deps.c) and its group's count (groups.c); and the
 * audit row of each (a[0] ended, a[1] asked; a NULL: none).  Whatever
 * is parked under any of them goes: a person's cancel is final, and no
 * retry of a dead dependency re-opens the job (park.c). */
static void
cancel_sql(struct db *db, struct buf *sql, const struct held *h, size_t n, const char *by, int settle,
    const struct audit_entry *a, int open)
{
	struct buf all, ends, cond;
	char job[24];
	size_t i;
	int own = 0;

	buf_init(&all);
	buf_init(&ends);
	buf_init(&cond);
	for (i = 0; i < n; i++) {
		buf_printf(&all, "%s%llu", i ? "," : "", (unsigned long long)h[i].id);
		if (ends_now(&h[i], settle)) {
			buf_printf(&ends, "%s%llu", ends.len ? "," : "", (unsigned long long)h[i].id);
			own |= (h[i].parts & DEPS_OWN) != 0;
		}
	}
	if (!settle)
		db_sql(db, sql,
		    "UPDATE jobs SET cancel_by = COALESCE(cancel_by, %q), cancel_at = COALESCE(cancel_at,"
		    " UTC_TIMESTAMP(6)), expires_at = LEAST(COALESCE(expires_at, UTC_TIMESTAMP(6)), UTC_TIMESTAMP(6))"
		    " WHERE id IN (%s);",
		    by, all.data);
	if (ends.len > 0) {
		buf_printf(&cond, "id IN (%s)", ends.data);
		final_sql(db, sql, by, cond.data);
		if (own) /* what those that waited waited for */
			deps_gone_sql(sql, &ends);
	}
	park_unpark_sql(db, sql, all.data);
	for (i = 0; i < n; i++) {
		if (ends_now(&h[i], settle) && (h[i].parts & DEPS_WAITERS))
			deps_ended_sql(db, sql, h[i].id, "cancelled", "1 = 1", DEPS_WAITERS);
		if (ends_now(&h[i], settle) && h[i].group[0] != '\0')
			groups_ended_sql(db, sql, h[i].group, "cancelled", "1 = 1");
		if (a != NULL) {
			snprintf(job, sizeof job, "%llu", (unsigned long long)h[i].id);
			audit_sql_when(db, sql, &a[h[i].reserved], job, NULL);
			buf_adds(sql, ";");
		}
	}
	if (!open)
		buf_adds(sql, "COMMIT");
	buf_free(&all);
	buf_free(&ends);
	buf_free(&cond);
}

/* The ids (comma-separated; empty: none) of the rows of h[0..n) the
 * cancel ends now that other jobs wait for. */
static void
ended_waited_for(const struct held *h, size_t n, int settle, struct buf *ids)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (ends_now(&h[i], settle) && (h[i].parts & DEPS_WAITERS))
			buf_printf(ids, "%s%llu", ids->len ? "," : "", (unsigned long long)h[i].id);
}

/* One try of cancel_many: the rows locked, then the rest of the
 * transaction in one round trip, and what it cancels down the graph
 * (*down gets how many: 0 when none). */
static int
cancel_try(struct db *db, const uint64_t *ids, size_t n, const char *by, int settle, const struct audit_entry *a,
    enum cancel_state *st, uint64_t *down, char *err)
{
	struct held *h = xcalloc(n, sizeof *h);
	struct buf sql, waited;
	uint64_t ends[2] = { 0, 0 };
	size_t i, k, nheld = 0;
	int rc;

	*down = 0;
	for (i = 0; i < n; i++)
		st[i] = CANCEL_ENDED;
	if ((rc = db_begin(db, err)) != DB_OK)
		goto out;
	if ((rc = lock_rows(db, ids, n, h, &nheld, err)) != DB_OK || nheld == 0) {
		db_rollback(db);
		goto out;
	}
	/* The jobs that waited for those it ends, and that their end marks
	 * for cancelling, end too, in the same transaction, and theirs down
	 * the graph (final_cascade): no job is left due, counted ready,
	 * until a claim or the sweep takes it.  Without such jobs the
	 * cancel stays one round trip, its COMMIT included. */
	buf_init(&waited);
	ended_waited_for(h, nheld, settle, &waited);
	buf_init(&sql);
	cancel_sql(db, &sql, h, nheld, by, settle, a, waited.len > 0);
	rc = db_exec_buf(db, &sql, err);
	buf_free(&sql);
	if (rc == DB_OK && waited.len > 0 && (rc = final_cascade(db, by, 0, waited.data, ends, err)) == DB_OK)
		rc = db_commit(db, err);
	buf_free(&waited);
	if (rc != DB_OK) {
		db_rollback(db);
		goto out;
	}
	*down = ends[0] + ends[1];
	for (k = 0; k < nheld; k++)
		for (i = 0; i < n; i++)
			if (ids[i] == h[k].id)
				st[i] = ends_now(&h[k], settle) ? CANCEL_DONE : CANCEL_REQUESTED;
out:
	free(h);
	return rc;
}

/* Cancels the jobs ids[0..n) on behalf of by in one transaction, rerun on
 * a deadlock: st[i] says whether job ids[i] is cancelled now, requested of
 * the worker that holds it, or neither (it had ended: cancel_ended says
 * how).  a: the audit rows (a[0] for a job cancelled now, a[1] for one
 * asked of its worker), committed with the cancel; NULL: none.  A job
 * that had ended gets none.  With settle, only a job that carries a
 * request and no worker holds is ended, and nothing is asked.  down
 * (NULL: not asked) is added the jobs that waited for them and ended
 * with them, down the graph: jobs ids does not name. */
static int
cancel_many(struct db *db, const uint64_t *ids, size_t n, const char *by, int settle, const struct audit_entry *a,
    enum cancel_state *st, uint64_t *down, char *err)
{
	uint64_t ended_down;
	int rc, attempt = 0;

	do
		rc = cancel_try(db, ids, n, by, settle, a, st, &ended_down, err);
	while (rc != DB_OK && db_retry_after(rc, ++attempt));
	if (rc == DB_OK && down != NULL)
		*down += ended_down;
	return rc;
}

int
queue_cancel_many(struct db *db, const uint64_t *ids, size_t n, const char *by, const struct audit_entry *a,
    enum cancel_state *st, uint64_t *down, char *err)
{
	return cancel_many(db, ids, n, by, 0, a, st, down, err);
}

/* Cancels job id on behalf of by, in one transaction: *st says whether it
 * is cancelled now, requested of the worker that holds it, or neither
 * (the caller asks cancel_ended which). */
int
queue_cancel(struct db *db, uint64_t id, const char *by, enum cancel_state *st, char *err)
{
	return cancel_many(db, &id, 1, by, 0, NULL, st, NULL, err);
}

/* queue_cancel, with the audit row of the one that happened of a[0..1]
 * (NULL: none) in the same transaction: the cancel and its row are
 * committed together or not at all.  A job that had ended gets none. */
int
queue_cancel_audited(
    struct db *db, uint64_t id, const char *by, const struct audit_entry *a, enum cancel_state *st, char *err)
{
	return cancel_many(db, &id, 1, by, 0, a, st, NULL, err);
}

/* How job id ended, when it is no longer in jobs: "dead" when the dead
 * letter holds it, else its last run's outcome (done, cancelled,
 * expired); *found 0 when neither knows it.  A job still in jobs is
 * "queued" (found). */
int
cancel_ended(struct db *db, uint64_t id, char *ended, size_t len, int *found, char *err)
{
	struct db_res *r;
	char **row;
	int rc;

	r = db_query(db, &rc, err,
	    "SELECT 'queued' FROM jobs WHERE id = %U UNION ALL SELECT 'dead' FROM failed_jobs WHERE id = %U"
	    " UNION ALL (SELECT outcome FROM job_runs WHERE job_id = %U AND " RUN_ENDS_JOB " ORDER BY id DESC LIMIT 1)",
	    id, id, id);
	if (r == NULL)
		return rc;
	row = db_res_next(r);
	*found = row != NULL;
	snprintf(ended, len, "%s", row != NULL && row[0] != NULL ? row[0] : "");
	db_res_free(r);
	return DB_OK;
}

/* Finalizes job id as cancelled if it carries a cancel request and no
 * worker holds it (its handler's retry reached the database before the
 * worker saw the request, or the worker is gone): what `jobq cancel`
 * does while it waits, so that the job ends at once rather than at the
 * next sweep.  *settled says whether it did. */
int
cancel_settle(struct db *db, uint64_t id, const char *by, int *settled, char *err)
{
	enum cancel_state st;
	int rc = cancel_many(db, &id, 1, by, 1, NULL, &st, NULL, err);

	*settled = rc == DB_OK && st == CANCEL_DONE;
	return rc;
}
