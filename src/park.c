/* park.c -- jobs a dead dependency cancelled, kept to re-open (park.h,
 * sql/024-parked.sql).
 *
 * A job of policy all whose dependency ends dead is marked for
 * cancelling (deps.c) and ends cancelled as before; in the transaction
 * that marks it, a copy of it and of the list of jobs it waits for is
 * parked under the dead job.  Its own end then parks, under it, the jobs
 * that wait for it, and so on down the graph: a parked job's "cancelled"
 * parks, another job's does not (that cancel was someone's will, or an
 * expiry, and nothing can undo it).
 *
 * The retry of the dead job (failed.c) re-opens what is parked under it
 * in its own transaction, one level of the graph after another, each job
 * weighed against how its dependencies stand now (ended.c): it waits
 * again for those still in jobs; a dependency in the dead letter keeps
 * it cancelled, parked under that one instead; one that ended cancelled
 * or expired keeps it cancelled for good.  So a retry undoes exactly the
 * cancels that death caused, once, whatever else ended meanwhile. */
#include "config.h"

#include <mysqld_error.h>
#include <stdlib.h>
#include <string.h>

#include "ended.h"
#include "park.h"
#include "queue_states.h"

/* The columns a parked job keeps (sql/024-parked.sql), in both tables.
 * Its due time is wait_until, or for a job that never waited (one
 * cancelled as it was enqueued, --after a job that had ended) its
 * available_at: a re-open must not start a job --delay'd before its
 * time, and a re-opened job has waited (deps.h: DEPS_OWN).  (A waiting
 * row plain SQL wrote without wait_until has no due time to keep: its
 * available_at is DEPS_NEVER.) */
#define COLS                                                                                     \
	"queue, type, payload, priority, max_attempts, created_at, unique_key, expires_at, traceparent," \
	" checkpoint, wait_until"
#define JCOLS                                                                                          \
	"j.queue, j.type, j.payload, j.priority, j.max_attempts, j.created_at, j.unique_key, j.expires_at," \
	" j.traceparent, j.checkpoint, COALESCE(j.wait_until, IF(j.waiting_on > 0, NULL, j.available_at))"

/* How deep a retry re-opens (levels of the graph): far beyond any graph
 * a person writes, and a bound on a transaction's work should a parked
 * row name itself through a chain written by hand. */
#define REOPEN_LEVELS 1000

/* Whether a dependency that ended as how parks the jobs it cancels:
 * dead always (a retry can bring it back), cancelled only when the
 * job was parked itself (the condition is SQL, checked as the statement
 * runs); NULL for an end that never parks. */
static const char *
parks_when(struct db *db, struct buf *tmp, uint64_t cause, const char *how)
{
	if (strcmp(how, "dead") == 0)
		return "1 = 1";
	if (strcmp(how, "cancelled") != 0)
		return NULL;
	db_sql(db, tmp, "EXISTS (SELECT 1 FROM jobq_parked p WHERE p.id = %U)", cause);
	return tmp->data;
}

/* Appends the statement that parks under cause the rows of jobs j that
 * from_where selects ("FROM jobs j ... WHERE ..."), while when holds. */
static void
copy_sql(struct db *db, struct buf *sql, uint64_t cause, const char *from_where, const char *when)
{
	db_sql(db, sql,
	    "INSERT INTO jobq_parked (id, parked_by, " COLS ") SELECT j.id, %U, " JCOLS " %s AND %s"
	    " ON DUPLICATE KEY UPDATE parked_by = VALUES(parked_by);",
	    cause, from_where, when);
}

/* Appends the statements that park the jobs of policy all waiting for
 * job id, not yet asked to cancel, now that it ended as how, and the
 * lists of what they wait for; each runs only while guard holds (see
 * deps_ended_sql, which calls this before it marks them).  Returns how
 * many statements (0: an end that never parks). */
