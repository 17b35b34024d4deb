/* runs.c -- read and trim the run history.
 *
 * Rows are written by queue.c in the same transaction as the outcome
 * they record; this file only reads them and deletes old ones. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"
#include "errtext.h"
#include "queue.h"
#include "queue_states.h"
#include "runs.h"

#define CHUNK 1000

/* A job that left the queue, as its runs keep it: done when one of them
 * is, cancelled or expired when its last run that ends a job says so,
 * forgotten (from the dead letter) otherwise; queue, type and attempts
 * from that run (the last run when none ends it), created_at and payload
 * from the newest run that has them (the run that made it done keeps
 * the payload, sql/013), NULL where none does.  v's strings point into
 * runs: free the runs, never v.  runs must not be empty. */
void
runs_job_view(struct job_view *v, uint64_t id, const struct run_row *runs, size_t nruns)
{
	size_t i, end = nruns - 1;
	int done = 0, ended = 0;

	memset(v, 0, sizeof *v);
	v->id = id;
	v->progress = -1;
	for (i = 0; i < nruns; i++) {
		done |= strcmp(runs[i].outcome, "done") == 0;
		if (run_end_word(runs[i].outcome) != NULL)
			end = i, ended = 1;
		if (runs[i].enqueued_at != NULL)
			v->created_at = runs[i].enqueued_at;
		if (runs[i].payload != NULL)
			v->payload = runs[i].payload;
	}
	if (done)
		v->state = "done";
	else if (ended && strcmp(runs[end].outcome, "cancelled") == 0)
		v->state = "cancelled";
	else if (ended && strcmp(runs[end].outcome, "expired") == 0)
		v->state = "expired";
	else
		v->state = "forgotten";
	v->queue = runs[end].queue;
	v->type = runs[end].type;
	v->attempts = runs[end].attempt;
}

/* The columns run_rows reads, times shown in the zone of the two %q. */
#define RUN_ROW_COLUMNS                                                                                  \
	"id, attempt, worker, CONVERT_TZ(started_at, '+00:00', %q), duration_ms, outcome, exit_status, error," \
	" queue, type, output, result, CONVERT_TZ(enqueued_at, '+00:00', %q), payload, follow_ups, trace_id,"  \
	" span_id"

static void run_rows(struct db_res *r, struct run_row **rows, size_t *n);

/* The run that ends job id (one that left both tables), as
 * runs_job_view picks it among all its runs: its done run, else its last
 * run whose outcome ends a job; *n is 0 when it has none.  For a view
 * of the job when only a window of its runs is read (show --runs). */
int
runs_job_end(struct db *db, uint64_t id, const char *tz, struct run_row **rows, size_t *n, char *err)
{
	struct db_res *r;
	int rc;

	*rows = NULL;
	*n = 0;
	r = db_query(db, &rc, err,
	    "SELECT " RUN_ROW_COLUMNS " FROM job_runs WHERE job_id = %U AND " RUN_ENDS_JOB
	    " ORDER BY outcome = 'done' DESC, id DESC LIMIT 1",
	    tz, tz, id);
	if (r == NULL)
		return rc;
	run_rows(r, rows, n);
	return DB_OK;
}

/* The last `last` runs of one job (all when 0), oldest first, times
 * shown in tz (an offset like '+00:00' or a zone name the server knows);
 * *total is how many it has in all.  Served by the (job_id, id) index:
 * a job with 20,000 runs costs `last` rows, not 20,000. */
int
runs_for_job_last(struct db *db, uint64_t id, const char *tz, unsigned last, struct run_row **rows, size_t *n,
    uint64_t *total, char *err)
{
	struct db_res *r;
	char limit[32] = "";
	int rc;

	*rows = NULL;
	*n = 0;
	if (last > 0)
		snprintf(limit, sizeof limit, " LIMIT %u", last);
	r = db_query(db, &rc, err,
	    "SELECT * FROM (SELECT " RUN_ROW_COLUMNS " FROM job_runs WHERE job_id = %U ORDER BY id DESC%s) r"
	    " ORDER BY id",
	    tz, tz, id, limit);
	if (r == NULL)
		return rc;
	run_rows(r, rows, n);
	*total = *n;
	if (last > 0 && *n == last) {
		char where[64];

		snprintf(where, sizeof where, "job_id = %llu", (unsigned long long)id);
		if ((rc = count_rows(db, "job_runs", where, total, err)) != DB_OK) {
			runs_free(*rows, *n);
			*rows = NULL;
			*n = 0;
			return rc;
		}
	}
	return DB_OK;
}

