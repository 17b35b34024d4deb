/* deps.h -- jobs that wait for other jobs (sql/021-deps.sql): the
 * release that ends a wait, and the lists `jobq show` prints. */
#ifndef JOBQ_DEPS_H
#define JOBQ_DEPS_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "db.h"
#include "util.h"

/* The available_at of a job that waits: after every due row of the
 * reservation index, so claims never read it. */
#define DEPS_NEVER "'9999-12-31 23:59:59'"

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

size_t deps_ended_sql(
    struct db *db, struct buf *sql, uint64_t id, const char *how, const char *guard, unsigned parts);
int deps_list(struct db *db, uint64_t id, struct dep_view **after, size_t *nafter, struct dep_view **by,
    size_t *nby, char *err);
void deps_list_free(struct dep_view *d, size_t n);
int deps_count_waiters(struct db *db, const uint64_t *ids, size_t n, uint64_t *counts, char *err);
cJSON *deps_json(const struct dep_view *d, size_t n);

#endif
