/* runs.h -- the run history (job_runs): one row per handler execution. */
#ifndef JOBQ_RUNS_H
#define JOBQ_RUNS_H

#include <stddef.h>
#include <stdint.h>

#include "db.h"

struct run_row {
	unsigned attempt;
	char *queue, *type, *worker, *started_at, *outcome, *exit_status, *error, *output;
	int64_t duration_ms;
};

struct type_stats {
	char *type;
	uint64_t runs, failures;
	double avg_ms;
	int64_t max_ms;
};

int runs_for_job(struct db *db, uint64_t id, const char *tz, struct run_row **rows, size_t *n, char *err);
void runs_free(struct run_row *rows, size_t n);
int runs_stats(struct db *db, int64_t window_ms, struct type_stats **out, size_t *n, char *err);
void type_stats_free(struct type_stats *s, size_t n);
int runs_prune(struct db *db, int64_t older_than_ms, uint64_t *removed, char *err);
int delete_in_chunks(struct db *db, const char *table, const char *where, uint64_t *removed, char *err);

#endif