/* What a failed run (dead or retry) is summed up by when its handler
 * wrote no error line (exit 3, stderr empty): how it ended, as job_runs
 * keeps it ("exit 3", "timed out after 30s", "killed by SIGKILL"), as
 * failed_list falls back on the dead letter's reason (errtext_summary_or):
 * a blank would hide why it failed.  NULL for any other run. */
static const char *
failure_reason(const char *outcome, const char *exit_status)
{
	if (outcome == NULL || exit_status == NULL || *exit_status == '\0')
		return NULL;
	return strcmp(outcome, "dead") == 0 || strcmp(outcome, "retry") == 0 ? exit_status : NULL;
}

/* Reads r's rows (RUN_ROW_COLUMNS) into *rows, a new array, and frees r. */
static void
run_rows(struct db_res *r, struct run_row **rows, size_t *n)
{
	char **row;

	*rows = xcalloc(db_res_rows(r) + 1, sizeof **rows);
	while ((row = db_res_next(r)) != NULL) {
		struct run_row *x = &(*rows)[(*n)++];
		const char *reason;

		/* Only error may be NULL for the printers; started_at is NULL
		 * when CONVERT_TZ cannot convert a stored zero date. */
		x->attempt = (unsigned)db_col_u64(row[1], 0);
		x->worker = xstrdup_or_empty(row[2]);
		x->started_at = xstrdup(row[3] ? row[3] : "-");
		x->duration_ms = db_col_i64(row[4], 0);
		x->outcome = xstrdup_or_empty(row[5]);
		x->exit_status = xstrdup_or_empty(row[6]);
		x->error = xstrdup_or_null(row[7]);
		reason = failure_reason(row[5], row[6]);
		x->summary = row[7] != NULL || reason != NULL ? errtext_summary_or(row[7], reason) : NULL;
		x->queue = xstrdup_or_empty(row[8]);
		x->type = xstrdup_or_empty(row[9]);
		x->output = xstrdup_or_null(row[10]);
		x->result = xstrdup_or_null(row[11]);
		x->enqueued_at = xstrdup_or_null(row[12]);
		x->payload = xstrdup_or_null(row[13]);
		x->follow_ups = xstrdup_or_null(row[14]);
		x->trace_id = xstrdup_or_null(row[15]);
		x->span_id = xstrdup_or_null(row[16]);
	}
	db_res_free(r);
}

/* Every run of one job, oldest first (see runs_for_job_last). */
int
runs_for_job(struct db *db, uint64_t id, const char *tz, struct run_row **rows, size_t *n, char *err)
{
	uint64_t total;

	return runs_for_job_last(db, id, tz, 0, rows, n, &total, err);
}

/* A done run's follow-up ids ("12,13", as job_runs.follow_ups keeps
 * them) as a JSON array of numbers; NULL when there are none. */
cJSON *
runs_follow_ups_json(const char *list)
{
	cJSON *a;

	if (list == NULL || *list == '\0')
		return NULL;
	a = cJSON_CreateArray();
	while (*list != '\0') {
		char *end;
		unsigned long long id = strtoull(list, &end, 10);

		if (end == list)
			break;
		cJSON_AddItemToArray(a, cJSON_CreateNumber((double)id));
		list = *end == ',' ? end + 1 : end;
	}
	return a;
}

void
runs_free(struct run_row *rows, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(rows[i].queue);
		free(rows[i].type);
		free(rows[i].worker);
		free(rows[i].started_at);
		free(rows[i].outcome);
		free(rows[i].exit_status);
		free(rows[i].error);
		free(rows[i].output);
		free(rows[i].result);
		free(rows[i].follow_ups);
		free(rows[i].summary);
		free(rows[i].enqueued_at);
		free(rows[i].payload);
		free(rows[i].trace_id);
		free(rows[i].span_id);
	}
	free(rows);
}

/* Per job type over the newest runs of the last window_ms, at most
 * max_runs of them: runs, failures, mean and longest duration (a job
 * cancelled or expired unstarted has a run row of no time, and no run:
 * left out, by the index's own columns).  A failure is what the
 * dashboard's charts count as retry or dead: a retry, a dead end, or a
 * run its worker's stop interrupted; not a run a person cancelled, nor
 * one whose lease was lost (the worker that took the job over writes
 * its outcome).  The cap
 * bounds the cost however busy the day was (served backwards by the
 * covering index job_runs_recent, sql/006); *covered_ms says what the
 * numbers cover: window_ms, or less when the cap was reached
 * (*capped = 1). */
