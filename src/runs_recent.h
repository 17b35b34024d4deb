/* runs_recent.h -- the last hour of the run history, for the dashboard's
 * chart and counters and for /metrics. */
#ifndef JOBQ_RUNS_RECENT_H
#define JOBQ_RUNS_RECENT_H

#include <stddef.h>
#include <stdint.h>

#include "db.h"

#define RUNS_MINUTES 60

/* runs per minute, [0] the current minute, by outcome */
struct runs_minutes {
	uint64_t done[RUNS_MINUTES], retry[RUNS_MINUTES], dead[RUNS_MINUTES];
};

/* one (key, outcome) count: key is a queue or a type */
struct runs_count {
	char *key, *outcome;
	uint64_t n;
};

int runs_recent_minutes(
    struct db *db, struct runs_minutes *m, struct runs_count **per_queue, size_t *nq, char *err);
int runs_recent_counts(struct db *db, const char *by, struct runs_count **rows, size_t *n, char *err);
void runs_counts_free(struct runs_count *rows, size_t n);

#endif
