/* queue_view.c -- one job as `jobq show` and `jobq failed show` print
 * it, from jobs or failed_jobs. */
#include "config.h"

#include <mysqld_error.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "queue.h"

#define VIEW_COLUMNS                                                                                       \
	"id, queue, type, payload, priority, attempts, COALESCE(max_attempts, 0), CONVERT_TZ(created_at, " \
	"'+00:00', %q)"
#define VIEW_EXTRA 8 /* the first column after VIEW_COLUMNS */

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
	if ((*row)[7] == NULL) {
		errf(err,
		    "time zone '%s' is unknown to the database server (load its time zone tables with "
		    "mariadb-tzinfo-to-sql, or use an offset like +01:00)",
		    tz);
		db_res_free(*r);
		return DB_EFAIL;
	}
	len = db_res_lengths(*r);
	v->id = strtoull((*row)[0], NULL, 10);
	v->queue = xstrdup((*row)[1]);
	v->type = xstrdup((*row)[2]);
	v->payload = xstrndup((*row)[3], len[3]);
	v->priority = atoi((*row)[4]);
	v->attempts = (unsigned)strtoul((*row)[5], NULL, 10);
	v->max_attempts = (unsigned)strtoul((*row)[6], NULL, 10);
	v->created_at = xstrdup((*row)[7]);
	return DB_OK;
}

/* One job from the queue table, times in tz.  QUEUE_NOT_FOUND when the
 * id is not there. */
int
queue_show(struct db *db, uint64_t id, const char *tz, struct job_view *v, char *err)
{
	struct db_res *r;
	struct buf sql;
	char **row, **x;
	int rc;

	buf_init(&sql);
	db_sql(db, &sql,
	    "SELECT " VIEW_COLUMNS ", CONVERT_TZ(available_at, '+00:00', %q),"
	    " TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), available_at) DIV 1000, reserved_by,"
	    " CONVERT_TZ(reserved_at, '+00:00', %q), CONVERT_TZ(lease_expires_at, '+00:00', %q),"
	    " TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), lease_expires_at) DIV 1000, last_error,"
	    " lease_token IS NOT NULL, lease_expires_at > UTC_TIMESTAMP(6), available_at <= UTC_TIMESTAMP(6)"
	    " FROM jobs WHERE id = %U",
	    tz, tz, tz, tz, id);
	rc = view_fetch(db, &sql, tz, v, &r, &row, err);
	buf_free(&sql);
	if (rc != DB_OK)
		return rc;
	x = row + VIEW_EXTRA;
	v->available_at = xstrdup_or_null(x[0]);
	v->available_in_ms = x[1] ? strtoll(x[1], NULL, 10) : 0;
	v->reserved_by = xstrdup_or_null(x[2]);
	v->reserved_at = xstrdup_or_null(x[3]);
	v->lease_expires_at = xstrdup_or_null(x[4]);
	v->lease_left_ms = x[5] ? strtoll(x[5], NULL, 10) : 0;
	v->last_error = xstrdup_or_null(x[6]);
	if (atoi(x[7]))
		v->state = x[8] && atoi(x[8]) ? "reserved" : "stale";
	else
		v->state = atoi(x[9]) ? "ready" : "delayed";
	db_res_free(r);
	return DB_OK;
}

/* One job from the dead-letter table. */
int
failed_show(struct db *db, uint64_t id, const char *tz, struct job_view *v, char *err)
{
	struct db_res *r;
	struct buf sql;
	char **row, **x;
	int rc;

	buf_init(&sql);
	db_sql(db, &sql,
	    "SELECT " VIEW_COLUMNS ", CONVERT_TZ(failed_at, '+00:00', %q), exception, exit_status, reason"
	    " FROM failed_jobs WHERE id = %U",
	    tz, tz, id);
	rc = view_fetch(db, &sql, tz, v, &r, &row, err);
	buf_free(&sql);
	if (rc != DB_OK)
		return rc;
	x = row + VIEW_EXTRA;
	v->state = "failed";
	v->failed_at = xstrdup_or_null(x[0]);
	v->exception = xstrdup_or_null(x[1]);
	v->exit_status = xstrdup_or_null(x[2]);
	v->reason = xstrdup_or_null(x[3]);
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
	free(v->reserved_by);
	free(v->reserved_at);
	free(v->lease_expires_at);
	free(v->last_error);
	free(v->failed_at);
	free(v->exception);
	free(v->exit_status);
	free(v->reason);
	memset(v, 0, sizeof *v);
}
