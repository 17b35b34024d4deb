/* after.h -- enqueueing jobs that wait for other jobs (`jobq enqueue
 * --after`, and --batch lines with "after" and "ref"). */
#ifndef JOBQ_AFTER_H
#define JOBQ_AFTER_H

#include <stddef.h>
#include <stdint.h>

#include "db.h"
#include "queue.h"

/* One job to enqueue and what it waits for. */
struct after_job {
	struct enqueue_item e; /* its waiting_on is set by after_enqueue */
	const uint64_t *ids;   /* jobs enqueued before, by id */
	size_t nids;
	const size_t *refs; /* earlier jobs of the same call, by index */
	size_t nrefs;
	int after_any; /* policy any: runs once all ended, however */
	int unknown;   /* out, with AFTER_EUNKNOWN: it names the unknown job */
	char cancelled[128]; /* out: why it was cancelled as it was enqueued
	                      * ("dependency 12 (dead)"), or "" */
};

/* after_enqueue's answer when a job names an id no table knows. */
#define AFTER_EUNKNOWN 1
/* How after_insert, for a worker, takes a job no table knows: as one that
 * ended this way (the reason of a dependent it stops names it). */
#define AFTER_NOT_KNOWN "not known"

struct group_spec;
int after_insert(struct db *db, struct after_job *jobs, size_t n, const char *worker, uint64_t *ids, char *err);
int after_enqueue_in_tx(
    struct db *db, struct after_job *jobs, size_t n, const struct group_spec *group, uint64_t *ids, char *err);
int after_enqueue(struct db *db, struct after_job *jobs, size_t n, const struct group_spec *group, int dry,
    uint64_t *ids, char *err);

#endif
