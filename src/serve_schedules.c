/* serve_schedules.c -- the Schedules page: the list `jobq schedule
 * --list --json` prints, a schedule's history (successes and failures
 * apart), enable/disable, run now, adding a database schedule, editing
 * its expression and removing it, and the live preview of an expression
 * as it is typed.
 * Each is a thin layer over the schedule_view_*, scheduler_*,
 * schedules_* and cron_* functions the CLI calls; every admin action is
 * audited.
 *
 * Threads and time zones: the cron module computes fire times by
 * switching the process's TZ with setenv()/tzset() and putting it back,
 * each switch under a lock of its own (cron_zone.c), so request threads
 * may call it at once.  serve_schedules_init() makes sure TZ is always
 * present in the environment before the threads start, so that cron's
 * "put it back" replaces the value in place rather than removing and
 * re-adding the variable (which may move the environ array under a
 * getenv() in another thread, e.g. inside the database client). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cron.h"
#include "log.h"
#include "schedule_view.h"
#include "scheduler.h"
#include "schedules.h"
#include "serve_audit.h"
#include "serve_http.h"
#include "serve_schedules.h"

#define HISTORY_MAX 50 /* fires shown in a schedule's history */
#define PREVIEW_FIRES 5

/* Called once by serve_run before any request thread starts: an unset
 * TZ is set to what glibc does when it is unset (the system's zone), so
 * the cron module never unsets and re-adds it while threads run. */
void
serve_schedules_init(void)
{
	if (getenv("TZ") == NULL)
		setenv("TZ", ":/etc/localtime", 1);
}

/* GET /api/schedules?window=SECONDS (default 7 days): every schedule,
 * INI and database, with next and last fire, the last outcome and the
 * counts over the window; the same objects as `jobq schedule --list
 * --json`. */
MHD_RESULT
api_schedules(struct req *r)
{
	int64_t window_s;
	char err[ERRSZ];
	cJSON *arr, *doc;
	int rc;

	if (serve_query_uint(r, "window", 1, 366 * 86400LL, 7 * 86400LL, &window_s) < 0)
		return serve_error(r, 400, "window must be a whole number of seconds from 1 to 31622400");
	rc = schedule_view_list_json(r->srv->conf, r->db, window_s, &arr, err);
	if (rc != DB_OK)
		return serve_db_error(r, "list schedules", err);
	doc = cJSON_CreateObject();
	cJSON_AddItemToObject(doc, "schedules", arr);
	ADD_NUM(doc, "window_s", window_s);
	/* what an added schedule's zone is when none is given */
	cJSON_AddStringToObject(doc, "default_timezone", r->srv->conf->worker.timezone);
	return serve_json(r, 200, doc);
}

/* Loads every schedule and finds name; on failure the response has been
 * sent (404 or 500) and *ret holds it. */
static struct schedule *
load_one(struct req *r, const char *name, struct schedule ***v, size_t *n, MHD_RESULT *ret)
{
	const struct schedule *s;
	char err[ERRSZ];
	int rc;

	if ((rc = schedules_load(r->srv->conf, r->db, v, n, err)) != DB_OK) {
		*ret = serve_db_error(r, "load schedules", err);
		return NULL;
	}
	if ((s = schedules_find(*v, *n, name)) == NULL) {
		schedules_free(*v, *n);
		*v = NULL;
		*n = 0;
		*ret = serve_error(r, 404, "no such schedule");
		return NULL;
	}
	return (struct schedule *)s;
}

static cJSON *
fire_json(const struct schedule_fire *f)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "fire_at", f->at);
	cJSON_AddStringToObject(o, "outcome", f->outcome);
	cJSON_AddBoolToObject(o, "manual", f->manual);
	if (f->job != 0)
		ADD_NUM(o, "job", f->job);
	else
		cJSON_AddNullToObject(o, "job");
	if (f->error[0] != '\0')
		cJSON_AddStringToObject(o, "error", f->error);
	return o;
}

/* GET /api/schedules/history?name=NAME: its last fires (times in UTC),
 * split into successes (the job is done), failures (dead-lettered, or
 * missed while nothing ticked) and the rest (queued, running, retrying,
 * skipped for overlap). */
