/* runs_recent.c -- the last hour of job_runs, read through its
 * started_at index (one range scan, however long the history is). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "queue_states.h"
#include "runs_recent.h"

/* Adds one (key, outcome) count to rows, merging equal pairs. */
static void
count_add(struct runs_count **rows, size_t *n, const char *key, const char *outcome, uint64_t v)
{
	size_t i;

	for (i = 0; i < *n; i++)
		if (strcmp((*rows)[i].key, key) == 0 && strcmp((*rows)[i].outcome, outcome) == 0) {
			(*rows)[i].n += v;
			return;
		}
	*rows = xrealloc(*rows, (*n + 1) * sizeof **rows);
	(*rows)[*n].key = xstrdup(key);
	(*rows)[*n].outcome = xstrdup(outcome);
	(*rows)[(*n)++].n = v;
}

/* Runs per minute over the last hour split by outcome, and the same
 * runs counted by queue and outcome, from one pass over the hour: the
 * grouping of every run of the hour is what this costs (about 0.4 s per
 * million runs on the 2-core development VM), so it is done once for
 * both.  *per_queue is freed with runs_counts_free. */
int
runs_recent_minutes(
    struct db *db, struct runs_minutes *m, struct runs_count **per_queue, size_t *nq, char *err)
{
	struct db_res *r;
	char **row;
	int rc;

	memset(m, 0, sizeof *m);
	*per_queue = NULL;
	*nq = 0;
	r = db_query(db, &rc, err,
	    "SELECT TIMESTAMPDIFF(SECOND, started_at, UTC_TIMESTAMP(6)) DIV 60 AS ago, queue, outcome,"
	    " COUNT(*) FROM job_runs WHERE started_at > UTC_TIMESTAMP(6) - INTERVAL %d MINUTE"
	    " GROUP BY ago, queue, outcome",
	    RUNS_MINUTES);
	if (r == NULL)
		return rc;
	while ((row = db_res_next(r)) != NULL) {
		long ago = strtol(row[0], NULL, 10);
		uint64_t n = strtoull(row[3], NULL, 10);

		if (ago < 0 || ago >= RUNS_MINUTES)
			continue;
		count_add(per_queue, nq, row[1], row[2], n);
		if (strcmp(row[2], "done") == 0)
			m->done[ago] += n;
		else if (strcmp(row[2], "dead") == 0)
			m->dead[ago] += n;
		else if (strcmp(row[2], "retry") == 0 || strcmp(row[2], "interrupted") == 0)
			m->retry[ago] += n; /* cancelled, expired, lost: no run of the chart's three */
	}
	db_res_free(r);
	return DB_OK;
}

/* Runs of the last hour counted by "queue" or "type" and outcome. */
int
runs_recent_counts(struct db *db, const char *by, struct runs_count **rows, size_t *n, char *err)
{
	struct db_res *r;
	char **row;
	int rc;

	*rows = NULL;
	*n = 0;
	if (strcmp(by, "queue") != 0 && strcmp(by, "type") != 0)
		fatal("runs_recent_counts: bad key '%s'", by);
	r = db_query(db, &rc, err,
	    "SELECT %s, outcome, COUNT(*) FROM job_runs WHERE started_at > UTC_TIMESTAMP(6) - INTERVAL %d"
	    " MINUTE AND " RUN_HANDLER_RAN " GROUP BY %s, outcome ORDER BY %s, outcome",
	    by, RUNS_MINUTES, by, by);
	if (r == NULL)
		return rc;
	*rows = xcalloc(db_res_rows(r) + 1, sizeof **rows);
	while ((row = db_res_next(r)) != NULL) {
		struct runs_count *c = &(*rows)[(*n)++];

		c->key = xstrdup(row[0]);
		c->outcome = xstrdup(row[1]);
		c->n = strtoull(row[2], NULL, 10);
	}
	db_res_free(r);
	return DB_OK;
}

void
runs_counts_free(struct runs_count *rows, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(rows[i].key);
		free(rows[i].outcome);
	}
	free(rows);
}
