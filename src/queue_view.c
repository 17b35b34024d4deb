/* queue_view.c -- one job as `jobq show` and `jobq failed show` print
 * it, from jobs or failed_jobs. */
#include "config.h"

#include <mysqld_error.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backoff.h"
#include "conf.h"
#include "deps.h"
#include "queue.h"

/* The last column tells an unknown time zone (CONVERT_TZ gives NULL for
 * a known instant) from a stored time CONVERT_TZ cannot convert (a zero
 * date written by another program also gives NULL). */
#define VIEW_COLUMNS                                                                                       \
	"id, queue, type, payload, priority, attempts, COALESCE(max_attempts, 0), CONVERT_TZ(created_at, " \
	"'+00:00', %q), CONVERT_TZ('2000-01-01 00:00:00', '+00:00', %q) IS NULL"
#define VIEW_EXTRA 9 /* the first column after VIEW_COLUMNS */

/* Runs a query that starts with VIEW_COLUMNS and fills the fields they
 * hold; *r and *row are left for the caller's own columns (free *r).
 * QUEUE_NOT_FOUND when there is no such row; a time zone the server does
 * not know (CONVERT_TZ gives NULL) is an error. */
static int
view_fetch(struct db *db, const struct buf *sql, const char *tz, struct job_view *v, struct db_res **r,
    char ***row, char *err)
{
	const unsigned long *len;
	int rc;

	memset(v, 0, sizeof *v);
	if ((*r = db_query_buf(db, sql, &rc, err)) == NULL)
		return rc;
	if ((*row = db_res_next(*r)) == NULL) {
		db_res_free(*r);
		return QUEUE_NOT_FOUND;
	}
	if ((*row)[8] == NULL || strcmp((*row)[8], "0") != 0) {
		errf(err,
		    "time zone '%s' is unknown to the database server (load its time zone tables with "
		    "mariadb-tzinfo-to-sql, or use an offset like +01:00)",
		    tz);
		db_res_free(*r);
		return DB_EFAIL;
	}
	len = db_res_lengths(*r);
	v->id = db_col_u64((*row)[0], 0);
	v->queue = xstrdup_or_empty((*row)[1]);
	v->type = xstrdup_or_empty((*row)[2]);
	v->payload = (*row)[3] ? xstrndup((*row)[3], len[3]) : xstrdup("");
	v->priority = (int)db_col_i64((*row)[4], 0);
	v->attempts = (unsigned)db_col_u64((*row)[5], 0);
	v->max_attempts = (unsigned)db_col_u64((*row)[6], 0);
	v->created_at = xstrdup((*row)[7] ? (*row)[7] : "-");
	return DB_OK;
}

/* One job from the queue table, times in tz.  QUEUE_NOT_FOUND when the
 * id is not there.  A job that waits for others has no available_at:
 * its row's is a mark that keeps it out of claims, not a time; its
 * not_before is the time it was enqueued to wait for as well. */
int
queue_show(struct db *db, uint64_t id, const char *tz, struct job_view *v, char *err)
{
	struct db_res *r;
	struct buf sql;
	char **row, **x;
	int rc;

	buf_init(&sql);
	db_sql(db, &sql,
	    "SELECT " VIEW_COLUMNS ", IF(available_at >= " DEPS_NEVER " AND waiting_on > 0, NULL, CONVERT_TZ(available_at, '+00:00', %q)),"
	    " TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), available_at) DIV 1000, reserved_by,"
	    " CONVERT_TZ(reserved_at, '+00:00', %q), CONVERT_TZ(lease_expires_at, '+00:00', %q),"
	    " TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), lease_expires_at) DIV 1000, last_error,"
	    " lease_token IS NOT NULL, lease_expires_at > UTC_TIMESTAMP(6),"
	    " IF(due_at <= UTC_TIMESTAMP(6), 1, IF(due_at >= " DEPS_NEVER " AND waiting_on > 0, 2, 0)),"
	    " progress, progress_note, unique_key, checkpoint, traceparent,"
	    " CONVERT_TZ(expires_at, '+00:00', %q), cancel_by, CONVERT_TZ(cancel_at, '+00:00', %q),"
	    " group_id, (SELECT g.name FROM jobq_groups g WHERE g.id = jobs.group_id),"
	    " IF(available_at >= " DEPS_NEVER " AND waiting_on > 0 AND wait_until > UTC_TIMESTAMP(6),"
	    " CONVERT_TZ(wait_until, '+00:00', %q), NULL)"
	    " FROM jobs WHERE id = %U",
	    tz, tz, tz, tz, tz, tz, tz, tz, id);
	rc = view_fetch(db, &sql, tz, v, &r, &row, err);
	buf_free(&sql);
	if (rc != DB_OK)
		return rc;
	x = row + VIEW_EXTRA;
	v->available_at = xstrdup_or_null(x[0]);
	v->available_in_ms = db_col_i64(x[1], 0);
	v->reserved_by = xstrdup_or_null(x[2]);
	v->reserved_at = xstrdup_or_null(x[3]);
	v->lease_expires_at = xstrdup_or_null(x[4]);
	v->lease_left_ms = db_col_i64(x[5], 0);
	v->last_error = xstrdup_or_null(x[6]);
	v->progress = x[10] != NULL ? (int)db_col_i64(x[10], -1) : -1;
	v->progress_note = xstrdup_or_null(x[11]);
	v->unique_key = xstrdup_or_null(x[12]);
	v->checkpoint = xstrdup_or_null(x[13]);
	v->traceparent = xstrdup_or_null(x[14]);
	v->expires_at = xstrdup_or_null(x[15]);
	v->cancel_by = xstrdup_or_null(x[16]);
	v->cancel_at = xstrdup_or_null(x[17]);
	v->group_id = db_col_u64(x[18], 0);
	v->group_name = xstrdup_or_null(x[19]);
	v->not_before = xstrdup_or_null(x[20]);
	/* The states of DESIGN.md 5b; a token with no expiry is no live
	 * lease (stale), as queue_status counts it. */
	if (db_col_u64(x[7], 0))
		v->state = db_col_u64(x[8], 0) ? "reserved" : "stale";
	else
		v->state = db_col_u64(x[9], 1) == 1 ? "ready"
		    : db_col_u64(x[9], 1) == 2      ? "waiting"
		                                    : "delayed";
	db_res_free(r);
	return DB_OK;
}

