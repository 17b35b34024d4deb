/* cancel.h -- cancelling jobs: at once when no worker holds them, by a
 * request their worker acts on when one does (DESIGN 5b, jobq(1) cancel). */
#ifndef JOBQ_CANCEL_H
#define JOBQ_CANCEL_H

#include <stddef.h>
#include <stdint.h>

#include "db.h"

/* What a cancel found or left. */
enum cancel_state {
	CANCEL_DONE,      /* the job is cancelled */
	CANCEL_REQUESTED, /* a worker holds it: it stops the handler, then cancels */
	CANCEL_ENDED,     /* it had ended before: ended says how */
	CANCEL_UNKNOWN,   /* no job has that id */
};

int queue_cancel(struct db *db, uint64_t id, const char *by, enum cancel_state *st, char *err);
struct audit_entry;
int queue_cancel_audited(struct db *db, uint64_t id, const char *by, const struct audit_entry *a,
    enum cancel_state *st, char *err);
int queue_cancel_many(struct db *db, const uint64_t *ids, size_t n, const char *by, const struct audit_entry *a,
    enum cancel_state *st, uint64_t *down, char *err);
int cancel_settle(struct db *db, uint64_t id, const char *by, int *settled, char *err);
int cancel_ended(struct db *db, uint64_t id, char *ended, size_t len, int *found, char *err);

#endif