int
runs_stats(struct db *db, int64_t window_ms, unsigned max_runs, struct runs_stats *st, char *err)
{
	struct db_res *r;
	char **row;
	uint64_t total = 0;
	int rc;

	memset(st, 0, sizeof *st);
	st->covered_ms = window_ms;
	r = db_query(db, &rc, err,
	    "SELECT type, COUNT(*), SUM(outcome IN ('retry', 'dead', 'interrupted')),"
	    " AVG(duration_ms), MAX(duration_ms),"
	    " TIMESTAMPDIFF(MICROSECOND, MIN(started_at), UTC_TIMESTAMP(6)) DIV 1000"
	    " FROM (SELECT type, outcome, duration_ms, started_at FROM job_runs"
	    "  WHERE started_at >= UTC_TIMESTAMP(6) - INTERVAL %I MICROSECOND"
	    "  ORDER BY started_at DESC LIMIT %u) recent"
	    " WHERE " RUN_HANDLER_RAN
	    " GROUP BY type ORDER BY type",
	    window_ms * 1000, max_runs);
	if (r == NULL)
		return rc;
	st->types = xcalloc(db_res_rows(r) + 1, sizeof *st->types);
	while ((row = db_res_next(r)) != NULL) {
		struct type_stats *s = &st->types[st->n++];
		int64_t age = row[5] ? strtoll(row[5], NULL, 10) : 0;

		s->type = xstrdup_or_empty(row[0]);
		s->runs = strtoull(row[1], NULL, 10);
		s->failures = row[2] ? strtoull(row[2], NULL, 10) : 0;
		s->avg_ms = row[3] ? strtod(row[3], NULL) : 0;
		s->max_ms = row[4] ? strtoll(row[4], NULL, 10) : 0;
		total += s->runs;
		if (age > st->oldest_ms)
			st->oldest_ms = age;
	}
	db_res_free(r);
	if (max_runs > 0 && total >= max_runs) {
		st->capped = 1;
		st->covered_ms = st->oldest_ms;
	}
	return DB_OK;
}

void
runs_stats_free(struct runs_stats *st)
{
	size_t i;

	for (i = 0; i < st->n; i++)
		free(st->types[i].type);
	free(st->types);
	memset(st, 0, sizeof *st);
}

/* How many rows of table match where (SQL text the caller built). */
int
count_rows(struct db *db, const char *table, const char *where, uint64_t *n, char *err)
{
	struct db_res *r;
	char **row;
	int rc;

	*n = 0;
	if ((r = db_query(db, &rc, err, "SELECT COUNT(*) FROM %s WHERE %s", table, where)) == NULL)
		return rc;
	if ((row = db_res_next(r)) != NULL)
		*n = db_col_u64(row[0], 0);
	db_res_free(r);
	return DB_OK;
}

/* Appends the statement that deletes one chunk of where's rows. */
static void
chunk_sql(struct db *db, struct buf *sql, const char *table, const char *where)
{
	db_sql(db, sql, "DELETE FROM %s WHERE %s LIMIT %d", table, where, CHUNK);
}

/* Deletes matching rows CHUNK at a time, each chunk its own statement,
 * so that trimming a big table never holds locks for long nor fills the
 * undo log.  where is SQL text the caller built.  With count_only, only
 * counts them (--dry-run, and the number a confirmation states): the
 * same where clause, so the count is of exactly what would go. */
int
delete_in_chunks(
    struct db *db, const char *table, const char *where, int count_only, uint64_t *removed, char *err)
{
	struct buf sql;
	int rc;

	if (count_only)
		return count_rows(db, table, where, removed, err);
	*removed = 0;
	buf_init(&sql);
	chunk_sql(db, &sql, table, where);
	do {
		if ((rc = db_exec_retry(db, &sql, NULL, 0, err)) != DB_OK)
			break;
		*removed += db_affected(db);
	} while (db_affected(db) == CHUNK);
	buf_free(&sql);
	return rc;
}

/* delete_in_chunks (never count_only), each chunk one transaction with
 * the audit row of a that counts the rows it deleted (audit_sql_counted:
 * none for a chunk that found none): whatever stops the run, every row
 * gone is counted in a row of the audit table, and no row counts one
 * that is still there.  still is asked before each chunk: refused, the
 * run stops there with AUDIT_STOPPED, *removed counting what went, unless
 * no row was left to delete. */
