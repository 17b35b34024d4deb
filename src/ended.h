/* ended.h -- how the jobs a job waits for stand: still in jobs, or how
 * they ended (enqueue --after, and the re-opening of parked jobs). */
#ifndef JOBQ_ENDED_H
#define JOBQ_ENDED_H

#include <stddef.h>
#include <stdint.h>

#include "db.h"

/* One job asked about.  how: NULL while it is in jobs (its row is then
 * locked), else "done", "dead", "cancelled" or "expired"; found: 0 when
 * no table knows it (never enqueued, or its history pruned). */
struct ended {
	uint64_t id;
	const char *how;
	int found;
	int forgotten; /* how is "dead", known by its last run alone: the
	                * dead letter no longer holds it (forgotten) */
	const char *run; /* ended_lookup's scratch */
};

int ended_lookup(struct db *db, struct ended *k, size_t n, char *err);
struct ended *ended_find(struct ended *k, size_t n, uint64_t id);
void ended_sort(struct ended *k, size_t *n);

#endif
