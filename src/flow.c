/* flow.c -- flow control kept in the database, so that it holds across
 * every worker process and host with no coordinator:
 *  - unique jobs: jobs.unique_key under a UNIQUE index, and jobq_unique
 *    for a key held for a window after its job is done;
 *  - max_running (per type and per queue) and rate (per type): a claim
 *    that such a limit governs first locks the limit's row in jobq_flow,
 *    counts what runs (live leases) and what started within the window
 *    (jobq_starts), and claims no more than that leaves, all in the
 *    claim's own transaction (the claim modes, queue_claim_*.c, and
 *    queue_limits.c call flow_gate_*);
 *  - paused queues: a row in jobq_paused, which the reservation's due
 *    scan consults, so a paused queue yields nothing to claim.
 *
 * Why a counted claim and not N slot rows: a slot must be given back
 * when its job ends, and a worker that dies cannot give it back; a
 * count of live leases needs no giving back (a done job's row is gone,
 * a dead worker's lease runs out) and so can never leak capacity. */
#include "config.h"

#include <mysqld_error.h>
#include <stdlib.h>
#include <string.h>

#include "final.h"
#include "flow.h"
#include "queue_states.h"
#include "utf8.h"

/* Whether jobs of this type are claimed under a limit of their own. */
int
flow_type_limited(const struct handler *h)
{
	return h != NULL && (h->max_running > 0 || h->rate_count > 0);
}

/* Whether any limit governs claims from queue: its own max_running, or
 * a type with a limit (its jobs may be in any queue). */
int
flow_governed(const struct conf *c, const char *queue)
{
	size_t i;

	if (conf_queue_max_running(c, queue) > 0)
		return 1;
	for (i = 0; i < c->nhandlers; i++)
		if (flow_type_limited(c->handlers[i]))
			return 1;
	return 0;
}

/* Fills g for a claim in queue of type (NULL: the queue's other types);
 * returns whether any limit governs it. */
int
flow_gate_for(const struct conf *c, const char *queue, const char *type, struct flow_gate *g)
{
	const struct handler *h = type != NULL ? conf_handler(c, type) : NULL;

	memset(g, 0, sizeof *g);
	g->queue = queue;
	g->queue_max = conf_queue_max_running(c, queue);
	if (flow_type_limited(h)) {
		g->type = type;
		g->type_max = h->max_running;
		g->rate_count = h->rate_count;
		g->rate_window_ms = h->rate_window_ms;
	}
	return g->type != NULL || g->queue_max > 0;
}

static void
scope_sql(struct db *db, struct buf *sql, const char *kind, const char *name)
{
	db_sql(db, sql, "CONCAT(%q, %q)", kind, name);
}

/* Appends "(how many jobs with column = value run now), ", or "0, "
 * when column is NULL.  Running is a live lease, read through
 * jobs_lease: only the held rows, however long the backlog. */
static void
running_sql(struct db *db, struct buf *sql, const char *column, const char *value)
{
	if (column == NULL) {
		buf_adds(sql, "0, ");
		return;
	}
	db_sql(db, sql,
	    "(SELECT COUNT(*) FROM jobs FORCE INDEX (jobs_lease) WHERE lease_token IS NOT NULL"
	    " AND lease_expires_at > UTC_TIMESTAMP(6) AND %s = %q), ",
	    column, value);
}

/* Appends to sql (which may begin with START TRANSACTION) the statements
 * that lock g's scopes and count what they allow, runs them, and sets
 * *allowed to how many more jobs the limits allow now (at most
 * *allowed as given).  Must run inside the claim's transaction: the
 * locks are held until it ends, so claims of one scope take turns and
 * each sees the ones before it committed (claimed_at is written, not
 * just locked, for Galera: see sql/008-flow.sql).  The type's row is locked
 * before the queue's, in every claim, so two claims cannot wait for
 * each other. */