MHD_RESULT
api_schedule_history(struct req *r)
{
	const char *name = serve_query(r, "name");
	struct schedule **v = NULL;
	struct schedule_fire *f = NULL;
	size_t n = 0, nf = 0, i;
	char err[ERRSZ];
	cJSON *doc, *ok, *bad, *other;
	MHD_RESULT ret;
	int rc;

	if (name == NULL)
		return serve_error(r, 400, "name is required");
	if (load_one(r, name, &v, &n, &ret) == NULL) {
		return ret;
	}
	schedules_free(v, n);
	rc = schedule_view_history(r->db, name, HISTORY_MAX, &f, &nf, err);
	if (rc != DB_OK)
		return serve_db_error(r, "schedule history", err);
	doc = cJSON_CreateObject();
	cJSON_AddStringToObject(doc, "name", name);
	ok = cJSON_AddArrayToObject(doc, "succeeded");
	bad = cJSON_AddArrayToObject(doc, "failed");
	other = cJSON_AddArrayToObject(doc, "other");
	for (i = 0; i < nf; i++) {
		const char *o = f[i].outcome;

		cJSON_AddItemToArray(strcmp(o, "done") == 0                    ? ok
		        : strcmp(o, "failed") == 0 || strcmp(o, "missed") == 0 ? bad
		                                                               : other,
		    fire_json(&f[i]));
	}
	free(f);
	return serve_json(r, 200, doc);
}

/* The "name" of a POST body, or NULL (and a 400 sent into *ret).  With
 * existing set, also for a name no schedule can have, which the database
 * would refuse to compare (a 500) rather than find nothing; a new
 * schedule's name is checked with the rest of it (add_check). */
static char *
body_name(struct req *r, cJSON **in, int existing, MHD_RESULT *ret)
{
	char *name;

	*in = serve_body_json(r);
	name = cJSON_GetStringValue(cJSON_GetObjectItem(*in, "name"));
	if (name == NULL || *name == '\0' || (existing && !conf_valid_name(name))) {
		*ret = serve_error(r, 400,
		    name == NULL || *name == '\0'
		        ? "expected {\"name\": \"SCHEDULE\"}"
		        : "name: a schedule name is 1-64 letters, digits, '_', '.' or '-'");
		cJSON_Delete(*in);
		return NULL;
	}
	return name;
}

/* A schedule change that audit_tx runs with its audit row: one
 * statement of schedules.c on s (name, or the schedule), and the detail
 * of the row, written once the change is known to have worked. */
struct sched_change {
	const struct conf *conf;
	const char *name;
	int on;
	struct schedule *s;
	char *detail;
	size_t len;
};

static int
switch_change(struct db *db, void *arg, char *err)
{
	const struct sched_change *c = arg;

	return schedules_switch(db, c->name, c->on, err);
}

/* Enable or disable: the switch lives in the database for INI and
 * database schedules alike, as `jobq schedule enable|disable`.  The
 * switch and its audit row are one transaction. */
static MHD_RESULT
switch_schedule(struct req *r, int on)
{
	struct sched_change c = { r->srv->conf, NULL, on, NULL, NULL, 0 };
	struct schedule **v, *s;
	cJSON *in, *doc;
	char err[ERRSZ], *name;
	MHD_RESULT ret;
	size_t n;
	int rc;

	if ((name = body_name(r, &in, 1, &ret)) == NULL)
		return ret;
	if ((s = load_one(r, name, &v, &n, &ret)) == NULL) {
		cJSON_Delete(in);
		return ret;
	}
	if (on && schedules_ini_off(s)) {
		schedules_free(v, n);
		cJSON_Delete(in);
		return serve_error(r, 409, "this schedule says enabled = no in jobq.ini: turn it on there");
	}
	c.name = name;
	rc = serve_audited(r, on ? "schedule-enable" : "schedule-disable", 0, name, switch_change, &c, err);
	schedules_free(v, n);
	if (rc != DB_OK) {
		cJSON_Delete(in);
		return serve_write_error(r, on ? "enable schedule" : "disable schedule", err);
	}
	doc = cJSON_CreateObject();
	cJSON_AddStringToObject(doc, "name", name);
	cJSON_AddBoolToObject(doc, "enabled", on);
	cJSON_Delete(in);
	return serve_json(r, 200, doc);
}

/* POST /api/schedules/enable {"name"} */
MHD_RESULT
api_schedule_enable(struct req *r)
{
	return switch_schedule(r, 1);
}

/* POST /api/schedules/disable {"name"} */
MHD_RESULT
api_schedule_disable(struct req *r)
{
	return switch_schedule(r, 0);
}

static void
say_log(void *arg, int important, const char *line)
{
	(void)arg, (void)important;
	log_info("serve: schedule: %s", line);
}

