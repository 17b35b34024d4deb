/* registry.c -- each `jobq work` process keeps one row in jobq_workers.
 *
 * The row is written at start, refreshed on every heartbeat (with its
 * counters and the jobs it runs) and deleted on a clean exit, so a row
 * whose last_seen_at stopped moving belongs to a worker that died.  A dead
 * worker's jobs need no help from here: their leases expire and they
 * become due again. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "registry.h"
#include "runs.h"

#define ALIVE_INTERVALS 3

int
registry_register(struct db *db, const char *id, const char *host, unsigned pid, const char *queues,
    unsigned concurrency, int64_t heartbeat_ms, char *err)
{
	return db_exec(db, err,
	    "REPLACE INTO jobq_workers (id, host, pid, queues, concurrency, heartbeat_ms, started_at, "
	    "last_seen_at,"
	    " version) VALUES (%q, %q, %u, %q, %u, %I, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6), %q)",
	    id, host, pid, queues, concurrency, heartbeat_ms, PACKAGE_VERSION);
}

/* The longest current_jobs a heartbeat sends: a quarter of the server's
 * packet limit (escaping may double a string), so that the list can never
 * make the heartbeat fail.  The column (MEDIUMTEXT, schema version 2)
 * holds a full list at any concurrency jobq allows. */
static size_t
current_jobs_max(const struct db *db)
{
	size_t packet = db_max_packet(db);

	return packet >= 16384 ? packet / 4 : 4096;
}

/* "1:a,2:b,3:c" cut after its last whole entry that fits in max
 * characters, with " +N more" for the entries left out. */
static char *
fit_current_jobs(const char *list, size_t max)
{
	size_t len = strlen(list), keep, more = 1;
	const char *p;

	if (len <= max)
		return xstrdup(list);
	max -= 32; /* room for the suffix */
	for (keep = max; keep > 0 && list[keep] != ','; keep--)
		;
	for (p = list + keep + 1; (p = strchr(p, ',')) != NULL; p++)
		more++;
	return xasprintf("%.*s%s+%zu more", (int)keep, list, keep > 0 ? " " : "", more);
}

/* Refreshes the row; QUEUE-style 1 when the row is gone (pruned by
 * someone), so the caller registers again. */
int
registry_heartbeat(
    struct db *db, const char *id, const struct worker_counts *c, const char *current_jobs, char *err)
{
	char *current = fit_current_jobs(current_jobs, current_jobs_max(db));
	int rc = db_exec(db, err,
	    "UPDATE jobq_workers SET last_seen_at = UTC_TIMESTAMP(6), jobs_done = %U, jobs_retried = %U,"
	    " jobs_dead = %U, current_jobs = %q WHERE id = %q",
	    c->done, c->retried, c->dead, current, id);

	free(current);
	if (rc == DB_OK && db_affected(db) == 0)
		return 1;
	return rc;
}

int
registry_unregister(struct db *db, const char *id, char *err)
{
	return db_exec(db, err, "DELETE FROM jobq_workers WHERE id = %q", id);
}

/* Every registered worker, newest first; alive says whether it
 * heart-beat within the last three of its own intervals.  A worker that
 * is gone runs nothing: its current_jobs are what it ran when it was
 * last seen, long since given back by their expired leases, so they are
 * not reported; and its uptime is how long it ran, up to that last
 * heartbeat, not a clock that keeps going after it died. */
int
registry_list(struct db *db, struct worker_row **rows, size_t *n, char *err)
{
	struct db_res *r;
	char **row;
	int rc;

	*rows = NULL;
	*n = 0;
	r = db_query(db, &rc, err,
	    "SELECT id, host, pid, queues, concurrency, heartbeat_ms, started_at, last_seen_at,"
	    " jobs_done, jobs_retried, jobs_dead, current_jobs, version,"
	    " TIMESTAMPDIFF(SECOND, started_at, UTC_TIMESTAMP(6)),"
	    " TIMESTAMPDIFF(MICROSECOND, last_seen_at, UTC_TIMESTAMP(6)) DIV 1000,"
	    " TIMESTAMPDIFF(SECOND, started_at, last_seen_at)"
	    " FROM jobq_workers ORDER BY started_at DESC, id");
	if (r == NULL)
		return rc;
	*rows = xcalloc(db_res_rows(r) + 1, sizeof **rows);
	while ((row = db_res_next(r)) != NULL) {
		struct worker_row *w = &(*rows)[(*n)++];

		w->id = xstrdup_or_empty(row[0]);
		w->host = xstrdup_or_empty(row[1]);
		w->pid = (unsigned)db_col_u64(row[2], 0);
		w->queues = xstrdup_or_empty(row[3]);
		w->concurrency = (unsigned)db_col_u64(row[4], 0);
		w->heartbeat_ms = db_col_i64(row[5], 0);
		w->started_at = xstrdup_or_empty(row[6]);
		w->last_seen_at = xstrdup_or_empty(row[7]);
		w->done = db_col_u64(row[8], 0);
		w->retried = db_col_u64(row[9], 0);
		w->dead = db_col_u64(row[10], 0);
		w->current_jobs = xstrdup_or_empty(row[11]);
		w->version = xstrdup_or_empty(row[12]);
		w->uptime_s = db_col_i64(row[13], 0);
		w->seen_ago_ms = db_col_i64(row[14], INT64_MAX / 2); /* NULL: never seen */
		w->alive = w->seen_ago_ms <= ALIVE_INTERVALS * w->heartbeat_ms + 1000;
		if (!w->alive) {
			w->uptime_s = db_col_i64(row[15], 0);
			w->current_jobs[0] = '\0';
		}
	}
	db_res_free(r);
	return DB_OK;
}

