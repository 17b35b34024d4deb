/* failed.h -- the dead-letter table (failed_jobs). */
#ifndef JOBQ_FAILED_H
#define JOBQ_FAILED_H

#include <stddef.h>
#include <stdint.h>

#include "conf.h"
#include "db.h"

struct audit_entry;
struct audit_still;

struct failed_filter {
	const char *queue;
	const char *type;
	unsigned limit;  /* 0: no limit */
	uint64_t after;  /* list only: the page after (older than) this job */
	/* list only, with after: that job's failed_at (UTC, as failed_row's
	 * at gives it), used instead of its row, which may have left */
	const char *after_at;
	uint64_t before; /* list only: the page before (newer than) this job */
	/* retry and forget matching only: each job's audit row, written in
	 * the job's own transaction; NULL: none */
	const struct audit_entry *audit;
	/* NULL: any job.  Else only the jobs a retry can serve, whose type
	 * has a [handler] section in it and whose queue a [queue] section,
	 * or with unknown_types only the others (a retry would only
	 * dead-letter them again, or strand them: failed_servable_sql) */
	const struct conf *handlers;
	int unknown_types;
	/* retry and forget matching only: asked before each job whether the
	 * one acting may still act; refused, the run stops there with
	 * AUDIT_STOPPED (audit.h).  NULL: never asked */
	const struct audit_still *still;
};

struct failed_row {
	uint64_t id;
	char *queue, *type, *failed_at, *exit_status, *reason;
	char *at; /* failed_at in UTC, "YYYY-MM-DD HH:MM:SS.ffffff": a page's anchor */
	char *summary; /* the line that names the error, else the reason (errtext_summary_or) */
	unsigned attempts;
};

int failed_list(struct db *db, const struct failed_filter *f, const char *tz, struct failed_row **rows,
    size_t *n, char *err);
void failed_rows_free(struct failed_row *rows, size_t n);
int failed_count_beyond(
    struct db *db, const struct failed_filter *f, uint64_t id, int older, uint64_t *n, char *err);
int failed_exists(struct db *db, uint64_t id, int *exists, char **type, char **queue, char *err);
void failed_servable_sql(struct db *db, struct buf *where, const struct conf *c, int unknown);
int failed_retry_audited(struct db *db, uint64_t id, const struct audit_entry *a, char *err);

/* What failed_retry_edited returns besides DB_OK, QUEUE_NOT_FOUND and
 * the db_rc values (queue.h's QUEUE_NOT_FOUND is 2). */
#define FAILED_BAD_PAYLOAD 3 /* not JSON, not UTF-8, or over max_payload */
#define FAILED_HELD 4        /* its id or unique key is in the queue again */

int failed_retry_check(struct db *db, uint64_t id, char *err);

/* A retry with a new payload: the payload (payload_len bytes and a
 * NUL), the limit it must keep to, and who edited it, for the audit row. */
struct failed_edit {
	const char *payload;
	size_t payload_len;
	size_t max_payload;
	const char *user, *address;
};

int failed_retry_edited(struct db *db, uint64_t id, const struct failed_edit *e, char *err);

/* Hears of each job failed_retry_matching tried: rc DB_OK (moved),
 * QUEUE_NOT_FOUND (left meanwhile) or the error err describes. */
typedef void failed_each_fn(void *arg, uint64_t id, int rc, const char *err);
typedef int failed_act_fn(struct db *db, uint64_t id, const struct audit_entry *a, char *err);
int failed_act_reconnecting(struct db *db, failed_act_fn *act, uint64_t id, const struct audit_entry *a, char *err);
int failed_retry_check_act(struct db *db, uint64_t id, const struct audit_entry *a, char *err);

int failed_count(struct db *db, const struct failed_filter *f, uint64_t *n, char *err);
int failed_retry_matching(
    struct db *db, const struct failed_filter *f, failed_each_fn *each, void *arg, char *err);
int failed_retry_check_matching(
    struct db *db, const struct failed_filter *f, failed_each_fn *each, void *arg, char *err);
int failed_forget_audited(struct db *db, uint64_t id, const struct audit_entry *a, char *err);
int failed_forget_matching(
    struct db *db, const struct failed_filter *f, failed_each_fn *each, void *arg, char *err);
int failed_clear(struct db *db, int64_t older_than_ms, int count_only, uint64_t *removed, char *err);
int failed_clear_audited(struct db *db, const struct audit_entry *a, const struct audit_still *still,
    uint64_t *removed, char *err);

#endif
