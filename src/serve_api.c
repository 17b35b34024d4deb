/* serve_api.c -- the dashboard's JSON endpoints.  Each is a thin layer
 * over the same queue_*, failed_*, registry_* and runs_* functions the
 * CLI calls: what a button does and what `jobq failed retry` does cannot
 * drift apart.  Every admin action is written to the audit table. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"
#include "failed.h"
#include "log.h"
#include "queue.h"
#include "queue_list.h"
#include "registry.h"
#include "runs.h"
#include "runs_recent.h"
#include "serve.h"

#define ADD_NUM(o, k, v) cJSON_AddNumberToObject((o), (k), (double)(v))

static void
add_str_or_null(cJSON *o, const char *k, const char *v)
{
	if (v != NULL)
		cJSON_AddStringToObject(o, k, v);
	else
		cJSON_AddNullToObject(o, k);
}

/* A whole number from the query string in [min, max]; def when absent;
 * -1 when malformed. */
static int
query_uint(struct req *r, const char *key, int64_t min, int64_t max, int64_t def, int64_t *out)
{
	const char *v = serve_query(r, key);

	*out = def;
	return v == NULL ? 0 : str_to_int64(v, min, max, out);
}

/* Records an admin action; a failure is logged (the action itself is
 * done and must be reported as done). */
static void
audit(struct req *r, const char *action, uint64_t job_id, const char *detail)
{
	char err[ERRSZ];

	if (audit_add(r->db, r->user->name, r->addr, action, job_id, detail, err) != DB_OK)
		log_error("serve: audit %s by %s: %s", action, r->user->name, err);
}

/* ---- overview ---- */

static cJSON *
minutes_json(const uint64_t *v)
{
	cJSON *a = cJSON_CreateArray();
	int i;

	for (i = 0; i < RUNS_MINUTES; i++)
		cJSON_AddItemToArray(a, cJSON_CreateNumber((double)v[i]));
	return a;
}

static uint64_t
done_in(const struct runs_count *c, size_t n, const char *queue)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(c[i].key, queue) == 0 && strcmp(c[i].outcome, "done") == 0)
			return c[i].n;
	return 0;
}

