/* serve_failed.c -- the dead letter: list, retry (some or all matching,
 * or one with an edited payload), forget, clear; the same failed_*
 * functions `jobq failed` calls. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deps.h"
#include "failed.h"
#include "isotime.h"
#include "json.h"
#include "queue.h"
#include "serve_audit.h"
#include "serve_auth.h"
#include "serve_bulk.h"
#include "serve_failed.h"
#include "serve_http.h"
#include "wakeup.h"

/* A dead job as the list shows it; dependents: how many jobs wait for
 * it now; reopens: how many jobs its death cancelled that a retry
 * re-opens (park.c), theirs down the graph not counted. */
static cJSON *
failed_row_json(const struct failed_row *x, uint64_t dependents, uint64_t reopens)
{
	cJSON *o = cJSON_CreateObject();

	ADD_NUM(o, "id", x->id);
	cJSON_AddStringToObject(o, "queue", x->queue);
	cJSON_AddStringToObject(o, "type", x->type);
	cJSON_AddStringToObject(o, "failed_at", x->failed_at);
	cJSON_AddStringToObject(o, "exit_status", x->exit_status);
	cJSON_AddStringToObject(o, "reason", x->reason);
	cJSON_AddStringToObject(o, "summary", x->summary); /* errtext_summary */
	ADD_NUM(o, "attempts", x->attempts);
	ADD_NUM(o, "dependents", dependents);
	ADD_NUM(o, "reopens", reopens);
	return o;
}

/* GET /api/failed?queue=&type=&limit=: newest first, and the total in
 * every queue (what "clear" would remove); each row says how many jobs
 * wait for it. */
