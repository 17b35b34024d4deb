/* scheduler.h -- the engine behind `jobq schedule` and `jobq work
 * --schedule`: which fires are due, and each enqueued exactly once. */
#ifndef JOBQ_SCHEDULER_H
#define JOBQ_SCHEDULER_H

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

/* What `jobq schedule --list` shows about one schedule. */
struct schedule_status {
	int64_t next;       /* 0: never */
	char last_fire[40]; /* "" when it never fired */
	int64_t last_fire_t;
	int last_manual;
	char outcome[16]; /* done, queued, running, stale, retrying, failed, skipped, missed */
	uint64_t last_job;
	uint64_t runs, failures, skipped, missed; /* within the window */
};

int scheduler_now(struct db *db, int64_t *now, char *err);
int scheduler_tick(const struct conf *c, struct db *db, const struct scheduler_opts *o,
    struct scheduler_counts *n, char *err);
int scheduler_run_now(const struct conf *c, struct db *db, const struct schedule *s,
    const struct scheduler_opts *o, uint64_t *job_id, char *err);
int scheduler_status(struct db *db, const struct schedule *s, int64_t now, int64_t window_s,
    struct schedule_status *st, char *err);
int64_t scheduler_worker_tick(const struct conf *c, struct db *db);

#endif
