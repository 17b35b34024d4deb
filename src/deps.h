/* deps.h -- jobs that wait for other jobs (sql/021-deps.sql): the
 * release that ends a wait, and the lists `jobq show` prints. */
#ifndef JOBQ_DEPS_H
#define JOBQ_DEPS_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "db.h"
#include "queue_states.h"
#include "util.h"


/* One job a job waits for, or one that waits for it. */
struct dep_view {
	uint64_t id;
	char *state; /* its state (DESIGN 5b), or how it ended */
};

/* The parts of deps_ended_sql: telling the jobs that wait for the job
 * (jobs.has_waiters), and dropping its own rows of jobq_deps (it was
 * enqueued waiting: wait_until is set). */
#define DEPS_WAITERS 1u
#define DEPS_OWN 2u
#define DEPS_ALL (DEPS_WAITERS | DEPS_OWN)
/* With DEPS_WAITERS: each job that waits for it waits for it alone
 * (has_waiters WAITERS_SOLE, read under the caller's lock or fence), so
 * no count above 1 is taken down. */
#define DEPS_SOLE 4u
/* With DEPS_WAITERS: the caller released the jobs whose count was 1
 * itself (the hand-off of a job's one waiter, queue_outcome_sql.c), so
 * that statement is left out. */
#define DEPS_RELEASED 8u

size_t deps_ended_sql(
    struct db *db, struct buf *sql, uint64_t id, const char *how, const char *guard, unsigned parts);
size_t deps_gone_sql(struct buf *sql, const struct buf *ids);
/* A job's links to other jobs (deps_links). */
struct deps_links {
	struct dep_view *after, *by; /* what it waits for, what waits for it */
	struct dep_view *reopens;    /* parked: what a retry of it re-opens */
	size_t nafter, nby, nreopens;
	uint64_t reopened_by; /* parked: the dead job whose retry re-opens it */
};

int deps_links(struct db *db, uint64_t id, struct deps_links *l, char *err);
void deps_links_free(struct deps_links *l);
int deps_count_waiters(
    struct db *db, const uint64_t *ids, size_t n, uint64_t *waiting, uint64_t *reopens, char *err);
cJSON *deps_json(const struct dep_view *d, size_t n);

#endif
