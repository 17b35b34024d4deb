/* scheduler.h -- the engine behind `jobq schedule` and `jobq work
 * --schedule`: which fires are due, and each enqueued exactly once. */
#ifndef JOBQ_SCHEDULER_H
#define JOBQ_SCHEDULER_H

#include <stddef.h>
#include <stdint.h>

#include "conf.h"
#include "db.h"

/* How a tick tells what it did: important lines (late, missed, skipped,
 * problems) and routine ones (on-time enqueues). */
struct scheduler_opts {
	int dry_run; /* print what would be enqueued; write nothing */
	void (*say)(void *arg, int important, const char *line);
	void *arg;
};

/* A tick's totals. */
struct scheduler_counts {
	unsigned enqueued, skipped, missed, late, failed;
};

int scheduler_tick(const struct conf *c, struct db *db, const struct scheduler_opts *o,
    struct scheduler_counts *n, char *err);
struct audit_entry;
int scheduler_run_now(const struct conf *c, struct db *db, const struct schedule *s,
    const struct scheduler_opts *o, const struct audit_entry *a, uint64_t *job_id, char *err);
int64_t scheduler_worker_tick(const struct conf *c, struct db *db);

#endif
