/* audit.h -- the audit table (jobq_audit): who did what to which job. */
#ifndef JOBQ_AUDIT_H
#define JOBQ_AUDIT_H

#include <stddef.h>
#include <stdint.h>

#include "db.h"

struct audit_row {
	uint64_t id;
	char *at, *user, *address, *action, *detail;
	uint64_t job_id; /* 0: an action on many jobs */
	uint64_t count;  /* jobs the action was on; 0: only job_id */
};

/* One action to record: who, from where, what, on how many jobs (0:
 * on the one job of the row, or none), and a detail for people. */
struct audit_entry {
	const char *user, *address, *action;
	uint64_t count;
	const char *detail;
};

/* A long action a person started (many jobs, each its own transaction;
 * a clear, a chunk at a time) asks before each transaction whether that
 * person may still act: fn answers 0 yes, else fills err with why.
 * Refused, the action stops there and returns AUDIT_STOPPED: what the
 * transactions before did stays done, audited; nothing after it is
 * touched.  The dashboard's check: serve_still_admin. */
struct audit_still {
	int (*fn)(void *arg, char *err);
	void *arg;
};
#define AUDIT_STOPPED 8

int audit_still_ok(const struct audit_still *s, char *err);

/* What audit_list shows: each NULL (0) field matches every row.  since
 * and until are UTC times ("YYYY-MM-DD HH:MM:SS[.ffffff]"), since
 * included, until not; before is the keyset anchor: rows older (smaller
 * id) than it. */
struct audit_filter {
	const char *user, *action, *since, *until;
	uint64_t before;
	unsigned limit; /* rows at most: 1 to AUDIT_LIST_MAX (+ 1 to learn of a next page) */
};
#define AUDIT_LIST_MAX 500

int audit_add(struct db *db, const char *user, const char *address, const char *action, uint64_t job_id,
    const char *detail, char *err);
void audit_sql(struct db *db, struct buf *sql, const struct audit_entry *e, const char *job_sql);
void audit_sql_counted(struct db *db, struct buf *sql, const struct audit_entry *e, const char *count_sql);
void audit_sql_when(
    struct db *db, struct buf *sql, const struct audit_entry *e, const char *job_sql, const char *cond);
int audit_add_entry(struct db *db, const struct audit_entry *e, uint64_t job_id, char *err);
/* A change audit_tx runs in the transaction of its audit row: DB_OK
 * when it changed something, else what audit_tx passes on. */
typedef int audit_act_fn(struct db *db, void *arg, char *err);

/* A change of one job (queue_delete, queue_release_one, ...) as an
 * audit_act_fn: audit_job_act with a struct audit_job for its arg. */
typedef int audit_job_fn(struct db *db, uint64_t id, char *err);
struct audit_job {
	audit_job_fn *fn;
	uint64_t id;
};
int audit_job_act(struct db *db, void *arg, char *err);
int audit_tx(
    struct db *db, const struct audit_entry *e, uint64_t job_id, audit_act_fn *act, void *arg, char *err);
int audit_for_job(
    struct db *db, uint64_t job_id, const char *tz, struct audit_row **rows, size_t *n, char *err);
int audit_list(struct db *db, const struct audit_filter *f, const char *tz, struct audit_row **rows,
    size_t *n, char *err);
int audit_action_known(const char *action);
const char *const *audit_actions(void);
void audit_rows_free(struct audit_row *rows, size_t n);

#endif