size_t
park_waiters_sql(struct db *db, struct buf *sql, uint64_t id, const char *how, const char *guard)
{
	struct buf tmp, from;
	const char *when;

	buf_init(&tmp);
	if ((when = parks_when(db, &tmp, id, how)) == NULL) {
		buf_free(&tmp);
		return 0;
	}
	buf_init(&from);
	db_sql(db, &from,
	    "FROM jobs j JOIN jobq_deps d ON d.job_id = j.id WHERE d.after_id = %U AND %s AND j.waiting_on > 0"
	    " AND j.after_any = 0 AND j.cancel_by IS NULL",
	    id, guard);
	copy_sql(db, sql, id, from.data, when);
	db_sql(db, sql,
	    "INSERT INTO jobq_parked_deps (job_id, after_id) SELECT d.job_id, d.after_id FROM jobq_parked p"
	    " JOIN jobq_deps d ON d.job_id = p.id WHERE p.parked_by = %U AND %s"
	    " ON DUPLICATE KEY UPDATE job_id = VALUES(job_id);",
	    id, guard);
	buf_free(&tmp);
	buf_free(&from);
	return 2;
}

/* Appends the statements that park job id, just inserted and about to
 * be finalized because cause ended as how (enqueue --after a job that
 * already ended), with the n jobs it names.  A dead cause parks it only
 * while it is in the dead letter (the caller locked its row there,
 * ended.c): one forgotten, known by its last run alone, can never be
 * retried, and its cancels are final -- a copy parked under it would
 * promise a re-open that never comes, and keep both jobs' runs from
 * keep_done. */
void
park_job_sql(struct db *db, struct buf *sql, uint64_t id, uint64_t cause, const char *how, const uint64_t *deps,
    size_t n)
{
	struct buf tmp, from;
	const char *when;
	size_t i;

	buf_init(&tmp);
	if (strcmp(how, "dead") == 0)
		when = (db_sql(db, &tmp, "EXISTS (SELECT 1 FROM failed_jobs f WHERE f.id = %U)", cause), tmp.data);
	else
		when = parks_when(db, &tmp, cause, how);
	if (when == NULL || n == 0) {
		buf_free(&tmp);
		return;
	}
	buf_init(&from);
	db_sql(db, &from, "FROM jobs j WHERE j.id = %U", id);
	copy_sql(db, sql, cause, from.data, when);
	buf_adds(sql, "INSERT INTO jobq_parked_deps (job_id, after_id) SELECT p.id, d.a FROM jobq_parked p JOIN (");
	for (i = 0; i < n; i++)
		buf_printf(sql, "%sSELECT %llu AS a", i ? " UNION ALL " : "", (unsigned long long)deps[i]);
	db_sql(db, sql, ") d WHERE p.id = %U ON DUPLICATE KEY UPDATE job_id = VALUES(job_id);", id);
	buf_free(&tmp);
	buf_free(&from);
}

/* Appends the statements that drop the parked copies of the jobs ids
 * lists ("12,13": a person cancelled them, and that cancel is final). */
void
park_unpark_sql(struct db *db, struct buf *sql, const char *ids)
{
	db_sql(db, sql, "DELETE FROM jobq_parked WHERE id IN (%s);DELETE FROM jobq_parked_deps WHERE job_id IN (%s);",
	    ids, ids);
}

/* The ids r's first column holds, into a new array; *n gets how many. */
static uint64_t *
ids_of(struct db_res *r, size_t *n)
{
	uint64_t *v = xcalloc(db_res_rows(r) + 1, sizeof *v);
	char **row;

	*n = 0;
	while ((row = db_res_next(r)) != NULL)
		v[(*n)++] = db_col_u64(row[0], 0);
	db_res_free(r);
	return v;
}