/* POST /api/schedules/run-now {"name"}: enqueues it now, as `jobq
 * schedule --run NAME` (recorded as a manual fire), its audit row on the
 * job in the fire's transaction.  422 when it cannot fire (its type or
 * queue left the INI). */
MHD_RESULT
api_schedule_run_now(struct req *r)
{
	struct scheduler_opts o = { 0, say_log, NULL };
	struct schedule **v;
	struct schedule *s;
	cJSON *in, *doc;
	struct audit_entry a;
	char err[ERRSZ], *name;
	uint64_t job = 0;
	MHD_RESULT ret;
	size_t n;
	int rc, problem;

	if ((name = body_name(r, &in, 1, &ret)) == NULL)
		return ret;
	if ((s = load_one(r, name, &v, &n, &ret)) == NULL) {
		cJSON_Delete(in);
		return ret;
	}
	problem = s->problem != NULL;
	a = serve_audit_entry(r, "schedule-run-now", 0, name);
	rc = scheduler_run_now(r->srv->conf, r->db, s, &o, &a, &job, err);
	schedules_free(v, n);
	if (rc != DB_OK && problem) {
		cJSON_Delete(in);
		return serve_error(r, 422, err);
	}
	if (rc != DB_OK) {
		cJSON_Delete(in);
		return serve_write_error(r, "run schedule now", err);
	}
	doc = cJSON_CreateObject();
	cJSON_AddStringToObject(doc, "name", name);
	ADD_NUM(doc, "job", job);
	cJSON_Delete(in);
	return serve_json(r, 200, doc);
}

static int
update_change(struct db *db, void *arg, char *err)
{
	const struct sched_change *c = arg;

	return schedules_update(db, c->s, err);
}

/* POST /api/schedules/edit {"name", "cron"}: a database schedule's
 * expression, checked as `jobq schedule edit NAME --cron EXPR` checks
 * it.  422 with the cron module's message (field and column) for a bad
 * expression, 422 for an INI schedule (edit the file); nothing changed
 * either way. */
MHD_RESULT
api_schedule_edit(struct req *r)
{
	struct schedule **v;
	struct schedule *s;
	cJSON *in, *doc;
	char err[ERRSZ], *name, *expr, *old = NULL, detail[600];
	MHD_RESULT ret;
	size_t n;
	int rc = DB_OK, status = 200;

	if ((name = body_name(r, &in, 1, &ret)) == NULL)
		return ret;
	expr = cJSON_GetStringValue(cJSON_GetObjectItem(in, "cron"));
	if (expr == NULL) {
		cJSON_Delete(in);
		return serve_error(r, 400, "expected {\"name\": \"SCHEDULE\", \"cron\": \"EXPRESSION\"}");
	}
	if ((s = load_one(r, name, &v, &n, &ret)) == NULL) {
		cJSON_Delete(in);
		return ret;
	}
	if (s->source == SCHEDULE_INI) {
		errf(err, "'%s' is defined in %s:%d; edit it there", name, r->srv->conf->path, s->line);
		status = 422;
	} else {
		old = xstrdup(s->cron);
		free(s->problem);
		s->problem = NULL;
		if (schedule_set(r->srv->conf, s, "cron", expr, err) < 0 ||
		    schedule_finish(r->srv->conf, s, err) < 0)
			status = 422;
		else {
			struct sched_change c = { r->srv->conf, name, 0, s, NULL, 0 };

			snprintf(detail, sizeof detail, "%s: cron '%s' -> '%s'", name, old, expr);
			if ((rc = serve_audited(r, "schedule-edit", 0, detail, update_change, &c, err)) ==
			    SCHEDULES_NOT_FOUND)
				status = 404;
		}
	}
	schedules_free(v, n);
	if (status != 200 || rc != DB_OK) {
		free(old);
		cJSON_Delete(in);
		if (status == 404)
			return serve_error(r, 404, "no such schedule");
		return status == 422 ? serve_error(r, 422, err) : serve_write_error(r, "edit schedule", err);
	}
	free(old);
	doc = cJSON_CreateObject();
	cJSON_AddStringToObject(doc, "name", name);
	cJSON_AddStringToObject(doc, "cron", expr);
	cJSON_Delete(in);
	return serve_json(r, 200, doc);
}

/* The fields of a POST /api/schedules/add body besides "name": the
 * options of `jobq schedule add`, under schedule_set()'s key names. */
#define ADD_FIELDS \
	"name, cron, type, payload, queue, priority, timezone, overlap, catch_up, alert_after, description"
static const char *const add_keys[] = { "cron", "type", "payload", "queue", "priority", "timezone", "overlap",
	"catch_up", "alert_after", "description" };