int
flow_gate_open(struct db *db, const struct flow_gate *g, struct buf *sql, unsigned *allowed, char *err)
{
	struct db_res *r;
	char **row;
	int rc;

	buf_adds(sql, "INSERT INTO jobq_flow (scope) VALUES ");
	if (g->type != NULL) {
		buf_adds(sql, "(");
		scope_sql(db, sql, "type:", g->type);
		buf_adds(sql, g->queue_max > 0 ? "), (" : ")");
	} else
		buf_adds(sql, "(");
	if (g->queue_max > 0) {
		scope_sql(db, sql, "queue:", g->queue);
		buf_adds(sql, ")");
	}
	buf_adds(sql, " ON DUPLICATE KEY UPDATE claimed_at = UTC_TIMESTAMP(6); SELECT ");
	running_sql(db, sql, g->type_max > 0 ? "type" : NULL, g->type);
	running_sql(db, sql, g->queue_max > 0 ? "queue" : NULL, g->queue);
	if (g->rate_count > 0) {
		buf_adds(sql, "(SELECT COUNT(*) FROM jobq_starts WHERE scope = ");
		scope_sql(db, sql, "type:", g->type);
		db_sql(db, sql, " AND started_at > UTC_TIMESTAMP(6) - INTERVAL %I MICROSECOND)",
		    g->rate_window_ms * 1000);
	} else
		buf_adds(sql, "0");
	if ((r = db_query_buf(db, sql, &rc, err)) == NULL)
		return rc;
	if ((row = db_res_next(r)) != NULL) {
		uint64_t left[3] = { g->type_max, g->queue_max, g->rate_count };
		size_t i;

		for (i = 0; i < 3; i++) {
			uint64_t used = db_col_u64(row[i], 0);

			if (left[i] == 0)
				continue; /* no such limit */
			left[i] = used < left[i] ? left[i] - used : 0;
			if (left[i] < *allowed)
				*allowed = (unsigned)left[i];
		}
	}
	db_res_free(r);
	return DB_OK;
}

/* Appends, for a claim governed by g that stamped token, the statements
 * that charge its starts to the rate window and forget starts older
 * than it; they must run before the claim's COMMIT.  One start per row
 * of g's type the token claimed that will start (a claim's second part,
 * of other types, is no start of it), counted by the database, so the
 * same statements serve both reservation modes: a job marked to be
 * cancelled (a dependency died) or past its expires_at is claimed only
 * to be ended unstarted, and one written waiting yet due (plain SQL:
 * waiting_on > 0) only to be put back to wait (queue_claim_park): no
 * start either. */
void
flow_gate_charge_sql(struct db *db, struct buf *sql, const struct flow_gate *g, const char *token)
{
	if (g->rate_count == 0)
		return;
	buf_adds(sql, "INSERT INTO jobq_starts (scope, started_at) SELECT ");
	scope_sql(db, sql, "type:", g->type);
	db_sql(db, sql,
	    ", UTC_TIMESTAMP(6) FROM jobs WHERE lease_token = %q AND type = %q AND cancel_by IS NULL"
	    " AND waiting_on = 0 AND COALESCE(expires_at > UTC_TIMESTAMP(6), 1);",
	    token, g->type);
	buf_adds(sql, "DELETE FROM jobq_starts WHERE scope = ");
	scope_sql(db, sql, "type:", g->type);
	db_sql(db, sql, " AND started_at <= UTC_TIMESTAMP(6) - INTERVAL %I MICROSECOND;",
	    g->rate_window_ms * 1000);
}

/* ---- pause ---- */

/* Pauses (pause != 0) or resumes queue; *changed says whether it was
 * not already so.  One statement: the row is the whole state. */
int
flow_pause(struct db *db, const char *queue, int pause, int *changed, char *err)
{
	int rc;

	*changed = 0;
	if (!pause) {
		rc = db_exec(db, err, "DELETE FROM jobq_paused WHERE queue = %q", queue);
		*changed = rc == DB_OK && db_affected(db) > 0;
		return rc;
	}
	rc = db_exec(db, err, "INSERT INTO jobq_paused (queue) VALUES (%q)", queue);
	if (rc != DB_OK && db_errno(db) == ER_DUP_ENTRY)
		return DB_OK; /* already paused */
	*changed = rc == DB_OK;
	return rc;
}

/* The paused queues, as a new NULL-terminated list. */
int
flow_paused_list(struct db *db, char ***queues, char *err)
{
	struct db_res *r;
	char **row;
	size_t n = 0;
	int rc;

	*queues = xcalloc(1, sizeof **queues);
	if ((r = db_query(db, &rc, err, "SELECT queue FROM jobq_paused ORDER BY queue")) == NULL)
		return rc;
	while ((row = db_res_next(r)) != NULL) {
		*queues = xrealloc(*queues, (n + 2) * sizeof **queues);
		(*queues)[n++] = xstrdup_or_empty(row[0]);
		(*queues)[n] = NULL;
	}
	db_res_free(r);
	return DB_OK;
}