int
delete_in_chunks_audited(struct db *db, const char *table, const char *where, const struct audit_entry *a,
    const struct audit_still *still, uint64_t *removed, char *err)
{
	uint64_t affected[2];
	struct buf sql;
	int rc;

	*removed = 0;
	buf_init(&sql);
	buf_adds(&sql, "START TRANSACTION;");
	chunk_sql(db, &sql, table, where);
	buf_adds(&sql, ";SET @jobq_chunk = ROW_COUNT();");
	audit_sql_counted(db, &sql, a, "@jobq_chunk");
	buf_adds(&sql, ";COMMIT");
	do {
		affected[1] = 0;
		if ((rc = audit_still_ok(still, err)) != DB_OK ||
		    (rc = db_exec_retry(db, &sql, affected, 2, err)) != DB_OK)
			break;
		*removed += affected[1];
	} while (affected[1] == CHUNK);
	buf_free(&sql);
	/* A last chunk of exactly CHUNK rows leaves one more pass to run:
	 * refused there, the run had ended all the same unless rows are
	 * left (a stop answered for a run that had finished is false). */
	if (rc == AUDIT_STOPPED && *removed > 0) {
		uint64_t left;
		char cerr[ERRSZ];

		if (count_rows(db, table, where, &left, cerr) == DB_OK && left == 0)
			rc = DB_OK;
	}
	return rc;
}

/* The runs no pruning takes: those of a job a dead dependency
 * cancelled and parked (park.c), which its retry may re-open, and of the
 * jobs such a job waits for, whose ends the re-open weighs (a pruned
 * one would count as done, and a job meant to stay cancelled would run).
 * Each a lookup by key per run (sql/027-parked-deps-index.sql). */
#define PARKED_SPARED                                                                   \
	" AND NOT EXISTS (SELECT 1 FROM jobq_parked WHERE jobq_parked.id = job_runs.job_id)" \
	" AND NOT EXISTS (SELECT 1 FROM jobq_parked_deps pd WHERE pd.after_id = job_runs.job_id)"

/* The runs of a job not finished: still in jobs (queued, retrying,
 * running), or dead-lettered (failed_jobs: %s is the extra condition on
 * the failed row that keeps its runs).  A lookup by key per run. */
#define UNFINISHED_SPARED                                                 \
	" AND NOT EXISTS (SELECT 1 FROM jobs WHERE jobs.id = job_runs.job_id)" \
	" AND NOT EXISTS (SELECT 1 FROM failed_jobs WHERE failed_jobs.id = job_runs.job_id%s)"

/* Deletes (or with count_only counts) runs that started more than
 * older_than_ms ago of jobs that have finished, as keep_done does (but
 * PARKED_SPARED); with with_failed, also those of dead-lettered jobs that
 * failed that long ago (which `prune --failed` deletes). */
int
runs_prune(struct db *db, int64_t older_than_ms, int with_failed, int count_only, uint64_t *removed, char *err)
{
	struct buf where, failed;
	int rc;

	buf_init(&where);
	buf_init(&failed);
	if (with_failed)
		db_sql(db, &failed, " AND failed_at >= UTC_TIMESTAMP(6) - INTERVAL %I MICROSECOND",
		    older_than_ms * 1000);
	db_sql(db, &where, "started_at < UTC_TIMESTAMP(6) - INTERVAL %I MICROSECOND" PARKED_SPARED,
	    older_than_ms * 1000);
	buf_printf(&where, UNFINISHED_SPARED, failed.len ? failed.data : "");
	buf_free(&failed);
	rc = delete_in_chunks(db, "job_runs", where.data, count_only, removed, err);
	buf_free(&where);
	return rc;
}

/* Deletes up to limit runs, oldest first, that started more than
 * older_than_ms ago and belong to a finished job: one in neither jobs
 * (still queued or retrying) nor failed_jobs (dead-lettered), whose runs
 * stay as long as the job does.  One statement, walking the started_at
 * index from its oldest end, so it costs the rows it deletes plus the
 * old runs of jobs not finished (few: a job retrying for longer than
 * keep_done, a dead job kept that long). */
int
runs_prune_finished(struct db *db, int64_t older_than_ms, unsigned limit, uint64_t *removed, char *err)
{
	int rc = db_exec(db, err,
	    "DELETE FROM job_runs WHERE started_at < UTC_TIMESTAMP(6) - INTERVAL %I MICROSECOND"
	    PARKED_SPARED UNFINISHED_SPARED " ORDER BY started_at LIMIT %u",
	    older_than_ms * 1000, "", limit);

	*removed = rc == DB_OK ? db_affected(db) : 0;
	return rc;
}
