/* cancel.c -- cancelling one job (cancel.h).
 *
 * A job no worker holds (ready, delayed, stale) is finalized at once as
 * cancelled (final.c).  One under a live lease gets a request instead:
 * cancel_by and cancel_at say who asked and when, and its worker, which
 * looks for requests on the jobs it holds twice a second, stops the
 * handler's process group (SIGTERM, SIGKILL after kill_grace) and writes
 * the cancelled outcome under its lease.  The request also moves the
 * job's expiry to now: should the job come back to the queue uncancelled
 * (its handler's outcome was a retry written just before the worker saw
 * the request, or the worker died), the next claim or the expiry sweep
 * finalizes it, as cancelled since it carries the request.  A job whose
 * handler's outcome reached the database first stays as that outcome
 * ended it (done or dead): that run says so. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "audit.h"
#include "cancel.h"
#include "deps.h"
#include "final.h"
#include "groups.h"
#include "park.h"
#include "queue.h"
#include "queue_states.h"

/* Runs "START TRANSACTION; pre (one statement, locking job id's row);
 * the job's group; the finalizing statements of final_sql where cond
 * (which matches job id or nothing); the release of the jobs that wait
 * for job id (deps.c) and its group's count (groups.c), iff it was
 * finalized; also (statements, each ending in ';'; NULL: none); COMMIT"
 * as one transaction, rerun on a deadlock; *deleted
 * gets the rows finalized, *pre_rows the rows pre changed.  The group is
 * read once pre holds the row: a SELECT inside SET is a locking read,
 * and would otherwise wait on a worker's lock before pre does. */
static int
final_tx(struct db *db, uint64_t id, const char *by, const char *pre, const char *cond, const char *also,
    uint64_t *pre_rows, uint64_t *deleted, char *err)
{
	struct buf sql;
	uint64_t affected[24] = { 0 };
	int rc;

	buf_init(&sql);
	buf_adds(&sql, "START TRANSACTION;");
	buf_adds(&sql, pre);
	buf_adds(&sql, ";");
	db_sql(db, &sql, "SET @jobq_group = (SELECT group_id FROM jobs WHERE id = %U);", id);
	final_sql(db, &sql, by, cond);
	buf_adds(&sql, "SET @jobq_fence = ROW_COUNT();");
	/* A person's cancel is final: no retry of a dead dependency
	 * re-opens the job (park.c), finalized now or by its worker; and so
	 * its end parks none of the jobs that wait for it. */
	park_unpark_sql(db, &sql, id);
	deps_ended_sql(db, &sql, id, "cancelled", "@jobq_fence > 0", DEPS_ALL);
	groups_ended_sql(db, &sql, "@jobq_group", "cancelled", "@jobq_fence > 0 AND @jobq_group IS NOT NULL");
	if (also != NULL)
		buf_adds(&sql, also);
	buf_adds(&sql, "COMMIT");
	rc = db_exec_retry(db, &sql, affected, ARRAY_LEN(affected), err);
	buf_free(&sql);
	*pre_rows = affected[1];
	*deleted = affected[4];
	return rc;
}

/* Cancels job id on behalf of by, in one transaction: *st says whether it
 * is cancelled now, requested of the worker that holds it, or neither
 * (the caller asks cancel_ended which). */
int
queue_cancel(struct db *db, uint64_t id, const char *by, enum cancel_state *st, char *err)
{
	return queue_cancel_audited(db, id, by, NULL, st, err);
}

/* The audit rows of a cancel (a[0] when the job is cancelled now, a[1]
 * when its worker is asked to), as statements final_tx runs after the
 * cancel: @jobq_fence says whether it finalized the job, and a job it
 * did not that is still in jobs (its row locked since pre) was asked. */
static void
audit_rows_sql(struct db *db, struct buf *also, uint64_t id, const struct audit_entry *a)
{
	char job[24], cond[96];

	snprintf(job, sizeof job, "%llu", (unsigned long long)id);
	audit_sql_when(db, also, &a[0], job, "@jobq_fence > 0");
	buf_adds(also, ";");
	snprintf(cond, sizeof cond, "@jobq_fence = 0 AND EXISTS (SELECT 1 FROM jobs WHERE id = %s)", job);
	audit_sql_when(db, also, &a[1], job, cond);
	buf_adds(also, ";");
}

/* queue_cancel, with the audit row of the one that happened of a[0..1]
 * (NULL: none) in the same transaction: the cancel and its row are
 * committed together or not at all.  A job that had ended gets none. */
int
queue_cancel_audited(
    struct db *db, uint64_t id, const char *by, const struct audit_entry *a, enum cancel_state *st, char *err)
{
	struct buf pre, cond, also;
	uint64_t found, deleted;
	int rc;

	buf_init(&pre);
	buf_init(&cond);
	buf_init(&also);
	/* A second request of a job its worker is stopping keeps the first
	 * one's who and when: that is the request the run will name.  The
	 * row still counts as found (CLIENT_FOUND_ROWS). */
	db_sql(db, &pre,
	    "UPDATE jobs SET cancel_by = COALESCE(cancel_by, %q), cancel_at = COALESCE(cancel_at, UTC_TIMESTAMP(6)),"
	    " expires_at = LEAST(COALESCE(expires_at, UTC_TIMESTAMP(6)), UTC_TIMESTAMP(6)) WHERE id = %U",
	    by, id);
	db_sql(db, &cond, "id = %U AND NOT (" IS_RESERVED ")", id);
	if (a != NULL)
		audit_rows_sql(db, &also, id, a);
	rc = final_tx(db, id, by, pre.data, cond.data, a != NULL ? also.data : NULL, &found, &deleted, err);
	buf_free(&pre);
	buf_free(&cond);
	buf_free(&also);
	if (rc == DB_OK)
		*st = found == 0 ? CANCEL_ENDED : deleted == 1 ? CANCEL_DONE : CANCEL_REQUESTED;
	return rc;
}

/* queue_cancel as a bulk action (bulk.c), with the audit row a (NULL:
 * none; cancelled now or requested alike) in the cancel's transaction:
 * DB_OK when cancelled or requested, QUEUE_NOT_FOUND when the job had
 * left the queue. */
int
queue_cancel_act(struct db *db, uint64_t id, const char *by, const struct audit_entry *a, char *err)
{
	enum cancel_state st;
	int rc = queue_cancel_audited(
	    db, id, by, a != NULL ? (const struct audit_entry[2]){ *a, *a } : NULL, &st, err);

	if (rc == DB_OK && st == CANCEL_ENDED) {
		snprintf(err, ERRSZ, "job %llu had ended", (unsigned long long)id);
		return QUEUE_NOT_FOUND;
	}
	return rc;
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
	struct buf pre, cond;
	uint64_t locked, deleted;
	int rc;

	buf_init(&pre);
	buf_init(&cond);
	db_sql(db, &pre, "SELECT 1 FROM jobs WHERE id = %U FOR UPDATE", id);
	db_sql(db, &cond, "id = %U AND cancel_by IS NOT NULL AND NOT (" IS_RESERVED ")", id);
	rc = final_tx(db, id, by, pre.data, cond.data, NULL, &locked, &deleted, err);
	buf_free(&pre);
	buf_free(&cond);
	*settled = rc == DB_OK && deleted > 0;
	return rc;
}
