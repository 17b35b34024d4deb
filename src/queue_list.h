/* queue_list.h -- the queue table as the dashboard pages through it, and
 * the operator's actions on one job (run now, release, delete).  Kept
 * apart from queue.c so `jobq` commands can share them. */
#ifndef JOBQ_QUEUE_LIST_H
#define JOBQ_QUEUE_LIST_H

#include <stddef.h>
#include <stdint.h>

#include "db.h"

/* Returned when the job exists but is not in a state the action takes
 * (run now of a reserved job, release of a live lease, ...). */
#define QUEUE_CONFLICT 3

struct job_filter {
	const char *queue; /* NULL: any */
	const char *type;  /* NULL: any */
	const char *state; /* ready, delayed, reserved, stale; NULL: any */
	uint64_t group_id; /* the jobs of this group still queued (jobs_group); 0: any */
	uint64_t after_id; /* keyset: ids above this one */
	unsigned limit;    /* 1..500 */
};

struct job_row {
	uint64_t id;
	char *queue, *type, *state, *reserved_by;
	int priority;
	unsigned attempts, max_attempts; /* max_attempts 0: the handler's */
	int64_t due_in_ms;               /* negative: due since */
	int last_failed;                 /* the last attempt left an error */
};

int queue_list_state_valid(const char *state);
int queue_list(struct db *db, const struct job_filter *f, struct job_row **rows, size_t *n, char *err);
void job_rows_free(struct job_row *rows, size_t n);
int queue_make_due(struct db *db, uint64_t id, char *err);
int queue_release_one(struct db *db, uint64_t id, char *err);
int queue_delete(struct db *db, uint64_t id, char *err);

#endif