MHD_RESULT
api_failed(struct req *r)
{
	struct failed_filter f = { 0 };
	struct failed_row *rows;
	size_t n, i;
	uint64_t total, matching, *ids, *waiters, *reopens;
	int64_t limit, after;
	const char *at;
	char err[ERRSZ], at_utc[40];
	int rc;
	cJSON *doc, *a;

	f.queue = serve_query(r, "queue");
	f.type = serve_query(r, "type");
	if (serve_query_uint(r, "limit", 1, 1000, 100, &limit) < 0 ||
	    serve_query_uint(r, "after", 0, INT64_MAX, 0, &after) < 0)
		return serve_error(r, 400, "limit (1 to 1000) and after must be whole numbers");
	if ((at = serve_query(r, "at")) != NULL) {
		if (after == 0 || isotime_to_utc(at, at_utc, sizeof at_utc, err) != 0)
			return serve_error(r, 400, "at goes with after: that job's failed_at (next_after_at)");
		f.after_at = at_utc;
	}
	f.limit = (unsigned)limit;
	if (failed_count(r->db, &(struct failed_filter){ 0 }, &total, err) != DB_OK ||
	    failed_count(r->db, &f, &matching, err) != DB_OK)
		return serve_db_error(r, "count failed jobs", err);
	f.after = (uint64_t)after; /* the page after (older than) this job */
	if ((rc = failed_list(r->db, &f, r->srv->tz, &rows, &n, err)) == QUEUE_NOT_FOUND) {
		errf(err, "failed job %llu, this page's start, has left the dead letter (retried or forgotten): "
		    "start from the newest", (unsigned long long)after);
		return serve_error(r, 409, err);
	}
	if (rc != DB_OK)
		return serve_db_error(r, "list failed jobs", err);
	ids = xcalloc(n + 1, sizeof *ids);
	waiters = xcalloc(n + 1, sizeof *waiters);
	reopens = xcalloc(n + 1, sizeof *reopens);
	for (i = 0; i < n; i++)
		ids[i] = rows[i].id;
	if (deps_count_waiters(r->db, ids, n, waiters, reopens, err) != DB_OK) {
		free(ids);
		free(waiters);
		free(reopens);
		failed_rows_free(rows, n);
		return serve_db_error(r, "count dependents", err);
	}
	doc = cJSON_CreateObject();
	a = cJSON_AddArrayToObject(doc, "failed");
	for (i = 0; i < n; i++)
		cJSON_AddItemToArray(a, failed_row_json(&rows[i], waiters[i], reopens[i]));
	ADD_NUM(doc, "total", total);
	ADD_NUM(doc, "matching", matching);
	if (n == f.limit) { /* perhaps more, older: the next page goes on from here */
		ADD_NUM(doc, "next_after", rows[n - 1].id);
		cJSON_AddStringToObject(doc, "next_after_at", rows[n - 1].at);
	} else {
		cJSON_AddNullToObject(doc, "next_after");
		cJSON_AddNullToObject(doc, "next_after_at");
	}
	free(ids);
	free(waiters);
	free(reopens);
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

/* For a retry: sets *unknown when job id's type has no [handler]
 * section in the configuration, with err saying so, as `jobq failed
 * retry` refuses it: a retry would only dead-letter it again ("unknown
 * job type").  A job no longer in the dead letter passes: the retry
 * itself says so.  Returns the read's status. */
static int
retry_type_unknown(struct req *r, uint64_t id, int *unknown, char *err)
{
	char *type = NULL, *queue = NULL;
	int exists = 0, rc;

	*unknown = 0;
	if ((rc = failed_exists(r->db, id, &exists, &type, &queue, err)) != DB_OK)
		return rc;
	if (exists && conf_handler(r->srv->conf, type) == NULL) {
		errf(err, "job %llu is of type '%s', which has no [handler] section in the configuration: "
		          "a retry would only dead-letter it again",
		    (unsigned long long)id, type);
		*unknown = 1;
	} else if (exists && !conf_has_queue(r->srv->conf, queue)) {
		errf(err, "job %llu is in queue '%s', which has no [queue] section in the configuration: "
		          "a retry would leave it where no worker serves it",
		    (unsigned long long)id, queue);
		*unknown = 1;
	}
	free(type);
	free(queue);
	return DB_OK;
}

/* To a stopped action's answer doc, "left": how many of the ids it had
 * not come to (ids[0..n)) are dead-lettered still: another admin may
 * have retried or forgotten some meanwhile, and the page must not call
 * those left as they were.  None when the database cannot say. */
static void
add_left_ids(struct req *r, cJSON *doc, const uint64_t *ids, size_t n)
{
	uint64_t left = 0;
	char err[ERRSZ];
	size_t i;
	int exists;

	for (i = 0; i < n; i++) {
		if (failed_exists(r->db, ids[i], &exists, NULL, NULL, err) != DB_OK)
			return;
		left += exists != 0;
	}
	ADD_NUM(doc, "left", left);
}

/* Applies fn (failed_retry_audited or failed_forget_audited) to each
 * id, each job's audit row in its transaction; ids that are not
 * dead-lettered (any more) are listed as missing, and those the
 * database refused ({id, error}: its unique key is taken, a job it
 * cancelled is held by a worker, a retry of a type no [handler] takes)
 * as refused, the others tried still.
 * A job whose answer was lost is tried once more after a reconnect, as
 * `jobq failed` does (failed_act_reconnecting): found moved, it counts
 * as done.  Only a database gone away stops it, or a session that ended
 * or lost the admin role as it ran (looked up before each job): 401 or
 * 403 (503 when the database cannot be reached to look), with "error",
 * what was done before, and "left": how many of the ids after it are
 * still dead-lettered, untouched (add_left_ids). */
static MHD_RESULT
each_failed(struct req *r, const char *action, failed_act_fn *fn)
{
	cJSON *in = serve_body_json(r), *doc, *missing, *refused;
	struct audit_entry a = serve_audit_entry(r, action, 0, "");
	struct serve_still st;
	const struct audit_still *still = serve_still_admin(&st, r);
	size_t n, i, okn = 0;
	uint64_t *ids = body_ids(in, &n);
	char err[ERRSZ];
	int rc = DB_OK;

	cJSON_Delete(in);
	if (ids == NULL)
		return serve_error(r, 400, "expected {\"ids\": [1 to 1000 job ids]}");
	doc = cJSON_CreateObject();
	missing = cJSON_AddArrayToObject(doc, "missing");
	refused = cJSON_AddArrayToObject(doc, "refused");
	for (i = 0; i < n && rc != DB_EGONE && rc != DB_ERETRY; i++) {
		int unknown = 0;

		if ((rc = audit_still_ok(still, err)) != DB_OK)
			break;
		rc = fn == failed_retry_audited ? retry_type_unknown(r, ids[i], &unknown, err) : DB_OK;
		if (rc == DB_OK && unknown)
			rc = DB_EFAIL; /* refused, with err */
		else if (rc == DB_OK)
			rc = failed_act_reconnecting(r->db, fn, ids[i], &a, err);
		if (rc == DB_OK)
			okn++;
		else if (rc == QUEUE_NOT_FOUND)
			cJSON_AddItemToArray(missing, cJSON_CreateNumber((double)ids[i]));
		else if (rc == DB_EFAIL) {
			cJSON *o = cJSON_CreateObject();

			ADD_NUM(o, "id", ids[i]);
			cJSON_AddStringToObject(o, "error", err);
			cJSON_AddItemToArray(refused, o);
		}
	}
	if (rc == DB_EGONE || rc == DB_ERETRY) {
		free(ids);
		cJSON_Delete(doc);
		return serve_write_error(r, action, err);
	}
	if (rc == AUDIT_STOPPED)
		add_left_ids(r, doc, ids + i, n - i);
	free(ids);
	ADD_NUM(doc, strcmp(action, "retry") == 0 ? "retried" : "forgotten", okn);
	return serve_still_answer(r, &st, rc, err, doc);
}

/* What one "retry all matching" did: jobs moved back to the queue, and
 * jobs the server refused (each is logged; the run goes on).  Each job
 * moved gets its own audit row in the transaction that moves it
 * (failed_filter.audit), so its page says who retried it even when the
 * run stops half-way, and no job moves without one. */
struct retry_tally {
	uint64_t moved, refused, unknown;
};

static void
tally_retry(void *arg, uint64_t id, int rc, const char *err)
{
	struct retry_tally *t = arg;

	if (rc == DB_OK) {
		t->moved++;
	} else if (rc != QUEUE_NOT_FOUND) {
		t->refused++;
		log_warn("retry failed job %llu: %s", (unsigned long long)id, err);
	}
}

/* The summary row of a "retry all matching" (retry_all), the counts
 * first, the filter last.  A run through is its user's action.  A run
 * the server stopped (stop: why) is recorded in the server's name
 * (serve_audit_stopped): its user had lost the right to act by then,
 * and the row says whose run it was, what it did, what it left (left:
 * count_left) and why it stopped.  One stopped before it moved a job
 * changed nothing and has no row. */
static void
summary(struct req *r, const struct failed_filter *f, const struct retry_tally *t, const char *stop, int64_t left)
{
	char unknown[64], *what;

	snprintf(unknown, sizeof unknown, ", %llu of a type or queue not configured left",
	    (unsigned long long)t->unknown);
	what = xasprintf("all matching queue=%s type=%s", f->queue ? f->queue : "*", f->type ? f->type : "*");
	if (stop == NULL) {
		char *detail = xasprintf("%llu jobs, %llu refused%s: %s", (unsigned long long)t->moved,
		    (unsigned long long)t->refused, t->unknown > 0 ? unknown : "", what);

		serve_audit_count(r, "retry-all", 0, t->moved, detail);
		free(detail);
	} else if (t->moved > 0) {
		struct serve_stop s = { t->moved, t->refused, t->unknown > 0 ? unknown : NULL, left };

		serve_audit_stopped(r, "retry-all", &s, stop, what);
	}
	free(what);
}

/* Of an action on every dead job f matches that ended with rc: when it
 * was stopped (AUDIT_STOPPED), how many it leaves, counted now: the
 * jobs that others retried or forgot meanwhile are not among them,
 * those that died meanwhile are.  -1 when it was not stopped or the
 * database cannot say. */
static int64_t
count_left(struct req *r, int rc, const struct failed_filter *f)
{
	struct failed_filter now = *f;
	uint64_t left;
	char err[ERRSZ];

	now.audit = NULL;
	now.still = NULL;
	if (rc == AUDIT_STOPPED && failed_count(r->db, &now, &left, err) == DB_OK)
		return (int64_t)left;
	return -1;
}

/* To a stopped action's answer doc, "left" (count_left), when known. */
static void
add_left(cJSON *doc, int64_t left)
{
	if (left >= 0)
		ADD_NUM(doc, "left", (uint64_t)left);
}

/* Retries every dead-lettered job matching the body's filters: one audit
 * row per job moved, and one for the whole run with its count.  That
 * summary is written once the run is through, in a transaction of its
 * own: the jobs are as many transactions, each with its own row, and
 * the count is known only at the end.  The session and its admin role
 * are looked up before each job: a run whose session ended or whose
 * role was taken away stops there (401, 403, with "error", the counts
 * so far and the jobs left: add_left; its summary, the server's, says
 * it stopped and why). */
static MHD_RESULT
retry_all(struct req *r, cJSON *in)
{
	struct failed_filter f = { 0 };
	struct retry_tally t = { 0, 0, 0 };
	struct serve_still st;
	struct audit_entry a;
	const char *msg = NULL;
	char err[ERRSZ], *detail;
	unsigned status;
	int64_t left;
	int rc;
	cJSON *doc;

	if ((status = serve_bulk_names(r, in, &f.queue, &f.type, &msg)) != 0)
		return serve_error(r, status, msg);
	detail = xasprintf("all matching queue=%s type=%s", f.queue ? f.queue : "*", f.type ? f.type : "*");
	a = serve_audit_entry(r, "retry-all", 0, detail);
	/* the jobs of a type or queue not configured stay, counted: as jobq failed retry --all */
	f.handlers = r->srv->conf;
	f.unknown_types = 1;
	if (failed_count(r->db, &f, &t.unknown, err) != DB_OK) {
		free(detail);
		return serve_write_error(r, "retry matching", err);
	}
	f.unknown_types = 0;
	f.audit = &a;
	f.still = serve_still_admin(&st, r);
	if ((rc = failed_retry_matching(r->db, &f, tally_retry, &t, err)) != DB_OK && rc != AUDIT_STOPPED) {
		free(detail);
		return serve_write_error(r, "retry matching", err);
	}
	wakeup_send(r->srv->conf, f.queue);
	free(detail);
	left = count_left(r, rc, &f);
	summary(r, &f, &t, rc == AUDIT_STOPPED ? err : NULL, left);
	doc = cJSON_CreateObject();
	ADD_NUM(doc, "retried", t.moved);
	ADD_NUM(doc, "refused", t.refused);
	ADD_NUM(doc, "unknown_type", t.unknown);
	add_left(doc, left);
	return serve_still_answer(r, &st, rc, err, doc);
}

/* POST /api/failed/retry {"ids": [...]} or {"all": true, "queue",
 * "type"}: back to the queue, attempts reset, as `jobq failed retry`. */
MHD_RESULT
api_failed_retry(struct req *r)
{
	cJSON *in = serve_body_json(r);
	MHD_RESULT ret;

	if (!cJSON_IsTrue(cJSON_GetObjectItem(in, "all"))) {
		cJSON_Delete(in);
		ret = each_failed(r, "retry", failed_retry_audited);
		wakeup_send(r->srv->conf, NULL); /* retried jobs are due now */
		return ret;
	}
	ret = retry_all(r, in);
	cJSON_Delete(in);
	return ret;
}

/* POST /api/failed/retry-edited {"id": N, "payload": "JSON text"}: the
 * dead job back to its queue carrying the new payload, with an audit row
 * that holds the old and the new one (failed_retry_edited, as `jobq
 * failed retry --payload`).  400 for a body that is not that shape, 422
 * for a payload that is not JSON or is over max_payload or a job of a
 * type no [handler] takes, 404 when the job
 * is not (any more) dead-lettered, 409 when its id or unique key is in
 * the queue again; each changes nothing. */
MHD_RESULT
api_failed_retry_edited(struct req *r)
{
	cJSON *in = serve_body_json(r), *id = cJSON_GetObjectItem(in, "id"), *doc;
	const char *payload = cJSON_GetStringValue(cJSON_GetObjectItem(in, "payload"));
	struct failed_edit e = { payload, 0, r->srv->conf->worker.max_payload, r->user->name, r->addr };
	uint64_t job;
	char err[ERRSZ];
	int rc, unknown;

	if (!cJSON_IsNumber(id) || id->valuedouble < 1 || id->valuedouble > 9e15 ||
	    id->valuedouble != (double)(uint64_t)id->valuedouble || payload == NULL) {
		cJSON_Delete(in);
		return serve_error(r, 400, "expected {\"id\": a job id, \"payload\": JSON text}");
	}
	/* cJSON ends a string at a NUL: the payload would lose the rest */
	if (json_has_escaped_nul(r->body.data, r->body.len)) {
		cJSON_Delete(in);
		return serve_error(r, 422, "payload: it holds \\u0000 (NUL), which a job cannot hold");
	}
	job = (uint64_t)id->valuedouble;
	e.payload_len = strlen(payload);
	if ((rc = retry_type_unknown(r, job, &unknown, err)) == DB_OK)
		rc = unknown ? FAILED_BAD_PAYLOAD /* 422, nothing changed */
		             : failed_retry_edited(r->db, job, &e, err);
	cJSON_Delete(in);
	if (rc == FAILED_BAD_PAYLOAD || rc == FAILED_HELD)
		return serve_error(r, rc == FAILED_HELD ? 409 : 422, err);
	if (rc == QUEUE_NOT_FOUND)
		return serve_error(
		    r, 404, "the job is not in the dead letter (retried or forgotten meanwhile?)");
	if (rc != DB_OK)
		return serve_write_error(r, "retry edited", err);
	wakeup_send(r->srv->conf, NULL); /* the job is due now */
	doc = cJSON_CreateObject();
	ADD_NUM(doc, "retried", job);
	return serve_json(r, 200, doc);
}

/* POST /api/failed/forget {"ids": [...]}: deleted for good. */
MHD_RESULT
api_failed_forget(struct req *r)
{
	return each_failed(r, "forget", failed_forget_audited);
}

/* POST /api/failed/clear {"count": N}: empties the dead-letter table,
 * but only when it still holds the N jobs the person confirmed (409 and
 * the new count otherwise).  It deletes them a chunk (1000) at a time,
 * each chunk's transaction with its audit row (action clear, the
 * chunk's count): one row for a clear of up to 1000 jobs, as many as
 * it took transactions for more, never a job gone uncounted.  The
 * session and its admin role are looked up before each chunk: a clear
 * whose session ended or whose role was taken away stops there (401,
 * 403, with "error", the jobs removed before and those left). */
MHD_RESULT
api_failed_clear(struct req *r)
{
	cJSON *in = serve_body_json(r), *doc;
	cJSON *want = cJSON_GetObjectItem(in, "count");
	struct serve_still st;
	struct audit_entry a;
	uint64_t total, removed;
	char err[ERRSZ];
	int rc, ok = cJSON_IsNumber(want) && want->valuedouble >= 0;
	double expect = ok ? want->valuedouble : 0;

	cJSON_Delete(in);
	if (!ok)
		return serve_error(r, 400, "expected {\"count\": the number of failed jobs confirmed}");
	if (failed_count(r->db, &(struct failed_filter){ 0 }, &total, err) != DB_OK)
		return serve_db_error(r, "count failed jobs", err);
	if ((double)total != expect) {
		doc = cJSON_CreateObject();
		cJSON_AddStringToObject(doc, "error", "the number of failed jobs changed; confirm again");
		ADD_NUM(doc, "count", total);
		return serve_json(r, 409, doc);
	}
	a = serve_audit_entry(r, "clear", 0, " jobs");
	rc = failed_clear_audited(r->db, &a, serve_still_admin(&st, r), &removed, err);
	if (rc != DB_OK && rc != AUDIT_STOPPED)
		return serve_write_error(r, "clear failed jobs", err);
	/* Each chunk deleted wrote its row (its count, and "N jobs"); a
	 * clear that found nothing to delete changed nothing, and its row
	 * says so alone. */
	if (removed == 0 && rc == DB_OK)
		serve_audit_count(r, "clear", 0, 0, "0 jobs");
	doc = cJSON_CreateObject();
	ADD_NUM(doc, "removed", removed);
	add_left(doc, count_left(r, rc, &(struct failed_filter){ 0 }));
	return serve_still_answer(r, &st, rc, err, doc);
}
