/* schedule_view.c -- read-only views of the schedules: the status
 * `jobq schedule --list` shows for each (next fire, last fire and its
 * outcome, counts over a window), the same as JSON for --list --json and
 * the dashboard, and a schedule's fire history.  A view over the stored
 * schedules (schedules.c), the cron module's next-fire times and the
 * jobq_schedule_runs rows the scheduler (scheduler.c) writes; it never
 * ticks or enqueues.  Used by cmd_schedule.c and serve_schedules.c. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cron.h"
#include "schedule_view.h"
#include "schedules.h"

/* The outcome word of the job a fire enqueued: a job gone from jobs
 * and from the dead letter ended done, cancelled or expired, as its
 * last run row says (done when its runs were pruned). */
static void
job_outcome(char **row, char *out, size_t len)
{
	const char *w = "done";

	if (strcmp(row[2], "enqueued") != 0)
		w = row[2];
	else if (row[9] != NULL && strcmp(row[9], "1") == 0)
		w = "failed";
	else if (row[4] != NULL && strcmp(row[4], "0") == 0 && row[12] != NULL &&
	    (strcmp(row[12], "cancelled") == 0 || strcmp(row[12], "expired") == 0))
		w = row[12]; /* ended, but not done: its last run row says how */
	else if (row[5] != NULL && strcmp(row[5], "1") == 0)
		w = "running";
	else if (row[6] != NULL && strcmp(row[6], "1") == 0)
		w = "stale";
	else if (row[7] != NULL && strtoull(row[7], NULL, 10) > 0)
		w = "retrying";
	else if (row[4] != NULL && strcmp(row[4], "1") == 0)
		w = "queued";
	snprintf(out, len, "%s", w);
}

/* The last limit fires of the schedule named name, newest first, each
 * with what became of its job, and a dead-lettered job's error summed
 * up as failed list sums it up (its reason when its stderr names
 * nothing: errtext_summary_or).  The one query behind both the "last
 * fire" of --list and the dashboard's history.  *out is NULL when there
 * are none; free it with free(). */
int
schedule_view_history(
    struct db *db, const char *name, unsigned limit, struct schedule_fire **out, size_t *n, char *err)
{
	struct db_res *r;
	char **row, *sum;
	int rc;

	*out = NULL;
	*n = 0;
	r = db_query(db, &rc, err,
	    "SELECT r.fire_at, UNIX_TIMESTAMP(r.fire_at), r.status, r.job_id, j.id IS NOT NULL,"
	    " j.lease_token IS NOT NULL AND j.lease_expires_at > UTC_TIMESTAMP(6),"
	    " j.lease_token IS NOT NULL AND j.lease_expires_at <= UTC_TIMESTAMP(6),"
	    " j.attempts, r.manual, f.id IS NOT NULL, %s, f.reason,"
	    " (SELECT jr.outcome FROM job_runs jr WHERE jr.job_id = r.job_id ORDER BY jr.id DESC LIMIT 1)"
	    " FROM jobq_schedule_runs r LEFT JOIN jobs j ON j.id = r.job_id LEFT JOIN failed_jobs f ON f.id "
	    "= r.job_id"
	    " WHERE r.name = %q ORDER BY r.fire_at DESC LIMIT %u",
	    ERRTEXT_SQL("f.exception"), name, limit);
	if (r == NULL)
		return rc;
	if (db_res_rows(r) > 0)
		*out = xcalloc(db_res_rows(r), sizeof **out);
	while ((row = db_res_next(r)) != NULL) {
		struct schedule_fire *f = &(*out)[(*n)++];

		snprintf(f->at, sizeof f->at, "%s", row[0]);
		f->at_t = strtoll(row[1], NULL, 10);
		f->job = row[3] ? strtoull(row[3], NULL, 10) : 0;
		f->manual = strcmp(row[8], "1") == 0;
		job_outcome(row, f->outcome, sizeof f->outcome);
		sum = errtext_summary_or(row[10], row[11]);
		snprintf(f->error, sizeof f->error, "%s", sum);
		free(sum);
	}
	db_res_free(r);
	return DB_OK;
}

/* The newest fire of s and what became of it, into st. */
static int
last_fire(struct db *db, const struct schedule *s, struct schedule_status *st, char *err)
{
	struct schedule_fire *f;
	size_t n;
	int rc;

	if ((rc = schedule_view_history(db, s->name, 1, &f, &n, err)) != DB_OK)
		return rc;
	if (n > 0) {
		snprintf(st->last_fire, sizeof st->last_fire, "%s", f->at);
		st->last_fire_t = f->at_t;
		st->last_job = f->job;
		st->last_manual = f->manual;
		snprintf(st->outcome, sizeof st->outcome, "%s", f->outcome);
		snprintf(st->last_error, sizeof st->last_error, "%s", f->error);
	}
	free(f);
	return DB_OK;
}

