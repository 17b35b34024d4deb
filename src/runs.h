/* runs.h -- the run history (job_runs): one row per handler execution. */
#ifndef JOBQ_RUNS_H
#define JOBQ_RUNS_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "db.h"

struct run_row {
	unsigned attempt;
	char *queue, *type, *worker, *started_at, *outcome, *exit_status, *error, *output;
	char *result;  /* the handler's {"result": ...} JSON, or NULL */
	/* the line of error that names it, else how a failed run ended
	 * (errtext_summary_or), or NULL */
	char *summary;
	char *enqueued_at; /* the job's created_at, or NULL (runs before schema 13) */
	char *payload;     /* the job's payload, kept by the run that made it done, or NULL */
	char *follow_ups;  /* the done run's follow-up job ids, "12,13", or NULL */
	char *trace_id, *span_id; /* the trace context it ran under (TRACEPARENT), or NULL */
	int64_t duration_ms;
};

struct type_stats {
	char *type;
	uint64_t runs, failures;
	double avg_ms;
	int64_t max_ms;
};

int runs_for_job(struct db *db, uint64_t id, const char *tz, struct run_row **rows, size_t *n, char *err);
int runs_job_end(struct db *db, uint64_t id, const char *tz, struct run_row **rows, size_t *n, char *err);
int runs_for_job_last(struct db *db, uint64_t id, const char *tz, unsigned last, struct run_row **rows,
    size_t *n, uint64_t *total, char *err);
void runs_free(struct run_row *rows, size_t n);
cJSON *runs_follow_ups_json(const char *list);
struct job_view;
void runs_job_view(struct job_view *v, uint64_t id, const struct run_row *runs, size_t nruns);
struct runs_stats {
	struct type_stats *types;
	size_t n;
	int capped;         /* more runs in the window than the cap */
	int64_t covered_ms; /* how far back the numbers reach */
	int64_t oldest_ms;  /* age of the oldest run counted */
};

int runs_stats(struct db *db, int64_t window_ms, unsigned max_runs, struct runs_stats *st, char *err);
void runs_stats_free(struct runs_stats *st);
int runs_prune(struct db *db, int64_t older_than_ms, int with_failed, int count_only, uint64_t *removed, char *err);
int runs_prune_finished(struct db *db, int64_t older_than_ms, unsigned limit, uint64_t *removed, char *err);
int count_rows(struct db *db, const char *table, const char *where, uint64_t *n, char *err);
int delete_in_chunks(
    struct db *db, const char *table, const char *where, int count_only, uint64_t *removed, char *err);
struct audit_entry;
struct audit_still;
int delete_in_chunks_audited(struct db *db, const char *table, const char *where, const struct audit_entry *a,
    const struct audit_still *still, uint64_t *removed, char *err);

#endif
