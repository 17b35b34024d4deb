/* runs_recent.c -- the last hour of job_runs, read through its
 * started_at index (one range scan, however long the history is). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "runs_recent.h"

/* Runs per minute over the last hour, split by outcome. */
int
runs_recent_minutes(struct db *db, struct runs_minutes *m, char *err)
{
	struct db_res *r;
	char **row;
	int rc;

	memset(m, 0, sizeof *m);
	r = db_query(db, &rc, err,
	    "SELECT TIMESTAMPDIFF(SECOND, started_at, UTC_TIMESTAMP(6)) DIV 60 AS ago, outcome, COUNT(*)"
	    " FROM job_runs WHERE started_at > UTC_TIMESTAMP(6) - INTERVAL %d MINUTE GROUP BY ago, outcome",
	    RUNS_MINUTES);
	if (r == NULL)
		return rc;
	while ((row = db_res_next(r)) != NULL) {
		long ago = strtol(row[0], NULL, 10);
		uint64_t n = strtoull(row[2], NULL, 10);

		if (ago < 0 || ago >= RUNS_MINUTES)
			continue;
		if (strcmp(row[1], "done") == 0)
			m->done[ago] += n;
		else if (strcmp(row[1], "dead") == 0)
			m->dead[ago] += n;
		else
			m->retry[ago] += n; /* retry, interrupted */
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
	    " MINUTE GROUP BY %s, outcome ORDER BY %s, outcome",
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