/* The text schedule_set() is given for a field: a string as it is, a
 * whole number (priority; catch_up in seconds) as written, and the
 * payload also as a JSON object.  NULL for anything else, a number past
 * what a long long holds too (1e308: the cast would be undefined). */
static char *
field_text(const cJSON *v, const char *key)
{
	char num[32], *p, *t;

	if (cJSON_IsString(v))
		return xstrdup(v->valuestring);
	if ((strcmp(key, "priority") == 0 || strcmp(key, "catch_up") == 0) && cJSON_IsNumber(v) &&
	    v->valuedouble > -9e18 && v->valuedouble < 9e18 &&
	    v->valuedouble == (double)(long long)v->valuedouble) {
		snprintf(num, sizeof num, "%lld", (long long)v->valuedouble);
		return xstrdup(num);
	}
	if (strcmp(key, "payload") != 0 || !cJSON_IsObject(v) || (p = cJSON_PrintUnformatted(v)) == NULL)
		return NULL;
	t = xstrdup(p);
	cJSON_free(p);
	return t;
}

static int
add_key_known(const char *key)
{
	size_t i;

	for (i = 0; i < ARRAY_LEN(add_keys); i++)
		if (strcmp(add_keys[i], key) == 0)
			return 1;
	return 0;
}

/* A new database schedule from the add body, each field checked by
 * schedule_set() exactly as the CLI's options are.  NULL on the first
 * bad field, with a sentence naming it in err and the status: 400 for
 * a field that is not a schedule's or not a string, 422 for a bad value. */
static struct schedule *
from_body(const struct conf *c, const cJSON *in, const char *name, unsigned *status, char *err)
{
	struct schedule *s = schedule_new(name, SCHEDULE_DB);
	const cJSON *f;
	char *text;
	int rc;

	for (f = in->child; f != NULL; f = f->next) {
		if (strcmp(f->string, "name") == 0)
			continue;
		if (!add_key_known(f->string)) {
			errf(err, "%.64s: not a schedule field (expected %s)", f->string, ADD_FIELDS);
			*status = 400;
		} else if ((text = field_text(f, f->string)) == NULL) {
			errf(err, "%s: expected a string%s", f->string,
			    strcmp(f->string, "payload") == 0 ? " or a JSON object" : "");
			*status = 400;
		} else {
			rc = schedule_set(c, s, f->string, text, err);
			free(text);
			*status = rc < 0 ? 422 : 0;
		}
		if (*status != 0) {
			schedule_free(s);
			return NULL;
		}
	}
	return s;
}

/* schedules_add_tx (in audit_tx's transaction: schedules_add would
 * commit on its own before the audit row), then the row's detail: the
 * schedule as it was completed (its default queue and time zone). */
static int
add_change(struct db *db, void *arg, char *err)
{
	const struct sched_change *c = arg;
	int rc = schedules_add_tx(c->conf, db, c->s, err);

	if (rc == DB_OK)
		snprintf(c->detail, c->len, "%s: cron '%s', type %s, queue %s, timezone %s", c->name,
		    c->s->cron, c->s->type, c->s->queue, c->s->timezone);
	return rc;
}

/* POST /api/schedules/add {"name", "cron", "type", and optionally
 * "payload", "queue", "priority", "timezone", "overlap", "catch_up", "alert_after",
 * "description"}: a new database schedule, checked and stored by
 * schedules_add() as `jobq schedule add` does.  400 for a malformed
 * body, 422 for a bad value (the sentence names the field), 409 for a
 * name the database or the INI already has; nothing added on any. */
MHD_RESULT
api_schedule_add(struct req *r)
{
	struct schedule *s;
	cJSON *in, *doc;
	char err[ERRSZ], *name, detail[600] = "";
	MHD_RESULT ret;
	unsigned status = 0;
	int rc = DB_OK;

	if ((name = body_name(r, &in, 0, &ret)) == NULL)
		return ret;
	if ((s = from_body(r->srv->conf, in, name, &status, err)) != NULL) {
		struct sched_change c = { r->srv->conf, name, 0, s, detail, sizeof detail };

		rc = serve_audited(r, "schedule-add", 0, detail, add_change, &c, err);
	}
	if (s == NULL || rc != DB_OK) {
		schedule_free(s);
		cJSON_Delete(in);
		if (s == NULL)
			return serve_error(r, status, err);
		if (rc == SCHEDULES_EXISTS || rc == SCHEDULES_IN_INI)
			return serve_error(r, 409, err);
		return rc == SCHEDULES_INVALID ? serve_error(r, 422, err)
		                               : serve_write_error(r, "add schedule", err);
	}
	doc = cJSON_CreateObject();
	cJSON_AddStringToObject(doc, "name", name);
	cJSON_AddStringToObject(doc, "cron", s->cron);
	cJSON_AddStringToObject(doc, "type", s->type);
	cJSON_AddStringToObject(doc, "queue", s->queue);
	cJSON_AddStringToObject(doc, "timezone", s->timezone);
	schedule_free(s);
	cJSON_Delete(in);
	return serve_json(r, 200, doc);
}

