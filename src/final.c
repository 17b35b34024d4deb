/* final.c -- jobs that end without a handler's word (final.h).
 *
 * A row of jobs that carries a cancel request (cancel_by) ends as
 * cancelled, any other as expired.  Either way it leaves jobs in the
 * transaction that writes its one run row, like a done job: the run keeps
 * who or what ended it, when, the payload (up to 64 KiB) and the trace id,
 * so `jobq show` and the job page show a finished job, and dependents and
 * callbacks see a final state. */
#include "config.h"

#include <stdio.h>

#include "deps.h"
#include "final.h"
#include "groups.h"
#include "queue_states.h"

/* Appends the two statements that finalize every row of jobs cond (SQL)
 * matches: one run row each, then the rows leave jobs.  by is who or
 * what ends them (the run's worker column).  A row still stamped by a
 * reservation whose lease lapsed (its worker died: the stale state) had
 * a worker that may have started its handler, which wrote no run row:
 * its run row says "worker lost", and names that worker and when it
 * reserved the job, rather than "not started".  The caller locks the rows
 * first in the same transaction (a locking read, or an UPDATE), so that
 * both statements see the same rows. */
void
final_sql(struct db *db, struct buf *sql, const char *by, const char *cond)
{
	db_sql(db, sql,
	    "INSERT INTO job_runs (job_id, queue, type, attempt, worker, started_at, duration_ms, outcome,"
	    " exit_status, error, enqueued_at, payload, trace_id)"
	    " SELECT id, queue, type, attempts, %q, UTC_TIMESTAMP(6), 0,"
	    " IF(cancel_by IS NULL, 'expired', 'cancelled'),"
	    " IF(reserved_at IS NULL, 'not started', 'worker lost'),"
	    " CONCAT(IF(cancel_by IS NULL, CONCAT('expired: ', IF(reserved_at IS NULL, 'not started by ',"
	    " 'not started again by '), LEFT(expires_at, 19), ' UTC'),"
	    " CONCAT('cancelled by ', " CANCEL_WHO ")),"
	    " IF(reserved_at IS NULL, '', CONCAT('; its worker ', COALESCE(reserved_by, '?'),"
	    " ', which reserved it at ', LEFT(reserved_at, 19), ' UTC, ended without an outcome"
	    " (its lease lapsed at ', COALESCE(LEFT(lease_expires_at, 19), '?'), ' UTC)'))),"
	    " created_at, IF(LENGTH(payload) <= 65536, payload, NULL), SUBSTRING(traceparent, 4, 32)"
	    " FROM jobs WHERE ",
	    by);
	buf_adds(sql, cond);
	buf_adds(sql, ";DELETE FROM jobs WHERE ");
	buf_adds(sql, cond);
	buf_adds(sql, ";");
}

/* Finalizes up to FINAL_SWEEP_MAX jobs no worker holds whose expiry has
 * passed (a cancel request sets it too: see cancel.c), oldest expiry
 * first, in one transaction with the release of the jobs that wait for
 * them (deps.c) and the counts of their groups (groups.c); n[0] gets how
 * many ended expired, n[1] how many cancelled.  Served by jobs_expiry:
 * it reads the expired rows only, however many jobs wait.  With
 * skip_locked, rows a claim has locked are passed over (the claim will
 * finalize them itself).  only_id (not 0) looks at that job alone. */
int
final_sweep(struct db *db, const char *by, int skip_locked, uint64_t only_id, uint64_t n[2], char *err)
{
	struct db_res *r;
	struct buf sql, cond, ended;
	char **row, one[40] = "";
	uint64_t k = 0, ends[2] = { 0, 0 };
	int rc;

	n[0] = n[1] = 0;
	if (only_id != 0)
		snprintf(one, sizeof one, " AND id = %llu", (unsigned long long)only_id);
	if ((rc = db_begin(db, err)) != DB_OK)
		return rc;
	r = db_query(db, &rc, err,
	    "SELECT id, cancel_by IS NULL, has_waiters, waiting_on > 0 OR wait_until IS NOT NULL, group_id FROM jobs WHERE expires_at <= UTC_TIMESTAMP(6) AND NOT "
	    "(" IS_RESERVED ")%s"
	    " ORDER BY expires_at LIMIT %u FOR UPDATE%s",
	    one, FINAL_SWEEP_MAX, skip_locked ? " SKIP LOCKED" : "");
	if (r == NULL) {
		db_rollback(db);
		return rc;
	}
	buf_init(&cond);
	buf_init(&ended);
	buf_adds(&cond, "NOT (" IS_RESERVED ") AND id IN (");
	/* The rows are locked and none is reserved: every one of them ends
	 * here, and the jobs that wait for it learn how, in this
	 * transaction. */
	while ((row = db_res_next(r)) != NULL) {
		uint64_t id = db_col_u64(row[0], 0);
		const char *how = row[1] != NULL && row[1][0] == '1' ? "expired" : "cancelled";

		buf_printf(&cond, "%s%llu", k++ ? "," : "", (unsigned long long)id);
		ends[how[0] == 'c']++;
		/* The rows are locked: no waiter can be added meanwhile. */
		deps_ended_sql(db, &ended, id, how, "1 = 1",
		    (row[2] != NULL && row[2][0] != '0' ? DEPS_WAITERS : 0) |
		        (row[3] != NULL && row[3][0] != '0' ? DEPS_OWN : 0));
		if (row[4] != NULL) /* its group counts it (groups.c) */
			groups_ended_sql(db, &ended, row[4], how, "1 = 1");
	}
	buf_adds(&cond, ")");
	db_res_free(r);
	if (k == 0) {
		buf_free(&cond);
		buf_free(&ended);
		db_rollback(db);
		return DB_OK;
	}
	buf_init(&sql);
	final_sql(db, &sql, by, cond.data);
	buf_add(&sql, ended.data, ended.len);
	buf_adds(&sql, "COMMIT");
	rc = db_exec_buf(db, &sql, err);
	if (rc != DB_OK)
		db_rollback(db);
	else
		n[0] = ends[0], n[1] = ends[1];
	buf_free(&sql);
	buf_free(&cond);
	buf_free(&ended);
	return rc;
}
