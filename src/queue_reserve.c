/* queue_reserve.c -- reserve jobs race-free.
 *
 * The rules every function of the reservation keeps (DESIGN.md section
 * 5), here and in the files below it (queue_reserve_int.h lists them):
 *  - every state change of a job is one transaction or one conditional
 *    statement, so a crash at any point leaves the job in exactly one
 *    table, in one state;
 *  - every outcome write and lease extension is conditional on the lease
 *    token the reservation stamped (fencing): a worker that lost its lease
 *    changes nothing and is told so (QUEUE_LOST);
 *  - all times are the database's (UTC_TIMESTAMP(6)); the worker only
 *    sends durations;
 *  - deadlocks and lock wait timeouts rerun the whole transaction.
 *
 * How reservation stays cheap with a large backlog: due_at is
 * COALESCE(lease_expires_at, available_at), so a delayed, backing-off or
 * reserved row is simply one whose due_at lies ahead.  Two indexes keep
 * the due rows apart from the rest: jobs_due (queue, due_at, priority)
 * tells which priorities of a queue have due rows (see queue_due.c),
 * and jobs_reserve (queue, priority, due_at) serves the claim, which
 * reads the due rows of those priorities only, in the order it takes
 * them, and stops after LIMIT rows.  No row
 * that is not due is ever read (a backlog costs at most one index dive
 * per priority group), so a claim costs O(batch) rows whatever the table
 * holds, and an idle poll one index dive per queue whatever the number
 * of priorities.
 *
 * Rows written by other programs (plain INSERTs are a documented way to
 * enqueue) may hold any value the schema allows: the claim's arithmetic
 * saturates, every column is read NULL-safe, and job_defect()
 * (queue_claim.c) names what makes a job unfit to run so the worker
 * dead-letters it. */
#include "config.h"

#include <limits.h>
#include <mysqld_error.h>
#include <string.h>

#include "flow.h"
#include "queue_reserve_int.h"

/* Finds out, by trying, whether the server knows SKIP LOCKED. */
int
queue_probe(struct db *db, enum reserve_mode *mode, char *err)
{
	struct db_res *r;
	int rc;

	if ((rc = db_begin(db, err)) != DB_OK)
		return rc;
	r = db_query(db, &rc, err, "SELECT id FROM jobs WHERE id = 0 FOR UPDATE SKIP LOCKED");
	if (r != NULL) {
		db_res_free(r);
		*mode = RESERVE_SKIP_LOCKED;
	} else if (db_errno(db) == ER_PARSE_ERROR || db_errno(db) == ER_NOT_SUPPORTED_YET) {
		*mode = RESERVE_UPDATE;
		rc = DB_OK;
	}
	db_rollback(db);
	return rc;
}

/* Reserves up to req->limit due jobs, draining req->queues in order,
 * then by priority (smaller first), then oldest due first.  Each job's
 * attempt is the row's count plus one and it carries a fresh lease
 * token; the row counts that attempt (saturating at the column's
 * maximum, job.charged) for the first req->charge jobs, in either mode;
 * the others are charged when they start.  *jobs is a new array (free
 * each with job_free, then the array). */
int
queue_reserve(struct db *db, const struct reserve_req *req, struct job ***jobs, size_t *n, char *err)
{
	unsigned scan = req->limit + DUE_SLACK;
	struct claim cl;
	struct due *due;
	struct buf prio;
	size_t qi;
	int rc;

	*jobs = xcalloc(req->limit + 1, sizeof **jobs);
	*n = 0;
	if ((rc = queue_due_scan(db, req->queues, req->limit, &due, err)) != DB_OK)
		return rc;
	buf_init(&prio);
	memset(&cl, 0, sizeof cl);
	cl.req = req;
	cl.charge = req->charge;
	cl.jobs = xcalloc(req->limit + 1, sizeof *cl.jobs);
	for (qi = 0; req->queues[qi] != NULL && *n < req->limit; qi++) {
		if (due[qi].n == 0)
			continue;
		/* Under flow limits the types are claimed apart: a backlog of a
		 * limited type must not hide the other types' priorities, so
		 * every due priority is walked. */
		if (req->flow != NULL && flow_governed(req->flow, req->queues[qi]) && due[qi].rows >= scan)
			rc = queue_due_walk(db, req->queues[qi], INT_MAX, &due[qi], err);
		else
			rc = queue_due_complete(db, req->queues[qi], scan, &due[qi], err);
		if (rc != DB_OK)
			break;
		if (due[qi].n == 0)
			continue;
		queue_due_list(&due[qi], &prio);
		cl.queue = req->queues[qi];
		cl.priorities = prio.data;
		if ((rc = queue_limits_claim(db, &cl, *jobs, n, err)) != DB_OK)
			break;
	}
	free(cl.jobs);
	buf_free(&prio);
	queue_due_free(due, strv_len(req->queues));
	/* Jobs already claimed stay claimed even if a later queue failed:
	 * the caller runs them and reports the error. */
	return *n > 0 ? DB_OK : rc;
}