/* Appends the condition "queue is not paused" (a constant subquery,
 * one primary-key lookup) for the reservation's due scan. */
void
flow_paused_sql(struct db *db, struct buf *sql, const char *queue)
{
	db_sql(db, sql, " AND NOT EXISTS (SELECT 1 FROM jobq_paused WHERE queue = %q)", queue);
}

/* ---- unique jobs ---- */

/* Whether key can be a unique key: what jobs.unique_key holds (1 to
 * FLOW_UNIQUE_KEY_MAX bytes of UTF-8), with no control characters and no
 * space at its end: the column's collation pads, so 'k ' and 'k' would
 * be one key to the index and two to the person who wrote them.  -1
 * with err (no field name: the caller's) when not. */
int
flow_unique_key_check(const char *key, char *err)
{
	size_t n = strlen(key), i;

	for (i = 0; i < n && (unsigned char)key[i] >= 0x20 && key[i] != 0x7f; i++)
		;
	if (n == 0 || n > FLOW_UNIQUE_KEY_MAX || i < n || utf8_valid_prefix(key, n) != n) {
		errf(err, "expected 1 to %d bytes of UTF-8 without control characters", FLOW_UNIQUE_KEY_MAX);
		return -1;
	}
	if (key[n - 1] == ' ') {
		errf(err, "'%s' ends in a space, which the database does not tell apart from none", key);
		return -1;
	}
	return 0;
}

/* The id of the job that holds key into u: in the window table when
 * window, else in jobs, and then whether it is past its expiry and not
 * started (u->lapsed: no worker swept it yet).  0 when nobody holds it
 * (any more). */
static int
holder(struct db *db, const char *key, int window, struct flow_unique *u, char *err)
{
	struct db_res *r;
	char **row;
	int rc;

	u->id = 0;
	if (window)
		r = db_query(db, &rc, err,
		    "SELECT job_id, 0 FROM jobq_unique WHERE unique_key = %q AND expires_at > UTC_TIMESTAMP(6)",
		    key);
	else
		r = db_query(db, &rc, err,
		    "SELECT id, COALESCE(expires_at <= UTC_TIMESTAMP(6), 0) AND NOT (" IS_RESERVED ")"
		    " FROM jobs WHERE unique_key = %q",
		    key);
	if (r == NULL)
		return rc;
	if ((row = db_res_next(r)) != NULL) {
		u->id = db_col_u64(row[0], 0);
		u->lapsed = row[1] != NULL && row[1][0] == '1';
	}
	db_res_free(r);
	return DB_OK;
}

/* Whether the last statement failed on a duplicate of the named key. */
static int
dup_of(struct db *db, const char *err, const char *key_name)
{
	return db_errno(db) == ER_DUP_ENTRY && strstr(err, key_name) != NULL;
}

/* A refusal inside the caller's transaction: undoes what the try wrote
 * (the window row, the expired ones it cleared) and reads the holder. */
static int
refuse(struct db *db, const char *key, int window, struct flow_unique *u, char *err)
{
	int rc = db_exec(db, err, "ROLLBACK TO SAVEPOINT jobq_unique");

	u->refused = 1;
	u->in_window = window;
	return rc == DB_OK ? holder(db, key, window, u, err) : rc;
}

/* Inside the caller's open transaction: the window row (if any) and the
 * job.  On a refusal (u->refused) what it wrote is undone (a savepoint),
 * u->id is the holder, and the caller's transaction goes on: the
 * dashboard records the refusal in it (serve_enqueue.c), `jobq enqueue`
 * rolls it back.  Unless flow_unique_stands(u), the caller rolls back
 * and passes the refusal to flow_unique_settle.  An error leaves the
 * transaction for the caller to roll back. */
int
flow_unique_in_tx(
    struct db *db, const struct enqueue_item *it, int64_t unique_for_ms, struct flow_unique *u, char *err)
{
	int rc;

