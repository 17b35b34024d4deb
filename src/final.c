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

/* One round of a sweep, inside its transaction: locks the rows of jobs
 * no worker holds that where (SQL) picks, up to max, and finalizes them
 * with the release of the jobs that wait for them (deps.c) and the
 * counts of their groups (groups.c); ends[0] and ends[1] count those
 * that ended expired and cancelled, *k all of them, and next gets the
 * ids of those that had waiters (comma-separated; empty: none).  With
 * skip_locked, rows a claim has locked are passed over (the claim will
 * finalize them itself). */
static int
sweep_round(struct db *db, const char *by, int skip_locked, const char *where, unsigned max, uint64_t ends[2],
    uint64_t *k, struct buf *next, char *err)
{
	struct db_res *r;
	struct buf sql, cond, ended;
	char **row;
	uint64_t n = 0;
	int rc;

	r = db_query(db, &rc, err,
	    "SELECT id, cancel_by IS NULL, has_waiters, waiting_on > 0 OR wait_until IS NOT NULL, group_id FROM jobs"
	    " WHERE %s AND NOT (" IS_RESERVED ") ORDER BY expires_at LIMIT %u FOR UPDATE%s",
	    where, max, skip_locked ? " SKIP LOCKED" : "");
	if (r == NULL)
		return rc;
	buf_init(&cond);
	buf_init(&ended);
	buf_adds(&cond, "NOT (" IS_RESERVED ") AND id IN (");
	/* The rows are locked and none is reserved: every one of them ends
	 * here, and the jobs that wait for it learn how, in this
	 * transaction. */
	while ((row = db_res_next(r)) != NULL) {
		uint64_t id = db_col_u64(row[0], 0);
		const char *how = row[1] != NULL && row[1][0] == '1' ? "expired" : "cancelled";
		int waiters = row[2] != NULL && row[2][0] != '0';

		buf_printf(&cond, "%s%llu", n++ ? "," : "", (unsigned long long)id);
		if (waiters)
			buf_printf(next, "%s%llu", next->len ? "," : "", (unsigned long long)id);
		ends[how[0] == 'c']++;
		/* The rows are locked: no waiter can be added meanwhile. */
		deps_ended_sql(db, &ended, id, how, "1 = 1",
		    (waiters ? DEPS_WAITERS : 0) | (row[3] != NULL && row[3][0] != '0' ? DEPS_OWN : 0));
		if (row[4] != NULL) /* its group counts it (groups.c) */
			groups_ended_sql(db, &ended, row[4], how, "1 = 1");
	}
	buf_adds(&cond, ")");
	db_res_free(r);
	*k += n;
	if (n > 0) {
		buf_init(&sql);
		final_sql(db, &sql, by, cond.data);
		buf_add(&sql, ended.data, ended.len);
		rc = db_exec_buf(db, &sql, err);
		buf_free(&sql);
	}
	buf_free(&cond);
	buf_free(&ended);
	return rc;
}

/* final_cascade's rounds, one level of the graph each, from the jobs in
 * next (emptied) until a level ends none or *k reaches FINAL_SWEEP_MAX. */
static int
cascade_rounds(struct db *db, const char *by, int skip_locked, struct buf *next, uint64_t ends[2], uint64_t *k,
    char *err)
{
	struct buf where;
	int rc = DB_OK;

	buf_init(&where);
	while (rc == DB_OK && next->len > 0 && *k < FINAL_SWEEP_MAX) {
		buf_reset(&where);
		buf_printf(&where,
		    "expires_at <= UTC_TIMESTAMP(6) AND cancel_by IS NOT NULL"
		    " AND id IN (SELECT job_id FROM jobq_deps WHERE after_id IN (%s))",
		    next->data);
		buf_reset(next);
		rc = sweep_round(db, by, skip_locked, where.data, (unsigned)(FINAL_SWEEP_MAX - *k), ends, k, next, err);
	}
	buf_reset(next);
	buf_free(&where);
	return rc;
}

/* Inside an open transaction that has just ended the jobs in ids
 * (comma-separated; empty: none) and passed their ends on to the jobs
 * that wait for them: finalizes those of the waiters that their end
 * marked for cancelling (a dependency that ended dead, cancelled or
 * expired, deps.c), and theirs in turn, down the graph, up to
 * FINAL_SWEEP_MAX jobs; n[0] and n[1] get how many ended expired and
 * cancelled.  So a cancel or a sweep leaves no job of the graph marked
 * and due, which `jobq status` would count ready until a claim or the
 * next sweep took it.  Served by jobq_deps's primary key and jobs'
 * own. */
int
final_cascade(struct db *db, const char *by, int skip_locked, const char *ids, uint64_t n[2], char *err)
{
	struct buf next;
	uint64_t k = 0;
	int rc;

	n[0] = n[1] = 0;
	buf_init(&next);
	buf_adds(&next, ids);
	rc = cascade_rounds(db, by, skip_locked, &next, n, &k, err);
	buf_free(&next);
	return rc;
}

/* Finalizes up to FINAL_SWEEP_MAX jobs no worker holds whose expiry has
 * passed (a cancel request sets it too: see cancel.c), oldest expiry
 * first, and those their ends cancel down the graph (final_cascade), in
 * one transaction with the release of the jobs that wait for them
 * (deps.c) and the counts of their groups (groups.c); n[0] gets how
 * many ended expired, n[1] how many cancelled.  Served by jobs_expiry:
 * it reads the expired rows only, however many jobs wait.  With
 * skip_locked, rows a claim has locked are passed over (the claim will
 * finalize them itself).  only_id (not 0) looks at that job alone (and
 * what its end cancels). */
int
final_sweep(struct db *db, const char *by, int skip_locked, uint64_t only_id, uint64_t n[2], char *err)
{
	struct buf where, next;
	uint64_t k = 0, ends[2] = { 0, 0 };
	int rc;

	n[0] = n[1] = 0;
	if ((rc = db_begin(db, err)) != DB_OK)
		return rc;
	buf_init(&where);
	buf_init(&next);
	buf_adds(&where, "expires_at <= UTC_TIMESTAMP(6)");
	if (only_id != 0)
		buf_printf(&where, " AND id = %llu", (unsigned long long)only_id);
	rc = sweep_round(db, by, skip_locked, where.data, FINAL_SWEEP_MAX, ends, &k, &next, err);
	if (rc == DB_OK)
		rc = cascade_rounds(db, by, skip_locked, &next, ends, &k, err);
	if (rc == DB_OK && k > 0)
		rc = db_commit(db, err);
	if (rc != DB_OK || k == 0)
		db_rollback(db);
	if (rc == DB_OK)
		n[0] = ends[0], n[1] = ends[1];
	buf_free(&where);
	buf_free(&next);
	return rc;
}
