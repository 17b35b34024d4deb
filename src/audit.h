/* audit.h -- the audit table (jobq_audit): who did what to which job. */
#ifndef JOBQ_AUDIT_H
#define JOBQ_AUDIT_H

#include <stddef.h>
#include <stdint.h>

#include "db.h"

struct audit_row {
	char *at, *user, *address, *action, *detail;
	uint64_t job_id; /* 0: an action on many jobs */
};

int audit_add(struct db *db, const char *user, const char *address, const char *action, uint64_t job_id,
    const char *detail, char *err);
int audit_for_job(
    struct db *db, uint64_t job_id, const char *tz, struct audit_row **rows, size_t *n, char *err);
void audit_rows_free(struct audit_row *rows, size_t n);

#endif