/* Inside a transaction: drops what is parked under the n jobs of front,
 * and under those, down the graph (their cancels are final now).  With
 * self, the jobs of front are dropped too.
 *
 * The rows in jobs of the jobs of each level are locked before what is
 * parked under them is read: the end of such a job parks its waiters
 * under it when its copy is there as its statement starts (deps.c), and
 * holds its row meanwhile.  So that end either committed before, and
 * what it parked is read here and dropped, or it waits, and then finds
 * the copy gone.  Read unlocked, a job that ended between the read and
 * the commit left its waiters parked under a copy that is no more, their
 * re-open promised by `jobq show` to a retry that can never come. */
static int
drop_down(struct db *db, uint64_t *front, size_t n, int self, char *err)
{
	struct db_res *r;
	struct buf in;
	size_t level;
	int rc = DB_OK;

	front = memcpy(xcalloc(n + 1, sizeof *front), front, n * sizeof *front);
	for (level = 0; rc == DB_OK && n > 0 && level < REOPEN_LEVELS; level++) {
		uint64_t *next = NULL;
		size_t nn = 0;

		buf_init(&in);
		buf_add_ids(&in, front, n);
		if ((r = db_query(db, &rc, err, "SELECT id FROM jobs WHERE id IN (%s) ORDER BY id FOR UPDATE", in.data)) !=
		    NULL)
			db_res_free(r);
		r = rc != DB_OK ? NULL
		                : db_query(db, &rc, err, "SELECT id FROM jobq_parked WHERE parked_by IN (%s) FOR UPDATE",
		                      in.data);
		if (r != NULL)
			next = ids_of(r, &nn);
		if (rc == DB_OK && (self || level > 0))
			rc = db_exec(db, err, "DELETE FROM jobq_parked WHERE id IN (%s)", in.data);
		if (rc == DB_OK && (self || level > 0))
			rc = db_exec(db, err, "DELETE FROM jobq_parked_deps WHERE job_id IN (%s)", in.data);
		buf_free(&in);
		free(front);
		front = next;
		n = nn;
	}
	free(front);
	return rc;
}

/* Inside the transaction that forgets dead job id: what its death
 * parked stays cancelled for good. */
int
park_drop(struct db *db, uint64_t id, char *err)
{
	return drop_down(db, &id, 1, 0, err);
}

/* How job id, parked, stands against its dependencies now: into *dead
 * the first in the dead letter, into *final whether one ended cancelled
 * or expired, or dead and was forgotten from the dead letter since (no
 * retry can bring it back); *live gets those in jobs (locked), "1,2",
 * *nlive how many.
 * A job no table knows any more ended long ago: it counts as done. */
static int
weigh(struct db *db, uint64_t id, uint64_t *dead, int *final, struct buf *live, size_t *nlive, char *err)
{
	struct db_res *r;
	struct ended *k;
	char **row;
	size_t n = 0, i;
	int rc;

	*dead = 0;
	*final = 0;
	*nlive = 0;
	r = db_query(db, &rc, err, "SELECT after_id FROM jobq_parked_deps WHERE job_id = %U ORDER BY after_id", id);
	if (r == NULL)
		return rc;
	k = xcalloc(db_res_rows(r) + 1, sizeof *k);
	while ((row = db_res_next(r)) != NULL)
		k[n++].id = db_col_u64(row[0], 0);
	db_res_free(r);
	ended_sort(k, &n);
	rc = ended_lookup(db, k, n, err);
	for (i = 0; rc == DB_OK && i < n; i++) {
		if (!k[i].found)
			continue;
		if (k[i].how == NULL)
			buf_printf(live, "%s%llu", (*nlive)++ ? "," : "", (unsigned long long)k[i].id);
		else if (strcmp(k[i].how, "dead") == 0 && k[i].forgotten)
			*final = 1; /* never retried now: its cancel is final */
		else if (strcmp(k[i].how, "dead") == 0 && *dead == 0)
			*dead = k[i].id;
		else if (strcmp(k[i].how, "done") != 0 && strcmp(k[i].how, "dead") != 0)
			*final = 1;
	}
	free(k);
	return rc;
}

