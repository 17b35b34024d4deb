/* audit.c -- every administrator action is one row of jobq_audit. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"

/* Records an action; job_id 0 for one on many jobs (detail says which). */
int
audit_add(struct db *db, const char *user, const char *address, const char *action, uint64_t job_id,
    const char *detail, char *err)
{
	char id[24] = "NULL";

	if (job_id != 0)
		snprintf(id, sizeof id, "%llu", (unsigned long long)job_id);
	return db_exec(db, err,
	    "INSERT INTO jobq_audit (username, address, action, job_id, detail) VALUES (%q, %q, %q, %s, %q)",
	    user, address, action, id, detail != NULL ? detail : "");
}

/* The actions on one job, oldest first, times in tz. */
int
audit_for_job(struct db *db, uint64_t job_id, const char *tz, struct audit_row **rows, size_t *n, char *err)
{
	struct db_res *r;
	char **row;
	int rc;

	*rows = NULL;
	*n = 0;
	r = db_query(db, &rc, err,
	    "SELECT CONVERT_TZ(at, '+00:00', %q), username, address, action, detail FROM jobq_audit"
	    " WHERE job_id = %U ORDER BY id LIMIT 200",
	    tz, job_id);
	if (r == NULL)
		return rc;
	*rows = xcalloc(db_res_rows(r) + 1, sizeof **rows);
	while ((row = db_res_next(r)) != NULL) {
		struct audit_row *a = &(*rows)[(*n)++];

		a->at = xstrdup_or_empty(row[0]);
		a->user = xstrdup(row[1]);
		a->address = xstrdup(row[2]);
		a->action = xstrdup(row[3]);
		a->detail = xstrdup(row[4]);
		a->job_id = job_id;
	}
	db_res_free(r);
	return DB_OK;
}

void
audit_rows_free(struct audit_row *rows, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(rows[i].at);
		free(rows[i].user);
		free(rows[i].address);
		free(rows[i].action);
		free(rows[i].detail);
	}
	free(rows);
}