/* One job from the dead-letter table, with the unique key it held (a
 * retry takes it back, unless another job holds it by then). */
int
failed_show(struct db *db, uint64_t id, const char *tz, struct job_view *v, char *err)
{
	struct db_res *r;
	struct buf sql;
	char **row, **x;
	int rc;

	buf_init(&sql);
	db_sql(db, &sql,
	    "SELECT " VIEW_COLUMNS ", CONVERT_TZ(failed_at, '+00:00', %q), exception, exit_status, reason,"
	    " checkpoint, traceparent, unique_key FROM failed_jobs WHERE id = %U",
	    tz, tz, tz, id);
	rc = view_fetch(db, &sql, tz, v, &r, &row, err);
	buf_free(&sql);
	if (rc != DB_OK)
		return rc;
	x = row + VIEW_EXTRA;
	v->state = "failed";
	v->progress = -1;
	v->failed_at = xstrdup_or_null(x[0]);
	v->exception = xstrdup_or_null(x[1]);
	v->exit_status = xstrdup_or_null(x[2]);
	v->reason = xstrdup_or_null(x[3]);
	v->checkpoint = xstrdup_or_null(x[4]);
	v->traceparent = xstrdup_or_null(x[5]);
	v->unique_key = xstrdup_or_null(x[6]); /* kept for the retry, which takes it back */
	db_res_free(r);
	return DB_OK;
}

void
job_view_free(struct job_view *v)
{
	free(v->queue);
	free(v->type);
	free(v->payload);
	free(v->created_at);
	free(v->available_at);
	free(v->not_before);
	free(v->reserved_by);
	free(v->reserved_at);
	free(v->lease_expires_at);
	free(v->last_error);
	free(v->failed_at);
	free(v->exception);
	free(v->exit_status);
	free(v->reason);
	free(v->progress_note);
	free(v->unique_key);
	free(v->checkpoint);
	free(v->traceparent);
	free(v->group_name);
	free(v->expires_at);
	free(v->cancel_by);
	free(v->cancel_at);
	memset(v, 0, sizeof *v);
}

/* Whether v is a job that left both tables, as its runs keep it (done,
 * cancelled, expired, forgotten): they keep no priority and no attempt
 * limit, and no attempt of it comes next. */
int
job_view_ended(const struct job_view *v)
{
	static const char *const ended[] = { "done", "cancelled", "expired", "forgotten" };
	size_t i;

	for (i = 0; i < ARRAY_LEN(ended); i++)
		if (strcmp(v->state, ended[i]) == 0)
			return 1;
	return 0;
}

/* v's attempt limit (*max, 0 when its type has no handler and the job
 * names none, or the job has ended: job_view_ended), the attempt whose
 * failure comes next (*failing: the one running, else the next), and the
 * backoff after it (*next_ms: 0 when none follows, that attempt being
 * the last, or no handler knows it). */
void
job_view_policy(const struct conf *c, const struct job_view *v, unsigned *max, int64_t *next_ms, unsigned *failing)
{
	const struct handler *h = job_view_ended(v) ? NULL : conf_handler(c, v->type);

	*max = v->max_attempts ? v->max_attempts : h ? h->max_attempts : 0;
	*failing = strcmp(v->state, "reserved") == 0 ? v->attempts : v->attempts + 1;
	*next_ms = 0;
	if (h != NULL && strcmp(v->state, "failed") != 0 && *failing < *max)
		*next_ms = backoff_nominal(&h->backoff, *failing);
}
