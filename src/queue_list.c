/* queue_list.c -- page through the queue table by id (keyset pagination:
 * each page is an index range scan from the last id seen, as fast at the
 * millionth row as at the first) and act on one job. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "queue.h"
#include "queue_list.h"
#include "queue_states.h"

static const struct {
	const char *name, *where;
} states[] = {
	{ "ready", IS_READY },
	{ "delayed", IS_DELAYED },
	{ "waiting", IS_WAITING },
	{ "reserved", IS_RESERVED },
	{ "stale", IS_STALE },
};

int
queue_list_state_valid(const char *state)
{
	size_t i;

	for (i = 0; i < ARRAY_LEN(states); i++)
		if (strcmp(states[i].name, state) == 0)
			return 1;
	return 0;
}

static void
where_sql(struct db *db, struct buf *w, const struct job_filter *f)
{
	size_t i;

	db_sql(db, w, "id > %U", f->after_id);
	if (f->queue != NULL)
		db_sql(db, w, " AND queue = %q", db_ascii(f->queue));
	if (f->type != NULL)
		db_sql(db, w, " AND type = %q", db_ascii(f->type));
	if (f->group_id != 0)
		db_sql(db, w, " AND group_id = %U", f->group_id);
	for (i = 0; f->state != NULL && i < ARRAY_LEN(states); i++)
		if (strcmp(states[i].name, f->state) == 0)
			db_sql(db, w, " AND (%s)", states[i].where);
}

/* Up to f->limit jobs with ids above f->after_id, lowest id first. */
int
queue_list(struct db *db, const struct job_filter *f, struct job_row **rows, size_t *n, char *err)
{
	struct buf w;
	struct db_res *r;
	char **row;
	int rc;

	*rows = NULL;
	*n = 0;
	buf_init(&w);
	where_sql(db, &w, f);
	r = db_query(db, &rc, err,
	    "SELECT id, queue, type, priority, attempts, COALESCE(max_attempts, 0), reserved_by,"
	    " TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), due_at) DIV 1000, last_error IS NOT NULL,"
	    " " STATE_OF_ROW
	    " FROM jobs WHERE %s ORDER BY id LIMIT %u",
	    w.data, f->limit);
	buf_free(&w);
	if (r == NULL)
		return rc;
	*rows = xcalloc(db_res_rows(r) + 1, sizeof **rows);
	while ((row = db_res_next(r)) != NULL) {
		struct job_row *j = &(*rows)[(*n)++];

		j->id = strtoull(row[0], NULL, 10);
		j->queue = xstrdup(row[1]);
		j->type = xstrdup(row[2]);
		j->priority = atoi(row[3]);
		j->attempts = (unsigned)strtoul(row[4], NULL, 10);
		j->max_attempts = (unsigned)strtoul(row[5], NULL, 10);
		j->reserved_by = xstrdup_or_null(row[6]);
		j->due_in_ms = strtoll(row[7], NULL, 10);
		j->last_failed = atoi(row[8]);
		j->state = xstrdup(row[9]);
	}
	db_res_free(r);
	return DB_OK;
}

void
job_rows_free(struct job_row *rows, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(rows[i].queue);
		free(rows[i].type);
		free(rows[i].state);
		free(rows[i].reserved_by);
	}
	free(rows);
}

/* After an UPDATE or DELETE that changed nothing: QUEUE_NOT_FOUND when
 * the job is gone, QUEUE_CONFLICT when it is there in another state. */
static int
why_unchanged(struct db *db, uint64_t id, char *err)
{
	struct db_res *r;
	int rc;

	if ((r = db_query(db, &rc, err, "SELECT 1 FROM jobs WHERE id = %U", id)) == NULL)
		return rc;
	rc = db_res_next(r) != NULL ? QUEUE_CONFLICT : QUEUE_NOT_FOUND;
	db_res_free(r);
	return rc;
}

static int
one_row(struct db *db, uint64_t id, int rc, char *err)
{
	if (rc != DB_OK)
		return rc;
	return db_affected(db) == 1 ? DB_OK : why_unchanged(db, id, err);
}

/* Makes a waiting (ready or delayed) job due now.  One conditional
 * statement: a job a worker holds, or one that waits for other jobs
 * (only their ends release it, deps.c; one a dependency's end marked for
 * cancelling is due already), is left alone (QUEUE_CONFLICT).
 * An expiry without a token is no lease; clearing it makes due_at the
 * new available_at. */
int
queue_make_due(struct db *db, uint64_t id, char *err)
{
	return one_row(db, id,
	    db_exec(db, err,
	        "UPDATE jobs SET available_at = UTC_TIMESTAMP(6), lease_expires_at = NULL"
	        " WHERE id = %U AND lease_token IS NULL AND (waiting_on = 0 OR cancel_by IS NOT NULL)",
	        id),
	    err);
}

/* Releases one stale job (its lease expired): ready now, like
 * queue_release_stale does for all of them.  A live lease is left alone
 * (QUEUE_CONFLICT); a worker that still runs the job finds its token
 * gone and drops its outcome. */
int
queue_release_one(struct db *db, uint64_t id, char *err)
{
	return one_row(db, id,
	    db_exec(db, err,
	        "UPDATE jobs SET available_at = UTC_TIMESTAMP(6), reserved_at = NULL, reserved_by = NULL,"
	        " lease_token = NULL, lease_expires_at = NULL WHERE id = %U AND " IS_STALE,
	        id),
	    err);
}

/* Deletes a job nobody is running (waiting or stale); a job under a
 * live lease is left alone (QUEUE_CONFLICT).  So is a job that other
 * jobs wait for (has_waiters) or that a group counts (group_id): it
 * would leave without an end, so they would wait, and the group stay
 * open, for ever; cancelling it ends it for them.  Its rows of what it
 * waits for go with it, in the same statement, and so does its parked
 * copy (park.c), as a cancel drops it: a job a dead dependency marked
 * for cancelling, deleted before it ended, must not come back when that
 * dependency is retried. */
int
queue_delete(struct db *db, uint64_t id, char *err)
{
	int rc = db_exec(db, err,
	    "DELETE j, p, pd, d FROM jobs j LEFT JOIN jobq_parked p ON p.id = j.id"
	    " LEFT JOIN jobq_parked_deps pd ON pd.job_id = j.id LEFT JOIN jobq_deps d ON d.job_id = j.id"
	    " WHERE j.id = %U AND NOT (" IS_RESERVED ") AND j.has_waiters = 0 AND j.group_id IS NULL",
	    id);

	if (rc != DB_OK)
		return rc;
	return db_affected(db) >= 1 ? DB_OK : why_unchanged(db, id, err); /* the job's row, and its others */
}