	memset(u, 0, sizeof *u);
	if ((rc = db_exec(db, err, "SAVEPOINT jobq_unique")) != DB_OK)
		return rc;
	if (unique_for_ms > 0) {
		rc = db_exec(db, err,
		    "DELETE FROM jobq_unique WHERE unique_key = %q AND expires_at <= UTC_TIMESTAMP(6)",
		    it->unique_key);
		if (rc == DB_OK)
			rc = db_exec(db, err,
			    "INSERT INTO jobq_unique (unique_key, job_id, expires_at)"
			    " VALUES (%q, 0, UTC_TIMESTAMP(6) + INTERVAL %I MICROSECOND)",
			    it->unique_key, unique_for_ms * 1000);
		if (rc != DB_OK && dup_of(db, err, "PRIMARY"))
			return refuse(db, it->unique_key, 1, u, err);
	}
	/* A plain key is refused too while a window on it is open: the
	 * window outlives its job, which the jobs index alone cannot see.
	 * (Were a window opened concurrently, its job is still in jobs and
	 * the index refuses one of the two.) */
	if (rc == DB_OK && unique_for_ms <= 0 &&
	    (rc = holder(db, it->unique_key, 1, u, err)) == DB_OK && u->id != 0)
		return refuse(db, it->unique_key, 1, u, err);
	if (rc == DB_OK)
		rc = queue_enqueue(db, it, 1, &u->id, err);
	if (rc != DB_OK && dup_of(db, err, "jobs_unique"))
		return refuse(db, it->unique_key, 0, u, err);
	if (rc == DB_OK && unique_for_ms > 0)
		rc = db_exec(db, err, "UPDATE jobq_unique SET job_id = %U WHERE unique_key = %q", u->id,
		    it->unique_key);
	return rc;
}

/* After the transaction of flow_unique_in_tx ended with rc (rolled back
 * when the refusal did not stand): DB_ERETRY, with err saying why, when
 * the enqueue must be tried anew because the holder ended between the
 * refusal and the look-up, or was past its expiry unstarted (it is
 * ended here, as a worker's sweep would, with its dependents and
 * group); else rc.  A success with a window also forgets a few windows
 * that have passed. */
int
flow_unique_settle(struct db *db, const struct enqueue_item *it, int64_t unique_for_ms,
    const struct flow_unique *u, int rc, char *err)
{
	char ignored[ERRSZ];
	uint64_t ends[2];

	if (rc == DB_OK && u->refused && u->id == 0) {
		rc = DB_ERETRY; /* the holder is gone: try again */
		errf(err, "unique key '%s': its holder kept ending while we looked", it->unique_key);
	} else if (rc == DB_OK && u->refused && u->lapsed) {
		if ((rc = final_sweep(db, "enqueue", 0, u->id, ends, err)) == DB_OK) {
			rc = DB_ERETRY;
			errf(err, "unique key '%s': its expired holder kept ending while we looked",
			    it->unique_key);
		}
	} else if (rc == DB_OK && !u->refused && unique_for_ms > 0)
		(void)db_exec(db, ignored,
		    "DELETE FROM jobq_unique WHERE expires_at <= UTC_TIMESTAMP(6)"
		    " ORDER BY expires_at LIMIT 100");
	return rc;
}

/* One try of flow_enqueue_unique: its own transaction. */
static int
unique_try(
    struct db *db, const struct enqueue_item *it, int64_t unique_for_ms, struct flow_unique *u, char *err)
{
	int rc;

	memset(u, 0, sizeof *u);
	if ((rc = db_begin(db, err)) != DB_OK)
		return rc;
	rc = flow_unique_in_tx(db, it, unique_for_ms, u, err);
	if (rc == DB_OK && !u->refused)
		rc = db_commit(db, err);
	if (rc != DB_OK || u->refused)
		db_rollback(db);
	return rc;
}

/* Enqueues it (it->unique_key set) unless its key is taken: by a job
 * still in jobs (ready, delayed, backing off or running) or, when the
 * key was enqueued with a window, until that window has passed.  The
 * database decides, through the UNIQUE index and jobq_unique's primary
 * key: of any number of concurrent callers exactly one inserts.  A
 * refusal (u->refused) is no error: u->id is the job that holds the
 * key.  When that job ended between the refusal and the look-up, the
 * key is free again and the enqueue is tried anew. */
int
flow_enqueue_unique(
    struct db *db, const struct enqueue_item *it, int64_t unique_for_ms, struct flow_unique *u, char *err)
{
	int attempt = 0, rc;

	do
		rc = flow_unique_settle(db, it, unique_for_ms, u, unique_try(db, it, unique_for_ms, u, err), err);
	while (db_retry_after(rc, ++attempt));
	return rc;
}
