/* serve_jobs.c -- the jobs list (keyset pages), one job with its runs and
 * audit, and the actions on one job: run now, release, delete. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"
#include "cancel.h"
#include "deps.h"
#include "queue.h"
#include "queue_list.h"
#include "runs.h"
#include "serve_audit.h"
#include "serve_http.h"
#include "serve_jobs.h"

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
	serve_add_str_or_null(o, "reserved_by", j->reserved_by);
	return o;
}

/* GET /api/jobs?queue=&type=&state=&group=&after=&limit=: one page,
 * lowest id first; next_after is the cursor of the next page (null: last
 * page).  group (an id) keeps the jobs of that group still queued: the
 * group page's list. */
MHD_RESULT
api_jobs(struct req *r)
{
	struct job_filter f = { 0 };
	struct job_row *rows;
	size_t n, i;
	int64_t after, limit, group;
	char err[ERRSZ];
	cJSON *doc, *a;

	f.queue = serve_query(r, "queue");
	f.type = serve_query(r, "type");
	f.state = serve_query(r, "state");
	if (f.state != NULL && !queue_list_state_valid(f.state))
		return serve_error(r, 400, "state: expected ready, delayed, waiting, reserved or stale");
	if (serve_query_uint(r, "after", 0, INT64_MAX, 0, &after) < 0 ||
	    serve_query_uint(r, "limit", 1, 500, 50, &limit) < 0 ||
	    serve_query_uint(r, "group", 0, INT64_MAX, 0, &group) < 0)
		return serve_error(r, 400, "after, group and limit must be whole numbers (limit 1-500)");
	f.after_id = (uint64_t)after;
	f.group_id = (uint64_t)group;
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
view_json(struct req *r, const struct job_view *v, int gone)
{
	const struct handler *h = conf_handler(r->srv->conf, v->type);
	cJSON *o = cJSON_CreateObject();
	unsigned max, failing;
	int64_t next_ms;

	job_view_policy(r->srv->conf, v, &max, &next_ms, &failing);

	ADD_NUM(o, "id", v->id);
	cJSON_AddStringToObject(o, "state", v->state);
	cJSON_AddStringToObject(o, "queue", v->queue);
	cJSON_AddStringToObject(o, "type", v->type);
	serve_add_str_or_null(o, "payload", v->payload); /* NULL: a done job's runs did not keep it */
	if (!gone)
		ADD_NUM(o, "priority", v->priority);
	ADD_NUM(o, "attempts", v->attempts);
	if (max > 0)
		ADD_NUM(o, "max_attempts", max);
	else
		cJSON_AddNullToObject(o, "max_attempts"); /* ended, or no handler: no limit known */
	serve_add_str_or_null(o, "created_at", v->created_at);
	serve_add_str_or_null(o, "available_at", v->available_at);
	if (v->available_at != NULL)
		ADD_NUM(o, "available_in_ms", v->available_in_ms);
	serve_add_str_or_null(o, "not_before", v->not_before);
	serve_add_str_or_null(o, "reserved_by", v->reserved_by);
	serve_add_str_or_null(o, "reserved_at", v->reserved_at);
	serve_add_str_or_null(o, "lease_expires_at", v->lease_expires_at);
	serve_add_str_or_null(o, "last_error", v->last_error);
	serve_add_str_or_null(o, "unique_key", v->unique_key);
	serve_add_str_or_null(o, "traceparent", v->traceparent);
	serve_add_str_or_null(o, "checkpoint", v->checkpoint); /* JSON text, as the handler saved it */
	serve_add_str_or_null(o, "expires_at", v->expires_at);
	serve_add_str_or_null(o, "cancel_requested_by", v->cancel_by);
	serve_add_str_or_null(o, "cancel_requested_at", v->cancel_at);
	/* The handler's progress (control channel) while it runs. */
	if (v->progress >= 0 && (strcmp(v->state, "reserved") == 0 || strcmp(v->state, "stale") == 0)) {
		ADD_NUM(o, "progress", v->progress);
		serve_add_str_or_null(o, "progress_note", v->progress_note);
	}
	serve_add_str_or_null(o, "failed_at", v->failed_at);
	serve_add_str_or_null(o, "exception", v->exception);
	serve_add_str_or_null(o, "exit_status", v->exit_status);
	serve_add_str_or_null(o, "reason", v->reason);
	/* The wait after a failure of the attempt running or next, before
	 * jitter (as jobq show says it); null when that attempt is the last. */
	if (h != NULL && !gone && strcmp(v->state, "failed") != 0 && max > 0) {
		ADD_NUM(o, "next_backoff_attempt", failing);
		if (next_ms > 0)
			ADD_NUM(o, "next_backoff_ms", next_ms);
		else
			cJSON_AddNullToObject(o, "next_backoff_ms");
	}
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
		serve_add_str_or_null(o, k, v);
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
		serve_add_str_or_null(o, "worker", runs[i].worker);
		serve_add_str_or_null(o, "started_at", runs[i].started_at);
		ADD_NUM(o, "duration_ms", runs[i].duration_ms);
		serve_add_str_or_null(o, "outcome", runs[i].outcome);
		serve_add_str_or_null(o, "exit_status", runs[i].exit_status);
		add_excerpt(o, "error", runs[i].error);
		serve_add_str_or_null(o, "error_summary", runs[i].summary);
		add_excerpt(o, "output", runs[i].output);
		serve_add_str_or_null(o, "result", runs[i].result); /* JSON text, as the handler wrote it */
		if (runs[i].follow_ups != NULL)
			cJSON_AddItemToObject(o, "follow_ups", runs_follow_ups_json(runs[i].follow_ups));
		serve_add_str_or_null(o, "trace_id", runs[i].trace_id);
		serve_add_str_or_null(o, "span_id", runs[i].span_id);
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

/* The job's audit rows; the address each action came from only for an
 * admin, as /api/audit and the sessions' last address are. */
static cJSON *
audit_json(const struct audit_row *a, size_t n, int admin)
{
	cJSON *arr = cJSON_CreateArray();
	size_t i;

	for (i = 0; i < n; i++) {
		cJSON *o = cJSON_CreateObject();

		cJSON_AddStringToObject(o, "at", a[i].at);
		cJSON_AddStringToObject(o, "user", a[i].user);
		if (admin)
			cJSON_AddStringToObject(o, "address", a[i].address);
		cJSON_AddStringToObject(o, "action", a[i].action);
		cJSON_AddStringToObject(o, "detail", a[i].detail);
		if (a[i].count != 0) /* one of that many jobs the action was on */
			ADD_NUM(o, "count", a[i].count);
		else
			cJSON_AddNullToObject(o, "count");
		cJSON_AddItemToArray(arr, o);
	}
	return arr;
}

/* Adds to doc the job's links to other jobs, as `jobq show` lists them
 * (deps.c): "waits_for", "dependents" and "reopens_on_retry" ({id,
 * state} each, by id), "reopened_by_retry_of" (the dead job whose retry
 * re-opens it, or null: park.c), and
 * "group" ({id, name}, null when it is in none; a job that left the
 * queue is in none any more: its group counted how it ended). */
static int
add_links(struct db *db, cJSON *doc, const struct job_view *v, int gone, char *err)
{
	struct deps_links l;
	cJSON *g;
	int rc = deps_links(db, v->id, &l, err);

	if (rc != DB_OK) {
		deps_links_free(&l);
		return rc;
	}
	cJSON_AddItemToObject(doc, "waits_for", deps_json(l.after, l.nafter));
	cJSON_AddItemToObject(doc, "dependents", deps_json(l.by, l.nby));
	cJSON_AddItemToObject(doc, "reopens_on_retry", deps_json(l.reopens, l.nreopens));
	if (l.reopened_by != 0)
		ADD_NUM(doc, "reopened_by_retry_of", l.reopened_by);
	else
		cJSON_AddNullToObject(doc, "reopened_by_retry_of");
	deps_links_free(&l);
	if (gone || v->group_id == 0) {
		cJSON_AddNullToObject(doc, "group");
		return DB_OK;
	}
	g = cJSON_AddObjectToObject(doc, "group");
	ADD_NUM(g, "id", v->group_id);
	serve_add_str_or_null(g, "name", v->group_name);
	return DB_OK;
}

/* GET /api/jobs/ID: the job from the queue or the dead-letter table,
 * or, once it left both (done, or forgotten), as its runs keep it until
 * they are pruned; with its runs and the admin actions taken on it.
 * 404 when it is nowhere (never there, or its runs are pruned). */
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
	int gone = 0, rc = queue_show(db, r->id, r->srv->tz, &v, err);

	if (rc == QUEUE_NOT_FOUND)
		rc = failed_show(db, r->id, r->srv->tz, &v, err);
	if (rc == QUEUE_NOT_FOUND) {
		gone = 1;
		rc = DB_OK;
	}
	if (rc != DB_OK)
		return serve_db_error(r, "show a job", err);
	if (runs_for_job(db, r->id, r->srv->tz, &runs, &nruns, err) != DB_OK ||
	    audit_for_job(db, r->id, r->srv->tz, &au, &nau, err) != DB_OK) {
		if (!gone)
			job_view_free(&v);
		runs_free(runs, nruns);
		return serve_db_error(r, "job history", err);
	}
	if (gone && nruns == 0) {
		runs_free(runs, nruns);
		audit_rows_free(au, nau);
		return serve_error(r, 404, "no such job (not queued, not dead-lettered, no runs kept)");
	}
	if (gone)
		runs_job_view(&v, r->id, runs, nruns); /* points into runs */
	doc = cJSON_CreateObject();
	cJSON_AddItemToObject(doc, "job", view_json(r, &v, gone));
	if ((rc = add_links(db, doc, &v, gone, err)) == DB_OK) {
		cJSON_AddItemToObject(doc, "runs", runs_json(runs, nruns));
		cJSON_AddItemToObject(doc, "audit", audit_json(au, nau, r->user->admin));
	}
	if (!gone)
		job_view_free(&v);
	runs_free(runs, nruns);
	audit_rows_free(au, nau);
	if (rc != DB_OK) {
		cJSON_Delete(doc);
		return serve_db_error(r, "job dependencies", err);
	}
	return serve_json(r, 200, doc);
}

/* Does fn, a one-job change of queue_list.c (one statement, no
 * transaction of its own), on r->id with its audit row, in one
 * transaction, and answers: 200, 404 or 409 (busy).  Its body, "{}", was
 * checked by the route table's guard. */
static MHD_RESULT
job_action(struct req *r, const char *action, audit_job_fn *fn, const char *conflict)
{
	struct audit_job c = { fn, r->id };
	char err[ERRSZ];
	cJSON *doc;
	int rc;

	if ((rc = serve_audited(r, action, r->id, "", audit_job_act, &c, err)) == QUEUE_NOT_FOUND)
		return serve_error(r, 404, "no such job in the queue");
	if (rc == QUEUE_CONFLICT)
		return serve_error(r, 409, conflict);
	if (rc != DB_OK)
		return serve_write_error(r, action, err);
	doc = cJSON_CreateObject();
	ADD_NUM(doc, "id", r->id);
	cJSON_AddStringToObject(doc, "done", action);
	return serve_json(r, 200, doc);
}

/* POST /api/jobs/ID/run-now: a waiting job becomes due now. */
MHD_RESULT
api_job_run_now(struct req *r)
{
	return job_action(r, "run-now", queue_make_due,
	    "a worker holds this job, or it waits for other jobs; it cannot be made due");
}

/* POST /api/jobs/ID/release: a stale job is ready again. */
MHD_RESULT
api_job_release(struct req *r)
{
	return job_action(
	    r, "release", queue_release_one, "only a stale job (its lease expired) can be released");
}

/* After a cancel whose answer was lost (serve_reconnect_unsure, so
 * connected again): whether the job has ended as cancelled.  It only
 * looks: a second cancel of a job still running would write a second
 * audit row when the first took. */
static int
cancel_took(struct req *r)
{
	char err[ERRSZ], ended[32];
	int found;

	return cancel_ended(r->db, r->id, ended, sizeof ended, &found, err) == DB_OK && found &&
	    strcmp(ended, "cancelled") == 0;
}

/* POST /api/jobs/ID/cancel: the job is cancelled, at once when no
 * worker holds it, by its worker within a second when one does
 * ("requested"); 404 when it is not in the queue (it had ended).  The
 * audit row is in the cancel's transaction.  When its answer was lost,
 * a job found cancelled since is answered as cancelled, anything else
 * with serve_db_unsure. */
MHD_RESULT
api_job_cancel(struct req *r)
{
	struct audit_entry a[2] = { serve_audit_entry(r, "cancel", 0, ""),
		serve_audit_entry(r, "cancel", 0, "running: its worker stops it") };
	enum cancel_state st;
	char err[ERRSZ];
	cJSON *doc;
	int rc, unsure = 0;

	rc = queue_cancel_audited(r->db, r->id, r->user->name, a, &st, err);
	if (rc != DB_OK && serve_reconnect_unsure(r, rc, &unsure) && unsure && cancel_took(r))
		rc = DB_OK, st = CANCEL_DONE;
	if (rc != DB_OK)
		return unsure ? serve_db_unsure(r, "cancel", err) : serve_db_error(r, "cancel", err);
	if (st == CANCEL_ENDED)
		return serve_error(r, 404, "no such job in the queue: it has ended");
	doc = cJSON_CreateObject();
	ADD_NUM(doc, "id", r->id);
	cJSON_AddStringToObject(doc, "done", "cancel");
	cJSON_AddStringToObject(doc, "state", st == CANCEL_REQUESTED ? "requested" : "cancelled");
	return serve_json(r, 200, doc);
}

/* POST /api/jobs/ID/delete: a job nobody runs leaves the queue; one
 * that other jobs wait for or a group counts does not (queue_delete),
 * and the answer says to cancel it. */
MHD_RESULT
api_job_delete(struct req *r)
{
	return job_action(r, "delete", queue_delete,
	    "it cannot be deleted: a worker is running it, or other jobs wait for it or its group counts it"
	    " (cancel it: they see it end)");
}
