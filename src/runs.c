/* runs.c -- read and trim the run history.
 *
 * Rows are written by queue.c in the same transaction as the outcome
 * they record; this file only reads them and deletes old ones. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "runs.h"

#define CHUNK 1000

/* The runs of one job, oldest first, times shown in tz (an offset like
 * '+00:00' or a zone name the server knows). */
int
runs_for_job(struct db *db, uint64_t id, const char *tz, struct run_row **rows, size_t *n, char *err)
{
	struct db_res *r;
	char **row;
	int rc;

	*rows = NULL;
	*n = 0;
	r = db_query(db, &rc, err,
	    "SELECT attempt, worker, CONVERT_TZ(started_at, '+00:00', %q), duration_ms, outcome, "
	    "exit_status, error, queue, type, output FROM job_runs WHERE job_id = %U ORDER BY id",
	    tz, id);
	if (r == NULL)
		return rc;
	*rows = xcalloc(db_res_rows(r) + 1, sizeof **rows);
	while ((row = db_res_next(r)) != NULL) {
		struct run_row *x = &(*rows)[(*n)++];

		x->attempt = (unsigned)strtoul(row[0], NULL, 10);
		x->worker = xstrdup_or_null(row[1]);
		x->started_at = xstrdup_or_null(row[2]);
		x->duration_ms = strtoll(row[3], NULL, 10);
		x->outcome = xstrdup_or_null(row[4]);
		x->exit_status = xstrdup_or_null(row[5]);
		x->error = xstrdup_or_null(row[6]);
		x->queue = xstrdup_or_null(row[7]);
		x->type = xstrdup_or_null(row[8]);
		x->output = xstrdup_or_null(row[9]);
	}
	db_res_free(r);
	return DB_OK;
}

void
runs_free(struct run_row *rows, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(rows[i].queue);
		free(rows[i].type);
		free(rows[i].worker);
		free(rows[i].started_at);
		free(rows[i].outcome);
		free(rows[i].exit_status);
		free(rows[i].error);
		free(rows[i].output);
	}
	free(rows);
}

/* Per job type over the last window_ms: runs, failures, mean and
 * longest duration.  Served by the (type, started_at) index. */
int
runs_stats(struct db *db, int64_t window_ms, struct type_stats **out, size_t *n, char *err)
{
	struct db_res *r;
	char **row;
	int rc;

	*out = NULL;
	*n = 0;
	r = db_query(db, &rc, err,
	    "SELECT type, COUNT(*), SUM(outcome <> 'done'), AVG(duration_ms), MAX(duration_ms) FROM job_runs"
	    " WHERE started_at >= UTC_TIMESTAMP(6) - INTERVAL %I MICROSECOND GROUP BY type ORDER BY type",
	    window_ms * 1000);
	if (r == NULL)
		return rc;
	*out = xcalloc(db_res_rows(r) + 1, sizeof **out);
	while ((row = db_res_next(r)) != NULL) {
		struct type_stats *s = &(*out)[(*n)++];

		s->type = xstrdup(row[0]);
		s->runs = strtoull(row[1], NULL, 10);
		s->failures = strtoull(row[2], NULL, 10);
		s->avg_ms = strtod(row[3], NULL);
		s->max_ms = strtoll(row[4], NULL, 10);
	}
	db_res_free(r);
	return DB_OK;
}

void
type_stats_free(struct type_stats *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(s[i].type);
	free(s);
}

/* Deletes matching rows CHUNK at a time, each chunk its own statement,
 * so that trimming a big table never holds locks for long nor fills the
 * undo log.  where is SQL text the caller built. */
int
delete_in_chunks(struct db *db, const char *table, const char *where, uint64_t *removed, char *err)
{
	struct buf sql;
	int rc;

	*removed = 0;
	buf_init(&sql);
	db_sql(db, &sql, "DELETE FROM %s WHERE %s LIMIT %d", table, where, CHUNK);
	do {
		if ((rc = db_exec_retry(db, &sql, NULL, 0, err)) != DB_OK)
			break;
		*removed += db_affected(db);
	} while (db_affected(db) == CHUNK);
	buf_free(&sql);
	return rc;
}

int
runs_prune(struct db *db, int64_t older_than_ms, uint64_t *removed, char *err)
{
	struct buf where;
	int rc;

	buf_init(&where);
	db_sql(db, &where, "started_at < UTC_TIMESTAMP(6) - INTERVAL %I MICROSECOND", older_than_ms * 1000);
	rc = delete_in_chunks(db, "job_runs", where.data, removed, err);
	buf_free(&where);
	return rc;
}