/* The first fire of s after t (seconds since the epoch), in its time
 * zone; 0 when it will not fire (disabled, or its cron never matches
 * again). */
int64_t
schedule_view_next_after(const struct schedule *s, int64_t t)
{
	struct cron_zone *z = NULL;
	struct cron *cr;
	char e2[ERRSZ];
	int64_t next = 0;

	if (s->enabled && (z = cron_zone_open(s->timezone ? s->timezone : "UTC", e2)) != NULL &&
	    (cr = cron_parse(s->cron, e2)) != NULL) {
		if (cron_next(cr, z, t, &next) != CRON_FOUND)
			next = 0;
		cron_free(cr);
	}
	cron_zone_free(z);
	return next;
}

/* What `jobq schedule --list` shows for s: next fire after now (none
 * when s is disabled: it will not fire), the last fire and what became
 * of its job, and counts over the last window_s seconds (runs: jobs
 * enqueued; failures: those now dead-lettered). */
int
schedule_view_status(struct db *db, const struct schedule *s, int64_t now, int64_t window_s,
    struct schedule_status *st, char *err)
{
	struct db_res *r;
	char **row;
	int rc;

	memset(st, 0, sizeof *st);
	st->next = schedule_view_next_after(s, now);
	if ((rc = last_fire(db, s, st, err)) != DB_OK)
		return rc;
	r = db_query(db, &rc, err,
	    "SELECT COUNT(r.job_id), COUNT(f.id), COALESCE(SUM(r.status = 'skipped'), 0),"
	    " COALESCE(SUM(r.status = 'missed'), 0)"
	    " FROM jobq_schedule_runs r LEFT JOIN failed_jobs f ON f.id = r.job_id"
	    " WHERE r.name = %q AND r.fire_at >= FROM_UNIXTIME(%I)",
	    s->name, now - window_s);
	if (r == NULL)
		return rc;
	if ((row = db_res_next(r)) != NULL) {
		st->runs = strtoull(row[0], NULL, 10);
		st->failures = strtoull(row[1], NULL, 10);
		st->skipped = strtoull(row[2], NULL, 10);
		st->missed = strtoull(row[3], NULL, 10);
	}
	db_res_free(r);
	return DB_OK;
}

/* t as ISO 8601 in the schedule's zone ("never" for 0, "-" when the
 * zone cannot be opened). */
const char *
schedule_view_fire_text(const struct schedule *s, int64_t t, char *buf, size_t len)
{
	char e2[ERRSZ];
	struct cron_zone *z = cron_zone_open(s->timezone ? s->timezone : "UTC", e2);

	if (t == 0 || z == NULL)
		snprintf(buf, len, "%s", t == 0 ? "never" : "-");
	else
		cron_format(z, t, buf, len);
	cron_zone_free(z);
	return buf;
}

/* What --list and the dashboard show for a name the database keeps a
 * switch or fires of that is no schedule any more (schedules_orphans:
 * an INI section renamed or taken out of the file): a disabled schedule
 * of that name whose problem says what it is and how to delete what it
 * left (`jobq schedule remove`, which takes such names too).  Free it
 * with schedule_free(). */
struct schedule *
schedule_view_gone(const char *name)
{
	struct schedule *s = schedule_new(name, SCHEDULE_DB);
	char why[300];

	s->enabled = 0;
	s->cron = xstrdup("-");
	s->timezone = xstrdup("UTC");
	snprintf(why, sizeof why,
	    "in neither the file nor the database (renamed or removed); 'jobq schedule remove %s' deletes"
	    " its switch and fires",
	    name);
	s->problem = xstrdup(why);
	return s;
}

/* The keys a gone name (schedule_view_gone) has no value for: null. */
static const char *const gone_null[] = { "source", "cron", "when", "description", "type", "queue", "timezone",
	"overlap", "catch_up_s", "catch_up", "alert_after_s" };

/* One schedule as `jobq schedule --list --json` (and the dashboard)
 * show it: every key always, null when it has no value, so that a
 * script reads every schedule the same way.  gone: s is a gone name's
 * (schedule_view_gone), "gone": true with only its name, fires, counts
 * and problem. */
