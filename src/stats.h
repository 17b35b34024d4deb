/* stats.h -- the run statistics behind the dashboard's charts: runs per
 * bucket by outcome and the p50/p95 of the wait and the run time, over
 * the last hour, day and week, per queue and type, rolled up from
 * job_runs into jobq_run_stats (sql/018). */
#ifndef JOBQ_STATS_H
#define JOBQ_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "db.h"

/* Runs whose row is this young may belong to a transaction that has not
 * committed yet: the roll-up reads only ids it saw this long ago. */
#define STATS_LAG_MS 3000
#define STATS_CHUNK 5000 /* runs a roll-up step reads at most */

/* One chart range: nbuckets buckets of res seconds, the last one now. */
struct stats_range {
	const char *name; /* "1h", "24h", "7d" */
	unsigned res;     /* seconds a bucket spans */
	unsigned nbuckets;
};

enum { STATS_DONE, STATS_RETRY, STATS_DEAD, STATS_WAIT, STATS_RUN, STATS_KINDS };

/* A chart: per bucket, runs by outcome and the p50 and p95 of the wait
 * and run time in ms (-1: no run); tot_* are the same over the range. */
struct stats_series {
	const struct stats_range *range;
	int64_t now, start; /* the database's time, the first bucket's start (Unix s) */
	int64_t behind;     /* runs written and not rolled up yet (-1: never rolled) */
	uint64_t *count[3];
	double *p50[2], *p95[2]; /* [0] wait, [1] run time */
	uint64_t tot_count[3];
	double tot_p50[2], tot_p95[2];
};

const struct stats_range *stats_range_find(const char *name);
const struct stats_range *stats_ranges(size_t *n);
unsigned stats_bin(int64_t ms);
double stats_bin_ms(unsigned bin);
int stats_rollup(struct db *db, unsigned chunk, int *more, char *err);
int stats_prune(struct db *db, uint64_t *removed, char *err);
int stats_series(struct db *db, const struct stats_range *range, const char *queue, const char *type,
    struct stats_series *s, char *err);
void stats_series_free(struct stats_series *s);

#endif
