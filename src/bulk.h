/* bulk.h -- one action on every job a filter finds: retry or forget the
 * dead ones, release the stale ones, delete the waiting ones.  The set
 * is fixed when it is counted (the ids up to the highest one counted),
 * then acted on a chunk at a time, one short transaction per job (a
 * cancel: one per chunk). */
#ifndef JOBQ_BULK_H
#define JOBQ_BULK_H

#include <stddef.h>
#include <stdint.h>

#include "db.h"

struct bulk_kind;
struct audit_entry;
struct audit_still;

/* Which jobs: each NULL matches every one.  state: ready or delayed for
 * delete (NULL: both, every job nobody holds), any of ready, delayed,
 * reserved, stale for cancel.  by: who acts (the cancel records it). */
struct bulk_filter {
	const char *queue, *type, *state;
	const char *by;
	/* retry: NULL, any job; else only the jobs a retry can serve (their
	 * type and queue in it: failed_servable_sql), or with unknown_types
	 * only the others */
	const struct conf *handlers;
	int unknown_types;
	/* each job's audit row, written in the job's own transaction with
	 * the action; NULL: none */
	const struct audit_entry *audit;
	/* Asked before each job (before each chunk of a cancel) whether the
	 * one acting may still act (audit_still; the dashboard: a session
	 * still open, its user still an admin); refused, the step stops
	 * there and returns AUDIT_STOPPED, err saying why.  NULL: never
	 * asked. */
	const struct audit_still *still;
	/* cancel: added the jobs that waited for those cancelled and ended
	 * with them, down the graph (final_cascade), which each() does not
	 * hear of; NULL: not counted. */
	uint64_t *down;
};

/* The action named name (retry, forget, release, delete, cancel), or
 * NULL. */
const struct bulk_kind *bulk_kind_find(const char *name);
const char *bulk_kind_name(const struct bulk_kind *k);
/* Whether the action reads the dead letter (retry, forget). */
int bulk_kind_dead(const struct bulk_kind *k);

/* How many jobs the action would act on now, and the highest id among
 * them (0 when none): the set a confirmation names. */
int bulk_count(struct db *db, const struct bulk_kind *k, const struct bulk_filter *f, uint64_t *n,
    uint64_t *upto, char *err);
/* The same count over the ids up to upto only. */
int bulk_count_upto(struct db *db, const struct bulk_kind *k, const struct bulk_filter *f, uint64_t upto,
    uint64_t *n, char *err);

/* Hears of each job a step tried: rc DB_OK (done), QUEUE_NOT_FOUND (left
 * the place meanwhile) or another value (refused: a live lease, a lock,
 * an id in the queue again), with err. */
typedef void bulk_each_fn(void *arg, uint64_t id, int rc, const char *err);

/* Acts on up to limit matching jobs with ids in (after, upto], lowest
 * first, each its own transaction (a cancel: all in one, then each
 * alone should that fail), telling each().  *last is the last id
 * tried (after when none); *more says whether ids may remain.  Returns
 * DB_OK, AUDIT_STOPPED, or the error that stopped it (the jobs told of
 * stay done). */
int bulk_step(struct db *db, const struct bulk_kind *k, const struct bulk_filter *f, uint64_t after,
    uint64_t upto, unsigned limit, bulk_each_fn *each, void *arg, uint64_t *last, int *more, char *err);

#endif
