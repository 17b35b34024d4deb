/* queue_outcome.c -- write what became of reserved jobs, and extend
 * their leases.  Every statement here is fenced by the lease token the
 * reservation stamped (see queue_reserve.c for the rules): a worker that
 * lost its lease changes nothing and is told so. */
#include "config.h"

#include <mysqld_error.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "queue.h"

/* Appends the run-history row of o; its outcome is the one intended
 * when the fenced statement just before it changed a row, else "lost"
 * (ROW_COUNT() is that statement's count). */
static void
run_sql(struct db *db, struct buf *sql, const struct outcome *o)
{
	const struct job *j = o->job;
	const struct run_record *run = o->run;

	db_sql(db, sql,
	    "INSERT INTO job_runs (job_id, queue, type, attempt, worker, started_at, duration_ms, outcome,"
	    " exit_status, output, error) VALUES (%U, %q, %q, %u, %q, %q, %I, IF(ROW_COUNT() > 0, %q, "
	    "'lost'),"
	    " %q, %q, %q);",
	    j->id, j->queue, j->type, j->attempt, run->worker, j->reserved_at, run->duration_ms,
	    queue_outcome_name(o->kind), run->exit_status, run->output, run->error);
}

const char *
queue_outcome_name(enum outcome_write k)
{
	static const char *const names[] = { "done", "retry", "dead", "interrupted" };

	return names[k];
}

/* Appends the fenced statements of one outcome; returns how many there
 * are before the run row (the last of them decides "lost"). */
static int
outcome_sql(struct db *db, struct buf *sql, const struct outcome *o)
{
	const struct job *j = o->job;

	switch (o->kind) {
	case OUT_DONE:
		db_sql(db, sql, "DELETE FROM jobs WHERE id = %U AND lease_token = %q;", j->id, j->token);
		return 1;
	case OUT_RETRY:
		db_sql(db, sql,
		    "UPDATE jobs SET available_at = UTC_TIMESTAMP(6) + INTERVAL %I MICROSECOND, last_error = "
		    "%q,"
		    " reserved_at = NULL, reserved_by = NULL, lease_token = NULL, lease_expires_at = NULL"
		    " WHERE id = %U AND lease_token = %q;",
		    o->delay_ms * 1000, o->last_error, j->id, j->token);
		return 1;
	case OUT_DEAD:
		/* Copy, then delete under the same fence: both change a row or
		 * neither does. */
		db_sql(db, sql,
		    "INSERT INTO failed_jobs (id, queue, type, payload, priority, attempts, max_attempts, "
		    "exception,"
		    " exit_status, reason, created_at, failed_at)"
		    " SELECT id, queue, type, payload, priority, attempts, max_attempts, %q, %q, %q, "
		    "created_at,"
		    " UTC_TIMESTAMP(6) FROM jobs WHERE id = %U AND lease_token = %q;"
		    "DELETE FROM jobs WHERE id = %U AND lease_token = %q;",
		    o->exception, o->exit_status, o->reason, j->id, j->token, j->id, j->token);
		return 2;
	default:
		/* Interrupted by the operator (second SIGTERM) or never
		 * started: back to the queue, due now, attempt refunded. */
		db_sql(db, sql,
		    "UPDATE jobs SET attempts = IF(attempts > 0, attempts - 1, 0), available_at = "
		    "UTC_TIMESTAMP(6),"
		    " reserved_at = NULL, reserved_by = NULL, lease_token = NULL, lease_expires_at = NULL"
		    " WHERE id = %U AND lease_token = %q;",
		    j->id, j->token);
		return 1;
	}
}

/* Writes n outcomes in one transaction, sent in one round trip.  Each
 * is fenced by its job's lease token: o[i].lost tells which found the
 * job no longer theirs (those changed nothing but their run row).  The
 * whole transaction reruns on deadlock; on any error nothing was
 * written. */
int
queue_write(struct db *db, struct outcome *o, size_t n, char *err)
{
	struct buf sql;
	size_t *fence = xcalloc(n + 1, sizeof *fence), nstmt = 1, i;
	uint64_t *affected;
	int rc;

	buf_init(&sql);
	buf_adds(&sql, "START TRANSACTION;");
	for (i = 0; i < n; i++) {
		nstmt += (size_t)outcome_sql(db, &sql, &o[i]);
		fence[i] = nstmt - 1;
		if (o[i].run != NULL) {
			run_sql(db, &sql, &o[i]);
			nstmt++;
		}
	}
	buf_adds(&sql, "COMMIT");
	nstmt++;
	affected = xcalloc(nstmt, sizeof *affected);
	rc = db_exec_retry(db, &sql, affected, nstmt, err);
	for (i = 0; rc == DB_OK && i < n; i++)
		o[i].lost = affected[fence[i]] == 0;
	free(affected);
	free(fence);
	buf_free(&sql);
	return rc;
}

/* Heartbeat: the leases of jobs[0..n) run ttl_ms from now, those that
 * are still ours; lost[i] says which are not.  One round trip, one
 * statement per job, each committed on its own: when one fails (its row
 * locked elsewhere past the wait limit) those before it stand, lost[i]
 * saying which, and those from it on are not run: lost[i] = -1. */
int
queue_extend(struct db *db, struct job *const *jobs, size_t n, int64_t ttl_ms, int *lost, char *err)
{
	struct buf sql;
	uint64_t *affected = xcalloc(n + 1, sizeof *affected);
	size_t i;
	int rc;

	buf_init(&sql);
	for (i = 0; i < n; i++)
		db_sql(db, &sql,
		    "%sUPDATE jobs SET lease_expires_at = UTC_TIMESTAMP(6) + INTERVAL %I MICROSECOND"
		    " WHERE id = %U AND lease_token = %q",
		    i ? ";" : "", ttl_ms * 1000, jobs[i]->id, jobs[i]->token);
	rc = n > 0 ? db_exec_many(db, &sql, affected, n, err) : DB_OK;
	for (i = 0; i < n; i++)
		lost[i] = rc != DB_OK && i >= db_statements_done(db) ? -1 : affected[i] == 0;
	free(affected);
	buf_free(&sql);
	return rc;
}
