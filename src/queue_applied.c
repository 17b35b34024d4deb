/* queue_applied.c -- whether an outcome whose answer never came was
 * applied.
 *
 * The connection can drop after the server applied an outcome's
 * transaction and before its answer arrives.  Written again, the
 * outcome's fence would no longer match and it would be taken for lost:
 * a second run row, on_dead never run, the counts wrong.  So an outcome
 * sent on a connection that dropped is looked up first (queue_write). */
#include "config.h"

#include <string.h>

#include "queue.h"

/* After a "lost" run row of o's try: OUTS_LOST, unless the lease is
 * still ours, when the fence failed on has_waiters alone and o is to be
 * written in full (gained_waiter, state left OUTS_PENDING).  Read apart
 * from the run row, and only then: the jobs table may be locked where
 * job_runs is not, and the common answer must not wait on it. */
static int
lost_or_gained(struct db *db, struct outcome *o, char *err)
{
	struct db_res *r;
	int rc;

	r = db_query(db, &rc, err, "SELECT 1 FROM jobs WHERE id = %U AND lease_token = %q", o->job->id,
	    o->job->token);
	if (r == NULL)
		return rc;
	o->gained_waiter = db_res_next(r) != NULL;
	if (!o->gained_waiter)
		o->state = OUTS_LOST;
	db_res_free(r);
	return DB_OK;
}

/* Whether o, whose earlier try's answer never came (the connection
 * dropped with the transaction sent), was applied by that try: then its
 * state becomes what that try did (OUTS_WRITTEN, or OUTS_LOST if its
 * fence had failed) and it is not written again, so its side effects
 * (on_dead, the counts, the run row) happen once; it stays
 * OUTS_PENDING when it was not applied.  The run row of that try tells
 * (one per run: job, attempt, worker and start time): "lost" with the
 * lease still ours says the fence failed on has_waiters alone (a lean
 * outcome of a job that gained a waiter, piece_sql), so the outcome is
 * still to be written, in full (gained_waiter); an outcome
 * without a run is told by the job's row: still under our lease, not
 * applied; a dead-letter is applied if failed_jobs has the job since
 * its reservation; a job given back is applied either way. */
static int
applied_read(struct db *db, struct outcome *o, char *err)
{
	const struct job *j = o->job;
	struct db_res *r;
	char **row;
	int rc;

	if (o->run != NULL)
		r = db_query(db, &rc, err,
		    "SELECT outcome FROM job_runs WHERE job_id = %U AND attempt = %u AND worker = %q"
		    " AND started_at = %q",
		    j->id, queue_run_attempt(o), o->run->worker, j->reserved_at);
	else
		r = db_query(db, &rc, err,
		    "SELECT IF(lease_token = %q, 'ours', 'gone') FROM jobs WHERE id = %U UNION ALL"
		    " SELECT 'dead' FROM failed_jobs WHERE id = %U AND failed_at >= %q",
		    j->token, j->id, j->id, j->reserved_at);
	if (r == NULL)
		return rc;
	row = db_res_next(r);
	if (o->run != NULL && row != NULL && row[0] != NULL && strcmp(row[0], "lost") == 0) {
		db_res_free(r);
		return lost_or_gained(db, o, err);
	}
	if (o->run != NULL && row != NULL)
		o->state = OUTS_WRITTEN;
	else if (o->run == NULL && (row == NULL || row[0] == NULL || strcmp(row[0], "ours") != 0))
		o->state = o->kind != OUT_DEAD || (row != NULL && row[0] != NULL && strcmp(row[0], "dead") == 0)
		    ? OUTS_WRITTEN
		    : OUTS_LOST;
	db_res_free(r);
	return DB_OK;
}

/* queue_outcome_applied: applied_read, once the session that sent the
 * earlier try has ended (db_lost_settle: its COMMIT may still be under
 * way), and on a Galera node read causally (wsrep_sync_wait), since the
 * worker may be back through another node, which has that commit but
 * may not have applied it yet.  Read otherwise, the outcome is taken for
 * not written, written again, and its fence fails: a "lease lost" run
 * beside the "done" one. */
int
queue_outcome_applied(struct db *db, struct outcome *o, char *err)
{
	char ignored[ERRSZ];
	int rc, back;

	if ((rc = db_lost_settle(db, 3000, err)) != DB_OK || (rc = db_causal(db, 1, err)) != DB_OK)
		return rc;
	rc = applied_read(db, o, err);
	if (rc == DB_EGONE)
		return rc;
	back = db_causal(db, 0, rc == DB_OK ? err : ignored);
	return rc != DB_OK ? rc : back;
}