void
registry_rows_free(struct worker_row *rows, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(rows[i].id);
		free(rows[i].host);
		free(rows[i].queues);
		free(rows[i].current_jobs);
		free(rows[i].version);
		free(rows[i].started_at);
		free(rows[i].last_seen_at);
	}
	free(rows);
}

/* Workers that heart-beat recently. */
int
registry_count_alive(struct db *db, uint64_t *n, char *err)
{
	struct db_res *r;
	char **row;
	int rc;

	*n = 0;
	r = db_query(db, &rc, err,
	    "SELECT COUNT(*) FROM jobq_workers WHERE last_seen_at >="
	    " UTC_TIMESTAMP(6) - INTERVAL (%d * heartbeat_ms + 1000) * 1000 MICROSECOND",
	    ALIVE_INTERVALS);
	if (r == NULL)
		return rc;
	if ((row = db_res_next(r)) != NULL)
		*n = db_col_u64(row[0], 0);
	db_res_free(r);
	return DB_OK;
}

/* The queues of each worker that heart-beat recently (the same rule as
 * registry_count_alive), one comma-separated list per worker, for the
 * overview's "no live worker serves this queue": only the live rows and
 * one column, so it stays cheap however many gone workers the table
 * keeps.  Free with registry_queues_free. */
int
registry_alive_queues(struct db *db, char ***lists, size_t *n, char *err)
{
	struct db_res *r;
	char **row;
	int rc;

	*lists = NULL;
	*n = 0;
	r = db_query(db, &rc, err,
	    "SELECT queues FROM jobq_workers WHERE last_seen_at >="
	    " UTC_TIMESTAMP(6) - INTERVAL (%d * heartbeat_ms + 1000) * 1000 MICROSECOND",
	    ALIVE_INTERVALS);
	if (r == NULL)
		return rc;
	*lists = xcalloc(db_res_rows(r) + 1, sizeof **lists);
	while ((row = db_res_next(r)) != NULL)
		(*lists)[(*n)++] = xstrdup_or_empty(row[0]);
	db_res_free(r);
	return DB_OK;
}

/* Whether name is one of the comma-separated list's items. */
static int
list_has(const char *list, const char *name)
{
	size_t len = strlen(name);

	while (*list != '\0') {
		size_t item = strcspn(list, ",");

		if (item == len && strncmp(list, name, len) == 0)
			return 1;
		list += item + (list[item] == ',');
	}
	return 0;
}

/* How many live workers (their queue lists in w, from
 * registry_alive_queues) take jobs from queue: 0 with jobs ready or
 * stale is the overview's warning and an alert of contrib/prometheus,
 * since nothing will run them however long they wait. */
uint64_t
registry_serving(char *const *w, size_t nw, const char *queue)
{
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < nw; i++)
		n += (uint64_t)list_has(w[i], queue);
	return n;
}

void
registry_queues_free(char **lists, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(lists[i]);
	free(lists);
}

/* Forgets workers not seen for older_than_ms (or with count_only
 * counts them).  A worker that is alive by registry_list's rule is never
 * forgotten, whatever older_than_ms says: `prune --older-than 0` must
 * not pull the row from under a running worker. */
int
registry_prune(struct db *db, int64_t older_than_ms, int count_only, uint64_t *removed, char *err)
{
	struct buf where;
	int rc;

	buf_init(&where);
	db_sql(db, &where,
	    "last_seen_at < UTC_TIMESTAMP(6) - INTERVAL GREATEST(%I, (%d * heartbeat_ms + 1000) * 1000)"
	    " MICROSECOND",
	    older_than_ms * 1000, ALIVE_INTERVALS);
	rc = delete_in_chunks(db, "jobq_workers", where.data, count_only, removed, err);
	buf_free(&where);
	return rc;
}