static cJSON *
status_json(const struct schedule *s, const struct schedule_status *st, int gone)
{
	cJSON *o = cJSON_CreateObject();
	char buf[64];
	char *when = NULL, e2[ERRSZ];
	struct cron *cr = cron_parse(s->cron, e2);
	size_t i;

	cJSON_AddStringToObject(o, "name", s->name);
	cJSON_AddBoolToObject(o, "gone", gone);
	cJSON_AddStringToObject(o, "source", s->source == SCHEDULE_INI ? "ini" : "db");
	cJSON_AddBoolToObject(o, "enabled", s->enabled);
	cJSON_AddStringToObject(o, "cron", s->cron);
	if (cr != NULL) {
		when = cron_describe(cr);
		cJSON_AddStringToObject(o, "when", when);
		free(when);
		cron_free(cr);
	} else
		cJSON_AddNullToObject(o, "when");
	cJSON_AddStringToObject(o, "description", s->description ? s->description : "");
	cJSON_AddStringToObject(o, "type", s->type ? s->type : "");
	cJSON_AddStringToObject(o, "queue", s->queue ? s->queue : "");
	cJSON_AddStringToObject(o, "timezone", s->timezone ? s->timezone : "");
	cJSON_AddStringToObject(o, "overlap", s->overlap_allow ? "allow" : "skip");
	cJSON_AddNumberToObject(o, "catch_up_s", (double)(s->catch_up_ms / 1000));
	cJSON_AddStringToObject(o, "catch_up", schedules_catch_up_name(s->catch_up_mode));
	cJSON_AddNumberToObject(o, "alert_after_s", (double)(s->alert_after_ms / 1000));
	if (st->next != 0)
		cJSON_AddStringToObject(
		    o, "next_fire", schedule_view_fire_text(s, st->next, buf, sizeof buf));
	else
		cJSON_AddNullToObject(o, "next_fire");
	if (st->last_fire[0] != '\0') {
		cJSON_AddStringToObject(
		    o, "last_fire", schedule_view_fire_text(s, st->last_fire_t, buf, sizeof buf));
		cJSON_AddStringToObject(o, "last_outcome", st->outcome);
		cJSON_AddBoolToObject(o, "last_manual", st->last_manual);
	} else {
		cJSON_AddNullToObject(o, "last_fire");
		cJSON_AddNullToObject(o, "last_outcome");
		cJSON_AddFalseToObject(o, "last_manual");
	}
	if (st->last_job)
		cJSON_AddNumberToObject(o, "last_job", (double)st->last_job);
	else
		cJSON_AddNullToObject(o, "last_job");
	if (strcmp(st->outcome, "failed") == 0)
		cJSON_AddStringToObject(o, "last_error", st->last_error);
	else
		cJSON_AddNullToObject(o, "last_error");
	cJSON_AddNumberToObject(o, "runs", (double)st->runs);
	cJSON_AddNumberToObject(o, "failures", (double)st->failures);
	cJSON_AddNumberToObject(o, "skipped", (double)st->skipped);
	cJSON_AddNumberToObject(o, "missed", (double)st->missed);
	if (s->problem)
		cJSON_AddStringToObject(o, "problem", s->problem);
	else
		cJSON_AddNullToObject(o, "problem");
	for (i = 0; gone && i < ARRAY_LEN(gone_null); i++)
		cJSON_ReplaceItemInObject(o, gone_null[i], cJSON_CreateNull());
	return o;
}

/* Appends to arr the gone names (schedules_orphans) beside the
 * schedules of v, as status_json shows them. */
static int
gone_json(
    struct db *db, struct schedule *const *v, size_t n, int64_t now, int64_t window_s, cJSON *arr, char *err)
{
	struct schedule_status st;
	char **names;
	size_t nn, i;
	int rc;

	if ((rc = schedules_orphans(db, v, n, &names, &nn, err)) != DB_OK)
		return rc;
	for (i = 0; i < nn && rc == DB_OK; i++) {
		struct schedule *s = schedule_view_gone(names[i]);

		if ((rc = schedule_view_status(db, s, now, window_s, &st, err)) == DB_OK)
			cJSON_AddItemToArray(arr, status_json(s, &st, 1));
		schedule_free(s);
	}
	strv_free(names);
	return rc;
}

/* Every schedule (INI and database) with its status over the last
 * window_s seconds, then the gone names (schedule_view_gone), as the
 * JSON array `jobq schedule --list --json` prints.  Returns DB_OK (and
 * *out) or a DB_* code. */
int
schedule_view_list_json(const struct conf *c, struct db *db, int64_t window_s, cJSON **out, char *err)
{
	struct schedule **v;
	struct schedule_status st;
	int64_t now;
	size_t n, i;
	int rc;

	*out = NULL;
	if ((rc = schedules_now(db, &now, err)) != DB_OK ||
	    (rc = schedules_load(c, db, &v, &n, err)) != DB_OK)
		return rc;
	*out = cJSON_CreateArray();
	for (i = 0; i < n; i++) {
		if ((rc = schedule_view_status(db, v[i], now, window_s, &st, err)) != DB_OK)
			break;
		cJSON_AddItemToArray(*out, status_json(v[i], &st, 0));
	}
	if (rc == DB_OK)
		rc = gone_json(db, v, n, now, window_s, *out, err);
	schedules_free(v, n);
	if (rc != DB_OK) {
		cJSON_Delete(*out);
		*out = NULL;
	}
	return rc;
}