/* The available_at of a job re-opened with n jobs to wait for. */
static const char *
due_when(size_t n)
{
	return n > 0 ? DEPS_NEVER : "GREATEST(COALESCE(wait_until, UTC_TIMESTAMP(6)), UTC_TIMESTAMP(6))";
}

/* Inside the transaction that brings job id back from an end (a retry,
 * a re-open): the links to it of jobs of policy any that still wait
 * for others go.  Those jobs took its end off their counts already, and
 * its next end must not count for them again (deps.c counts every link
 * it finds), nor may a hand-off take it for its one waiter. */
int
park_drop_counted(struct db *db, uint64_t id, char *err)
{
	return db_exec(db, err,
	    "DELETE d FROM jobq_deps d JOIN jobs j ON j.id = d.job_id"
	    " WHERE d.after_id = %U AND j.after_any = 1 AND j.waiting_on > 0",
	    id);
}

/* Puts parked job id back in jobs, waiting for the nlive jobs of live:
 * the row it left (finalized cancelled), in no group; or, when it has not
 * been finalized yet, its row unmarked, attempts 0 as in the copy (it
 * never ran: only a claim that was to finalize it, by a worker that died
 * before it could, charged it one).  *back: 0 when it cannot come
 * back (its unique key is taken).  PARK_EBUSY, err saying so, when a
 * worker holds it to finalize it now: that cancel would park it under a
 * job that is no longer dead, for good, so the caller rolls back and
 * tries again once the worker is through. */
static int
put_back(struct db *db, uint64_t id, const char *live, size_t nlive, int *back, char *err)
{
	struct db_res *r;
	char **row;
	int rc, in_jobs = 0;

	*back = 0;
	r = db_query(db, &rc, err,
	    "SELECT " IS_RESERVED ", reserved_by, lease_expires_at FROM jobs WHERE id = %U FOR UPDATE", id);
	if (r == NULL)
		return rc;
	if ((row = db_res_next(r)) != NULL) {
		in_jobs = 1;
		if (row[0] != NULL && row[0][0] == '1') {
			errf(err, "job %llu, which its death cancelled, is held by worker %s to be finalized (its lease "
			          "ends at %s UTC); nothing was changed: try again then",
			    (unsigned long long)id, row[1] ? row[1] : "?", row[2] ? row[2] : "?");
			rc = PARK_EBUSY;
		}
	}
	db_res_free(r);
	if (rc != DB_OK)
		return rc;
	if (in_jobs)
		rc = db_exec(db, err,
		    "UPDATE jobs j JOIN jobq_parked p ON p.id = j.id SET j.cancel_by = NULL, j.cancel_at = NULL,"
		    " j.expires_at = p.expires_at, j.lease_token = NULL, j.lease_expires_at = NULL, j.reserved_at = NULL,"
		    " j.reserved_by = NULL, j.attempts = 0, j.waiting_on = %U, j.available_at = %s WHERE j.id = %U",
		    (uint64_t)nlive, due_when(nlive), id);
	else {
		rc = db_exec(db, err,
		    "INSERT INTO jobs (id, " COLS ", waiting_on, after_any, available_at) SELECT id, " COLS
		    ", %U, 0, %s FROM jobq_parked WHERE id = %U",
		    (uint64_t)nlive, due_when(nlive), id);
		if (rc == DB_EFAIL && db_errno(db) == ER_DUP_ENTRY)
			return DB_OK; /* its unique key is another job's now: it stays cancelled */
		if (rc == DB_OK) /* it ended (cancelled): as for a retried job */
			rc = park_drop_counted(db, id, err);
		if (rc == DB_OK && nlive > 0)
			rc = db_exec(db, err,
			    "INSERT INTO jobq_deps (after_id, job_id) SELECT after_id, job_id FROM jobq_parked_deps"
			    " WHERE job_id = %U AND after_id IN (%s)",
			    id, live);
	}
	/* The jobs it waits for learn it (sql/022-waiters.sql): locked by
	 * weigh, or moved back in this transaction. */
	if (rc == DB_OK && nlive > 0)
		rc = db_exec(db, err, "%s%s)", WAITERS_SET(nlive), live);
	*back = rc == DB_OK;
	return rc;
}