/* What a database schedule was, for the audit record of its removal
 * (so it can be put back by hand); just its name when it cannot be
 * read. */
static void
removed_detail(struct req *r, const char *name, char *detail, size_t len)
{
	struct schedule **v;
	const struct schedule *s;
	char err[ERRSZ];
	size_t n;

	snprintf(detail, len, "%s", name);
	if (schedules_load(r->srv->conf, r->db, &v, &n, err) == DB_OK) {
		if ((s = schedules_find(v, n, name)) != NULL && s->source == SCHEDULE_DB)
			snprintf(detail, len, "%s: cron '%s', type %s, queue %s, timezone %s, payload %.300s",
			    name, s->cron, s->type ? s->type : "-", s->queue ? s->queue : "-",
			    s->timezone ? s->timezone : "-", s->payload ? s->payload : "-");
		schedules_free(v, n);
	}
}

/* POST /api/schedules/remove {"name"}: deletes a database schedule with
 * its switch and run history, as `jobq schedule remove`.  404 for an
 * unknown name, 422 for an INI schedule (it is removed from the file). */
MHD_RESULT
api_schedule_remove(struct req *r)
{
	struct audit_entry a;
	cJSON *in, *doc;
	char err[ERRSZ], *name, detail[600];
	MHD_RESULT ret;
	int rc;

	if ((name = body_name(r, &in, 1, &ret)) == NULL)
		return ret;
	removed_detail(r, name, detail, sizeof detail);
	a = serve_audit_entry(r, "schedule-remove", 0, detail);
	rc = schedules_remove_audited(r->srv->conf, r->db, name, &a, err);
	if (rc != DB_OK) {
		cJSON_Delete(in);
		if (rc == SCHEDULES_NOT_FOUND)
			return serve_error(r, 404, "no such schedule");
		return rc == SCHEDULES_IN_INI ? serve_error(r, 422, err)
		                              : serve_write_error(r, "remove schedule", err);
	}
	doc = cJSON_CreateObject();
	cJSON_AddStringToObject(doc, "name", name);
	cJSON_Delete(in);
	return serve_json(r, 200, doc);
}

/* GET /api/cron?expr=EXPR&timezone=ZONE: what the expression means and
 * its next five fires in the zone (default UTC), as `jobq cron` prints
 * them; the page asks as the person types.  422 with the cron module's
 * message for a bad expression or zone. */
MHD_RESULT
api_cron_preview(struct req *r)
{
	const char *expr = serve_query(r, "expr"), *tz = serve_query(r, "timezone");
	struct cron_zone *z = NULL;
	struct cron *cr = NULL;
	char err[ERRSZ], when[64];
	cJSON *doc, *next;
	int64_t now, t;
	char *desc;
	int i, rc;

	if (expr == NULL)
		return serve_error(r, 400, "expr is required");
	if ((rc = schedules_now(r->db, &now, err)) != DB_OK)
		return serve_db_error(r, "read the clock", err);
	if ((z = cron_zone_open(tz != NULL ? tz : "UTC", err)) == NULL ||
	    (cr = cron_parse(expr, err)) == NULL) {
		cron_zone_free(z);
		return serve_error(r, 422, err);
	}
	doc = cJSON_CreateObject();
	cJSON_AddStringToObject(doc, "cron", expr);
	cJSON_AddStringToObject(doc, "timezone", cron_zone_name(z));
	desc = cron_describe(cr);
	cJSON_AddStringToObject(doc, "description", desc);
	free(desc);
	next = cJSON_AddArrayToObject(doc, "next");
	for (i = 0, t = now; i < PREVIEW_FIRES; i++) {
		if (cron_next(cr, z, t, &t) != CRON_FOUND)
			break;
		cron_format(z, t, when, sizeof when);
		cJSON_AddItemToArray(next, cJSON_CreateString(when));
	}
	cron_free(cr);
	cron_zone_free(z);
	return serve_json(r, 200, doc);
}