static cJSON *
queues_json(const struct queue_counts *q, size_t nq, const struct runs_count *c, size_t nc)
{
	cJSON *a = cJSON_CreateArray();
	size_t i;

	for (i = 0; i < nq; i++) {
		cJSON *o = cJSON_CreateObject();

		cJSON_AddStringToObject(o, "queue", q[i].queue);
		ADD_NUM(o, "ready", q[i].ready);
		ADD_NUM(o, "delayed", q[i].delayed);
		ADD_NUM(o, "reserved", q[i].reserved);
		ADD_NUM(o, "stale", q[i].stale);
		ADD_NUM(o, "failed", q[i].failed);
		ADD_NUM(o, "done_last_hour", done_in(c, nc, q[i].queue));
		if (q[i].oldest_ready_s >= 0)
			ADD_NUM(o, "oldest_ready_s", q[i].oldest_ready_s);
		else
			cJSON_AddNullToObject(o, "oldest_ready_s");
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

/* GET /api/overview: counters per queue, runs per minute over the last
 * hour by outcome, workers alive. */
MHD_RESULT
api_overview(struct req *r)
{
	struct queue_counts *q = NULL;
	struct runs_count *c = NULL;
	struct runs_minutes m;
	size_t nq = 0, nc = 0;
	uint64_t alive = 0;
	char err[ERRSZ];
	cJSON *doc, *chart;

	if (queue_status(r->db, r->srv->conf, NULL, &q, &nq, err) != DB_OK ||
	    runs_recent_counts(r->db, "queue", &c, &nc, err) != DB_OK ||
	    runs_recent_minutes(r->db, &m, err) != DB_OK ||
	    registry_count_alive(r->db, &alive, err) != DB_OK) {
		queue_counts_free(q, nq);
		runs_counts_free(c, nc);
		return serve_db_error(r, "overview", err);
	}
	doc = cJSON_CreateObject();
	cJSON_AddItemToObject(doc, "queues", queues_json(q, nq, c, nc));
	chart = cJSON_AddObjectToObject(doc, "runs_per_minute");
	cJSON_AddItemToObject(chart, "done", minutes_json(m.done));
	cJSON_AddItemToObject(chart, "retry", minutes_json(m.retry));
	cJSON_AddItemToObject(chart, "dead", minutes_json(m.dead));
	ADD_NUM(doc, "workers_alive", alive);
	queue_counts_free(q, nq);
	runs_counts_free(c, nc);
	return serve_json(r, 200, doc);
}

/* ---- jobs ---- */

static cJSON *
job_row_json(struct req *r, const struct job_row *j)
{
	const struct handler *h = conf_handler(r->srv->conf, j->type);
	cJSON *o = cJSON_CreateObject();

	ADD_NUM(o, "id", j->id);
	cJSON_AddStringToObject(o, "queue", j->queue);
	cJSON_AddStringToObject(o, "type", j->type);
	cJSON_AddStringToObject(o, "state", j->state);
	ADD_NUM(o, "priority", j->priority);
	ADD_NUM(o, "attempts", j->attempts);
	/* 0 in the table: the handler's limit applies */
	ADD_NUM(o, "max_attempts", j->max_attempts ? j->max_attempts : h ? h->max_attempts : 0);
	ADD_NUM(o, "due_in_ms", j->due_in_ms);
	cJSON_AddBoolToObject(o, "last_failed", j->last_failed);
	add_str_or_null(o, "reserved_by", j->reserved_by);
	return o;
}

/* GET /api/jobs?queue=&type=&state=&after=&limit=: one page, lowest id
 * first; next_after is the cursor of the next page (null: last page). */
MHD_RESULT
api_jobs(struct req *r)
{
	struct job_filter f = { 0 };
	struct job_row *rows;
	size_t n, i;
	int64_t after, limit;
	char err[ERRSZ];
	cJSON *doc, *a;

	f.queue = serve_query(r, "queue");
	f.type = serve_query(r, "type");
	f.state = serve_query(r, "state");
	if (f.state != NULL && !queue_list_state_valid(f.state))
		return serve_error(r, 400, "state: expected ready, delayed, reserved or stale");
	if (query_uint(r, "after", 0, INT64_MAX, 0, &after) < 0 ||
	    query_uint(r, "limit", 1, 500, 50, &limit) < 0)
		return serve_error(r, 400, "after and limit must be whole numbers (limit 1-500)");
	f.after_id = (uint64_t)after;
	f.limit = (unsigned)limit;
	if (queue_list(r->db, &f, &rows, &n, err) != DB_OK)
		return serve_db_error(r, "list jobs", err);
	doc = cJSON_CreateObject();
	a = cJSON_AddArrayToObject(doc, "jobs");
	for (i = 0; i < n; i++)
		cJSON_AddItemToArray(a, job_row_json(r, &rows[i]));
	if (n == f.limit)
		ADD_NUM(doc, "next_after", rows[n - 1].id);
	else
		cJSON_AddNullToObject(doc, "next_after");
	job_rows_free(rows, n);
	return serve_json(r, 200, doc);
}

static cJSON *
view_json(struct req *r, const struct job_view *v)
{
	const struct handler *h = conf_handler(r->srv->conf, v->type);
	cJSON *o = cJSON_CreateObject();
	unsigned max = v->max_attempts ? v->max_attempts : h ? h->max_attempts : 0;

	ADD_NUM(o, "id", v->id);
	cJSON_AddStringToObject(o, "state", v->state);
	cJSON_AddStringToObject(o, "queue", v->queue);
	cJSON_AddStringToObject(o, "type", v->type);
	cJSON_AddStringToObject(o, "payload", v->payload);
	ADD_NUM(o, "priority", v->priority);
	ADD_NUM(o, "attempts", v->attempts);
	ADD_NUM(o, "max_attempts", max);
	add_str_or_null(o, "created_at", v->created_at);
	add_str_or_null(o, "available_at", v->available_at);
	if (v->available_at != NULL)
		ADD_NUM(o, "available_in_ms", v->available_in_ms);
	add_str_or_null(o, "reserved_by", v->reserved_by);
	add_str_or_null(o, "reserved_at", v->reserved_at);
	add_str_or_null(o, "lease_expires_at", v->lease_expires_at);
	add_str_or_null(o, "last_error", v->last_error);
	add_str_or_null(o, "failed_at", v->failed_at);
	add_str_or_null(o, "exception", v->exception);
	add_str_or_null(o, "exit_status", v->exit_status);
	add_str_or_null(o, "reason", v->reason);
	/* The wait after a failure of this attempt, before jitter. */
	if (h != NULL && strcmp(v->state, "failed") != 0)
		ADD_NUM(o, "next_backoff_ms", backoff_nominal(&h->backoff, v->attempts + 1));
	return o;
}

/* At most the first 4 KiB of a run's stderr or stdout, cut at a UTF-8
 * character boundary. */
static void
add_excerpt(cJSON *o, const char *k, const char *v)
{
	size_t n;
	char *cut;

	if (v == NULL || (n = strlen(v)) <= 4096) {
		add_str_or_null(o, k, v);
		return;
	}
	n = 4096;
	while (n > 0 && ((unsigned char)v[n] & 0xC0) == 0x80)
		n--;
	cut = xasprintf("%.*s\n[... %zu more bytes]", (int)n, v, strlen(v) - n);
	cJSON_AddStringToObject(o, k, cut);
	free(cut);
}

static cJSON *
runs_json(const struct run_row *runs, size_t n)
{
	cJSON *a = cJSON_CreateArray();
	size_t i;

	for (i = 0; i < n; i++) {
		cJSON *o = cJSON_CreateObject();

		ADD_NUM(o, "attempt", runs[i].attempt);
		add_str_or_null(o, "worker", runs[i].worker);
		add_str_or_null(o, "started_at", runs[i].started_at);
		ADD_NUM(o, "duration_ms", runs[i].duration_ms);
		add_str_or_null(o, "outcome", runs[i].outcome);
		add_str_or_null(o, "exit_status", runs[i].exit_status);
		add_excerpt(o, "error", runs[i].error);
		add_excerpt(o, "output", runs[i].output);
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

static cJSON *
audit_json(const struct audit_row *a, size_t n)
{
	cJSON *arr = cJSON_CreateArray();
	size_t i;

	for (i = 0; i < n; i++) {
		cJSON *o = cJSON_CreateObject();

		cJSON_AddStringToObject(o, "at", a[i].at);
		cJSON_AddStringToObject(o, "user", a[i].user);
		cJSON_AddStringToObject(o, "address", a[i].address);
		cJSON_AddStringToObject(o, "action", a[i].action);
		cJSON_AddStringToObject(o, "detail", a[i].detail);
		cJSON_AddItemToArray(arr, o);
	}
	return arr;
}

/* GET /api/jobs/ID: the job from the queue or the dead-letter table,
 * its runs and the admin actions taken on it; 404 when it is in
 * neither (done and gone, or never there). */
MHD_RESULT
api_job(struct req *r)
{
	struct db *db = r->db;
	struct job_view v;
	struct run_row *runs = NULL;
	struct audit_row *au = NULL;
	size_t nruns = 0, nau = 0;
	char err[ERRSZ];
	cJSON *doc;
	int rc = queue_show(db, r->id, r->srv->tz, &v, err);

	if (rc == QUEUE_NOT_FOUND)
		rc = failed_show(db, r->id, r->srv->tz, &v, err);
	if (rc == QUEUE_NOT_FOUND)
		return serve_error(r, 404, "no such job (finished jobs leave the queue)");
	if (rc != DB_OK)
		return serve_db_error(r, "show a job", err);
	if (runs_for_job(db, r->id, r->srv->tz, &runs, &nruns, err) != DB_OK ||
	    audit_for_job(db, r->id, r->srv->tz, &au, &nau, err) != DB_OK) {
		job_view_free(&v);
		runs_free(runs, nruns);
		return serve_db_error(r, "job history", err);
	}
	doc = cJSON_CreateObject();
	cJSON_AddItemToObject(doc, "job", view_json(r, &v));
	cJSON_AddItemToObject(doc, "runs", runs_json(runs, nruns));
	cJSON_AddItemToObject(doc, "audit", audit_json(au, nau));
	job_view_free(&v);
	runs_free(runs, nruns);
	audit_rows_free(au, nau);
	return serve_json(r, 200, doc);
}

/* The answer to a one-job action: 200, 404 or 409 (busy). */
static MHD_RESULT
job_action(struct req *r, const char *action, int rc, const char *conflict, const char *err)
{
	cJSON *doc;

	if (rc == QUEUE_NOT_FOUND)
		return serve_error(r, 404, "no such job in the queue");
	if (rc == QUEUE_CONFLICT)
		return serve_error(r, 409, conflict);
	if (rc != DB_OK)
		return serve_db_error(r, action, err);
	audit(r, action, r->id, "");
	doc = cJSON_CreateObject();
	ADD_NUM(doc, "id", r->id);
	cJSON_AddStringToObject(doc, "done", action);
	return serve_json(r, 200, doc);
}

/* POST /api/jobs/ID/run-now: a waiting job becomes due now. */
MHD_RESULT
api_job_run_now(struct req *r)
{
	char err[ERRSZ];

	return job_action(r, "run-now", queue_make_due(r->db, r->id, err),
	    "a worker holds this job; it cannot be made due", err);
}

/* POST /api/jobs/ID/release: a stale job is ready again. */
MHD_RESULT
api_job_release(struct req *r)
{
	char err[ERRSZ];

	return job_action(r, "release", queue_release_one(r->db, r->id, err),
	    "only a stale job (its lease expired) can be released", err);
}

/* POST /api/jobs/ID/delete: a job nobody runs leaves the queue. */
MHD_RESULT
api_job_delete(struct req *r)
{
	char err[ERRSZ];

	return job_action(r, "delete", queue_delete(r->db, r->id, err),
	    "a worker is running this job; it cannot be deleted now", err);
}

/* ---- dead letter ---- */

static cJSON *
failed_row_json(const struct failed_row *x)
{
	cJSON *o = cJSON_CreateObject();

	ADD_NUM(o, "id", x->id);
	cJSON_AddStringToObject(o, "queue", x->queue);
	cJSON_AddStringToObject(o, "type", x->type);
	cJSON_AddStringToObject(o, "failed_at", x->failed_at);
	cJSON_AddStringToObject(o, "exit_status", x->exit_status);
	cJSON_AddStringToObject(o, "reason", x->reason);
	cJSON_AddStringToObject(o, "exception", x->exception);
	ADD_NUM(o, "attempts", x->attempts);
	return o;
}

/* Dead-lettered jobs in every queue (queue_status counts them by the
 * failed_jobs index). */
static int
failed_total(struct req *r, uint64_t *total, char *err)
{
	struct queue_counts *q;
	size_t n, i;
	int rc = queue_status(r->db, r->srv->conf, NULL, &q, &n, err);

	*total = 0;
	for (i = 0; rc == DB_OK && i < n; i++)
		*total += q[i].failed;
	if (rc == DB_OK)
		queue_counts_free(q, n);
	return rc;
}

/* GET /api/failed?queue=&type=&limit=: newest first, and the total in
 * every queue (what "clear" would remove). */
MHD_RESULT
api_failed(struct req *r)
{
	struct failed_filter f = { 0 };
	struct failed_row *rows;
	size_t n, i;
	uint64_t total;
	int64_t limit;
	char err[ERRSZ];
	cJSON *doc, *a;

	f.queue = serve_query(r, "queue");
	f.type = serve_query(r, "type");
	if (query_uint(r, "limit", 1, 1000, 100, &limit) < 0)
		return serve_error(r, 400, "limit must be a whole number from 1 to 1000");
	f.limit = (unsigned)limit;
	if (failed_total(r, &total, err) != DB_OK ||
	    failed_list(r->db, &f, r->srv->tz, &rows, &n, err) != DB_OK)
		return serve_db_error(r, "list failed jobs", err);
	doc = cJSON_CreateObject();
	a = cJSON_AddArrayToObject(doc, "failed");
	for (i = 0; i < n; i++)
		cJSON_AddItemToArray(a, failed_row_json(&rows[i]));
	ADD_NUM(doc, "total", total);
	failed_rows_free(rows, n);
	return serve_json(r, 200, doc);
}

/* {"ids": [1, 2]}: 1-1000 job ids; NULL (and *bad set) otherwise. */
static uint64_t *
body_ids(cJSON *in, size_t *n)
{
	cJSON *ids = cJSON_GetObjectItem(in, "ids"), *it;
	uint64_t *out;
	size_t i = 0;

	*n = (size_t)cJSON_GetArraySize(ids);
	if (!cJSON_IsArray(ids) || *n == 0 || *n > 1000)
		return NULL;
	out = xcalloc(*n, sizeof *out);
	cJSON_ArrayForEach(it, ids)
	{
		if (!cJSON_IsNumber(it) || it->valuedouble < 1 || it->valuedouble > 9e15 ||
		    it->valuedouble != (double)(uint64_t)it->valuedouble) {
			free(out);
			return NULL;
		}
		out[i++] = (uint64_t)it->valuedouble;
	}
	return out;
}

/* Applies fn (failed_retry or failed_forget) to each id; ids that are
 * not dead-lettered (any more) are listed as missing. */
static MHD_RESULT
each_failed(struct req *r, const char *action, int (*fn)(struct db *, uint64_t, char *))
{
	cJSON *in = serve_body_json(r), *doc, *missing;
	size_t n, i, okn = 0;
	uint64_t *ids = body_ids(in, &n);
	char err[ERRSZ];
	int rc = DB_OK;

	cJSON_Delete(in);
	if (ids == NULL)
		return serve_error(r, 400, "expected {\"ids\": [1 to 1000 job ids]}");
	doc = cJSON_CreateObject();
	missing = cJSON_AddArrayToObject(doc, "missing");
	for (i = 0; i < n && (rc == DB_OK || rc == QUEUE_NOT_FOUND); i++) {
		rc = fn(r->db, ids[i], err);
		if (rc == DB_OK)
			audit(r, action, ids[i], ""), okn++;
		else if (rc == QUEUE_NOT_FOUND)
			cJSON_AddItemToArray(missing, cJSON_CreateNumber((double)ids[i]));
	}
	free(ids);
	if (rc != DB_OK && rc != QUEUE_NOT_FOUND) {
		cJSON_Delete(doc);
		return serve_db_error(r, action, err);
	}
	ADD_NUM(doc, strcmp(action, "retry") == 0 ? "retried" : "forgotten", okn);
	return serve_json(r, 200, doc);
}

/* POST /api/failed/retry {"ids": [...]} or {"all": true, "queue",
 * "type"}: back to the queue, attempts reset, as `jobq failed retry`. */
MHD_RESULT
api_failed_retry(struct req *r)
{
	cJSON *in = serve_body_json(r), *doc;
	struct failed_filter f = { 0 };
	uint64_t n = 0;
	char err[ERRSZ], detail[256];

	if (!cJSON_IsTrue(cJSON_GetObjectItem(in, "all"))) {
		cJSON_Delete(in);
		return each_failed(r, "retry", failed_retry);
	}
	f.queue = cJSON_GetStringValue(cJSON_GetObjectItem(in, "queue"));
	f.type = cJSON_GetStringValue(cJSON_GetObjectItem(in, "type"));
	if (f.queue != NULL && *f.queue == '\0')
		f.queue = NULL;
	if (f.type != NULL && *f.type == '\0')
		f.type = NULL;
	if (failed_retry_matching(r->db, &f, &n, err) != DB_OK) {
		cJSON_Delete(in);
		return serve_db_error(r, "retry matching", err);
	}
	snprintf(detail, sizeof detail, "all matching queue=%s type=%s: %llu jobs", f.queue ? f.queue : "*",
	    f.type ? f.type : "*", (unsigned long long)n);
	audit(r, "retry-all", 0, detail);
	cJSON_Delete(in);
	doc = cJSON_CreateObject();
	ADD_NUM(doc, "retried", n);
	return serve_json(r, 200, doc);
}

/* POST /api/failed/forget {"ids": [...]}: deleted for good. */
MHD_RESULT
api_failed_forget(struct req *r)
{
	return each_failed(r, "forget", failed_forget);
}

/* POST /api/failed/clear {"count": N}: empties the dead-letter table,
 * but only when it still holds the N jobs the person confirmed (409 and
 * the new count otherwise). */
MHD_RESULT
api_failed_clear(struct req *r)
{
	cJSON *in = serve_body_json(r), *doc;
	cJSON *want = cJSON_GetObjectItem(in, "count");
	uint64_t total, removed;
	char err[ERRSZ], detail[64];
	int ok = cJSON_IsNumber(want) && want->valuedouble >= 0;
	double expect = ok ? want->valuedouble : 0;

	cJSON_Delete(in);
	if (!ok)
		return serve_error(r, 400, "expected {\"count\": the number of failed jobs confirmed}");
	if (failed_total(r, &total, err) != DB_OK)
		return serve_db_error(r, "count failed jobs", err);
	if ((double)total != expect) {
		doc = cJSON_CreateObject();
		cJSON_AddStringToObject(doc, "error", "the number of failed jobs changed; confirm again");
		ADD_NUM(doc, "count", total);
		return serve_json(r, 409, doc);
	}
	if (failed_clear(r->db, -1, &removed, err) != DB_OK)
		return serve_db_error(r, "clear failed jobs", err);
	snprintf(detail, sizeof detail, "%llu jobs", (unsigned long long)removed);
	audit(r, "clear", 0, detail);
	doc = cJSON_CreateObject();
	ADD_NUM(doc, "removed", removed);
	return serve_json(r, 200, doc);
}

/* ---- workers ---- */

/* GET /api/workers: the registry, dead workers marked. */
MHD_RESULT
api_workers(struct req *r)
{
	struct worker_row *w;
	size_t n, i;
	char err[ERRSZ];
	cJSON *doc, *a;

	if (registry_list(r->db, &w, &n, err) != DB_OK)
		return serve_db_error(r, "list workers", err);
	doc = cJSON_CreateObject();
	a = cJSON_AddArrayToObject(doc, "workers");
	for (i = 0; i < n; i++) {
		cJSON *o = cJSON_CreateObject();

		cJSON_AddStringToObject(o, "id", w[i].id);
		cJSON_AddStringToObject(o, "host", w[i].host);
		ADD_NUM(o, "pid", w[i].pid);
		cJSON_AddStringToObject(o, "queues", w[i].queues);
		ADD_NUM(o, "concurrency", w[i].concurrency);
		cJSON_AddStringToObject(o, "started_at", w[i].started_at);
		cJSON_AddStringToObject(o, "last_seen_at", w[i].last_seen_at);
		ADD_NUM(o, "seen_ago_ms", w[i].seen_ago_ms);
		ADD_NUM(o, "done", w[i].done);
		ADD_NUM(o, "retried", w[i].retried);
		ADD_NUM(o, "dead", w[i].dead);
		cJSON_AddStringToObject(o, "current_jobs", w[i].current_jobs);
		cJSON_AddBoolToObject(o, "alive", w[i].alive);
		cJSON_AddItemToArray(a, o);
	}
	registry_rows_free(w, n);
	return serve_json(r, 200, doc);
}

/* ---- enqueue ---- */

/* GET /api/enqueue: the whitelists the form offers. */
MHD_RESULT
api_enqueue_form(struct req *r)
{
	const struct conf *c = r->srv->conf;
	cJSON *doc = cJSON_CreateObject(), *types, *queues;
	size_t i;

	types = cJSON_AddArrayToObject(doc, "types");
	for (i = 0; i < c->nhandlers; i++) {
		cJSON *o = cJSON_CreateObject();

		cJSON_AddStringToObject(o, "type", c->handlers[i]->type);
		cJSON_AddStringToObject(o, "queue", c->handlers[i]->queue);
		cJSON_AddItemToArray(types, o);
	}
	queues = cJSON_AddArrayToObject(doc, "queues");
	for (i = 0; c->queues[i] != NULL; i++)
		cJSON_AddItemToArray(queues, cJSON_CreateString(c->queues[i]));
	return serve_json(r, 200, doc);
}

struct enq_req {
	const char *type, *queue, *payload;
	double delay_s, count;
};

/* Checks an enqueue request: 0, or the status with msg set. */
static unsigned
enq_check(struct req *r, cJSON *in, struct enq_req *e, const char **msg)
{
	const struct conf *c = r->srv->conf;
	const struct handler *h;
	cJSON *p, *d, *n, *parsed;

	e->type = cJSON_GetStringValue(cJSON_GetObjectItem(in, "type"));
	e->queue = cJSON_GetStringValue(cJSON_GetObjectItem(in, "queue"));
	p = cJSON_GetObjectItem(in, "payload");
	d = cJSON_GetObjectItem(in, "delay");
	n = cJSON_GetObjectItem(in, "count");
	e->payload = cJSON_IsString(p) ? p->valuestring : NULL;
	e->delay_s = cJSON_IsNumber(d) ? d->valuedouble : d == NULL ? 0 : -1;
	e->count = cJSON_IsNumber(n) ? n->valuedouble : n == NULL ? 1 : -1;
	if (e->type == NULL || e->payload == NULL)
		return *msg = "expected {\"type\", \"payload\" (JSON text), \"queue\", \"delay\", \"count\"}",
		       400;
	if ((h = conf_handler(c, e->type)) == NULL)
		return *msg = "unknown job type (no [handler TYPE] section)", 422;
	if (e->queue == NULL || *e->queue == '\0')
		e->queue = h->queue;
	if (!conf_has_queue(c, e->queue))
		return *msg = "unknown queue (no [queue NAME] section)", 422;
	if (!(e->delay_s >= 0 && e->delay_s <= 366 * 86400.0))
		return *msg = "delay: seconds from 0 to 366 days", 400;
	if (!(e->count >= 1 && e->count <= 1000) || e->count != (double)(int)e->count)
		return *msg = "count: a whole number from 1 to 1000", 400;
	if (strlen(e->payload) > c->worker.max_payload)
		return *msg = "payload larger than max_payload", 400;
	if (strlen(e->payload) * (size_t)e->count > 16 * 1024 * 1024)
		return *msg = "payload times count is more than 16 MiB", 400;
	if ((parsed = cJSON_Parse(e->payload)) == NULL)
		return *msg = "payload is not valid JSON", 400;
	cJSON_Delete(parsed);
	return 0;
}

/* POST /api/enqueue {"type", "queue", "payload", "delay", "count"}:
 * type and queue from the INI whitelists only (422 otherwise). */
MHD_RESULT
api_enqueue(struct req *r)
{
	cJSON *in = serve_body_json(r), *doc;
	struct enqueue_item *items;
	struct enq_req e;
	const char *msg = NULL;
	uint64_t first = 0;
	unsigned status, i;
	char err[ERRSZ], detail[256];
	MHD_RESULT ret;

	if (in == NULL)
		return serve_error(r, 400, "the body is not a JSON object");
	if ((status = enq_check(r, in, &e, &msg)) != 0) {
		cJSON_Delete(in);
		return serve_error(r, status, msg);
	}
	items = xcalloc((size_t)e.count, sizeof *items);
	for (i = 0; i < (unsigned)e.count; i++) {
		items[i].type = e.type;
		items[i].queue = e.queue;
		items[i].payload = e.payload;
		items[i].payload_len = strlen(e.payload);
		items[i].delay_ms = (int64_t)(e.delay_s * 1000);
	}
	if (queue_enqueue(r->db, items, (size_t)e.count, &first, err) != DB_OK)
		ret = serve_db_error(r, "enqueue", err);
	else {
		snprintf(
		    detail, sizeof detail, "type=%s queue=%s count=%u", e.type, e.queue, (unsigned)e.count);
		audit(r, "enqueue", first, detail);
		doc = cJSON_CreateObject();
		ADD_NUM(doc, "first_id", first);
		ADD_NUM(doc, "count", e.count);
		ret = serve_json(r, 200, doc);
	}
	free(items);
	cJSON_Delete(in);
	return ret;
}