/* Re-opens parked job id, or keeps it cancelled (parked under the dead
 * job that now stops it, or dropped with what is parked under it);
 * *back: whether it is in jobs again. */
static int
reopen_one(struct db *db, uint64_t id, int *back, char *err)
{
	struct buf live;
	uint64_t dead;
	size_t nlive;
	int final, rc;

	*back = 0;
	buf_init(&live);
	rc = weigh(db, id, &dead, &final, &live, &nlive, err);
	if (rc == DB_OK && final)
		rc = drop_down(db, &id, 1, 1, err);
	else if (rc == DB_OK && dead != 0)
		rc = db_exec(db, err, "UPDATE jobq_parked SET parked_by = %U WHERE id = %U", dead, id);
	else if (rc == DB_OK)
		rc = put_back(db, id, live.data, nlive, back, err);
	if (rc == DB_OK && *back)
		rc = db_exec(db, err, "DELETE FROM jobq_parked WHERE id = %U", id);
	if (rc == DB_OK && *back)
		rc = db_exec(db, err, "DELETE FROM jobq_parked_deps WHERE job_id = %U", id);
	buf_free(&live);
	return rc;
}

/* Inside the transaction that moves dead job id back to jobs (after the
 * move): re-opens the jobs its death cancelled, and theirs down the
 * graph, one level at a time; *n gets how many came back. */
int
park_reopen(struct db *db, uint64_t id, uint64_t *n, char *err)
{
	uint64_t *front = xcalloc(2, sizeof *front), *next;
	size_t nf = 1, nn, i, level;
	struct db_res *r;
	struct buf in;
	int rc = DB_OK, back;

	*n = 0;
	front[0] = id;
	for (level = 0; rc == DB_OK && nf > 0 && level < REOPEN_LEVELS; level++) {
		buf_init(&in);
		buf_add_ids(&in, front, nf);
		r = db_query(db, &rc, err, "SELECT id FROM jobq_parked WHERE parked_by IN (%s) ORDER BY id FOR UPDATE",
		    in.data);
		buf_free(&in);
		free(front);
		front = NULL;
		if (r == NULL)
			break;
		next = ids_of(r, &nn);
		front = xcalloc(nn + 1, sizeof *front);
		for (i = nf = 0; rc == DB_OK && i < nn; i++)
			if ((rc = reopen_one(db, next[i], &back, err)) == DB_OK && back)
				front[nf++] = next[i];
		*n += nf;
		free(next);
	}
	free(front);
	return rc;
}

/* Drops the parked copies no retry can reach any more: those whose
 * parked_by is in no table that can come back (after a bulk clear of
 * the dead letter, or a job that came back without them).  Rerun until
 * nothing is left to drop, down the graph. */
int
park_collect(struct db *db, uint64_t *dropped, char *err)
{
	int rc, level;

	*dropped = 0;
	for (level = 0; level < REOPEN_LEVELS; level++) {
		rc = db_exec(db, err,
		    "DELETE FROM jobq_parked WHERE parked_by NOT IN (SELECT id FROM failed_jobs)"
		    " AND parked_by NOT IN (SELECT id FROM jobs) AND parked_by NOT IN (SELECT q.id FROM"
		    " (SELECT id FROM jobq_parked) q)");
		if (rc != DB_OK)
			return rc;
		if (db_affected(db) == 0)
			break;
		*dropped += db_affected(db);
	}
	return db_exec(db, err,
	    "DELETE FROM jobq_parked_deps WHERE job_id NOT IN (SELECT id FROM jobq_parked)");
}
