/* serve_enqueue.c -- the enqueue form: the INI whitelists, and POST
 * /api/enqueue through queue_enqueue, once per submit id
 * (serve_submit.c); jobs with a unique key, jobs to wait for or a group
 * through serve_enqueue_flow.c. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"
#include "batch.h"
#include "json.h"
#include "queue.h"
#include "serve_audit.h"
#include "serve_enqueue.h"
#include "serve_enqueue_flow.h"
#include "serve_http.h"
#include "serve_submit.h"
#include "wakeup.h"

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
	const char *submit_id; /* NULL: not tracked */
	double count;
	struct batch_job job; /* the options as `jobq enqueue` reads them */
	struct enq_flow flow; /* unique key, jobs to wait for, group */
	char why[ERRSZ];      /* what is wrong with the request */
};

/* The fields of a batch line the API does not take: "ref" names a line
 * for later lines of the same input, and a request enqueues one job
 * shape (count copies of it), so there is nothing for it to name. */
static const char *const CLI_ONLY[] = { "ref" };

/* The fields serve_enqueue_flow_read reads, which a batch line does not
 * have (--unique-key, --unique-for, and --group with its callbacks are
 * options of the command). */
static const char *const FLOW_FIELDS[] = { "unique_key", "unique_for", "group", "on_complete", "on_success" };

/* More fields than any enqueue has (it takes about 20): refused before
 * the search for one given twice, which takes time growing with the
 * square of their number (40,000 fields of a 4 MiB body: seconds). */
#define ENQ_FIELDS_MAX 64

/* Refuses a field given twice (cJSON would read the first, the sender's
 * JSON library perhaps the last), the fields of CLI_ONLY and more than
 * ENQ_FIELDS_MAX: 0, or -1 with e->why naming the field. */
static int
enq_fields(cJSON *in, struct enq_req *e)
{
	const cJSON *v, *w;
	size_t i, n = 0;

	for (v = in->child; v != NULL; v = v->next)
		if (++n > ENQ_FIELDS_MAX)
			return errf(e->why, "more than %d fields: more than any enqueue has", ENQ_FIELDS_MAX),
			       -1;
	for (v = in->child; v != NULL; v = v->next) {
		for (w = in->child; w != v; w = w->next)
			if (strcmp(w->string, v->string) == 0)
				return errf(e->why, "field \"%s\" is given twice", v->string), -1;
		for (i = 0; i < ARRAY_LEN(CLI_ONLY); i++)
			if (strcmp(v->string, CLI_ONLY[i]) == 0)
				return errf(e->why,
				           "\"%s\": the API enqueues one job shape, which has no line to name; use \"after\" "
				           "with job ids",
				           v->string),
				       -1;
	}
	return 0;
}

/* Reads the options every job of the request gets ("delay" or "at",
 * "priority", "max_attempts", "expires_in" or "expires_at",
 * "traceparent") through batch_line_parse, the reader of `jobq enqueue
 * --batch`: the same fields are accepted with the same meaning and the
 * same limits, and an unknown one is refused by name.  The queue is
 * e->queue (whitelisted already); the payload stays the request's text.
 * 0, or -1 with e->why set. */
static int
enq_options(const struct conf *c, cJSON *in, struct enq_req *e)
{
	struct batch_ctx ctx = { .conf = c };
	cJSON *line = cJSON_Duplicate(in, 1);
	char *text;
	size_t i;
	int rc;

	if (line == NULL)
		fatal("cJSON_Duplicate: out of memory");
	cJSON_DeleteItemFromObjectCaseSensitive(line, "payload");
	cJSON_DeleteItemFromObjectCaseSensitive(line, "count");
	cJSON_DeleteItemFromObjectCaseSensitive(line, "submit_id");
	cJSON_DeleteItemFromObjectCaseSensitive(line, "queue");
	for (i = 0; i < ARRAY_LEN(FLOW_FIELDS); i++)
		cJSON_DeleteItemFromObjectCaseSensitive(line, FLOW_FIELDS[i]);
	if (cJSON_AddStringToObject(line, "queue", e->queue) == NULL ||
	    (text = cJSON_PrintUnformatted(line)) == NULL)
		fatal("cJSON_PrintUnformatted: out of memory");
	cJSON_Delete(line);
	rc = batch_line_parse(text, strlen(text), &ctx, &e->job, e->why);
	cJSON_free(text);
	if (rc == 0 && e->job.nafter_refs > 0)
		return errf(e->why, "\"after\": job ids only (a name there is the \"ref\" of a --batch line)"), -1;
	e->flow.after = e->job.after_ids;
	e->flow.nafter = e->job.nafter_ids;
	e->flow.after_any = e->job.after_any;
	return rc < 0 ? rc : serve_enqueue_flow_read(c, in, e->count, &e->flow, e->why);
}

/* Checks an enqueue request: 0, or the status with msg set.  On 0 the
 * caller clears e->job. */
static unsigned
enq_check(struct req *r, cJSON *in, struct enq_req *e, const char **msg)
{
	const struct conf *c = r->srv->conf;
	const struct handler *h;
	cJSON *p, *n;

	e->type = cJSON_GetStringValue(cJSON_GetObjectItem(in, "type"));
	e->queue = cJSON_GetStringValue(cJSON_GetObjectItem(in, "queue"));
	p = cJSON_GetObjectItem(in, "payload");
	n = cJSON_GetObjectItem(in, "count");
	e->payload = cJSON_IsString(p) ? p->valuestring : NULL;
	e->count = cJSON_IsNumber(n) ? n->valuedouble : n == NULL ? 1 : -1;
	if (e->type == NULL || e->payload == NULL)
		return *msg = "expected {\"type\", \"payload\" (JSON text), \"queue\", \"count\", \"submit_id\","
		              " \"delay\" or \"at\", \"priority\", \"max_attempts\", \"expires_in\" or"
		              " \"expires_at\", \"traceparent\", \"unique_key\", \"unique_for\", \"after\","
		              " \"after_policy\", \"group\", \"on_complete\", \"on_success\"}",
		       400;
	if (enq_fields(in, e) < 0)
		return *msg = e->why, 400;
	if (e->queue == NULL && !cJSON_IsNull(cJSON_GetObjectItem(in, "queue")) &&
	    cJSON_GetObjectItem(in, "queue") != NULL)
		return *msg = "\"queue\" is not a string", 400;
	if (serve_submit_id(in, &e->submit_id, msg) < 0)
		return 400;
	if ((h = conf_handler(c, e->type)) == NULL)
		return *msg = "unknown job type (no [handler TYPE] section)", 422;
	if (e->queue == NULL || *e->queue == '\0')
		e->queue = h->queue;
	if (!conf_has_queue(c, e->queue))
		return *msg = "unknown queue (no [queue NAME] section)", 422;
	if (!(e->count >= 1 && e->count <= 1000) || e->count != (double)(int)e->count)
		return *msg = "count: a whole number from 1 to 1000", 400;
	/* The rule `jobq enqueue` holds a payload to: one JSON value and
	 * nothing after it, UTF-8, no raw control character in a string. */
	if (json_payload_check(e->payload, strlen(e->payload), c->worker.max_payload, 0, e->why) < 0)
		return *msg = e->why, 400;
	if (strlen(e->payload) * (size_t)e->count > 16 * 1024 * 1024)
		return *msg = "payload times count is more than 16 MiB", 400;
	if (enq_options(c, in, e) < 0)
		return *msg = e->why, 400;
	return 0;
}

/* Refuses an "expires_at" that has passed by the database's clock, as
 * `jobq enqueue` does: the job would expire as it is enqueued; and any
 * expiry not after the job's due time: it would never run.  0, 400, or
 * 503 when the database could not tell (msg: why). */
static unsigned
enq_ahead(struct req *r, struct enq_req *e, const char **msg)
{
	const char *utc = e->job.e.expires_at;
	char now[40];

	if (utc == NULL && e->job.e.expires_in_ms <= 0)
		return 0;
	if (queue_db_now(r->db, now, sizeof now, e->why) != DB_OK)
		return *msg = e->why, 503;
	if (utc != NULL && strcmp(utc, now) <= 0)
		errf(e->why,
		    "\"expires_at\": %s UTC is in the past by the database's clock; the job would expire as it "
		    "is enqueued",
		    utc);
	else if (enqueue_expiry_check(&e->job.e, now, e->why) == 0)
		return 0;
	return *msg = e->why, 400;
}

/* What enqueue_audited returns for a request whose statement the server
 * would not take (err says why); nothing was sent. */
#define ENQ_TOO_BIG 100

/* Whether len bytes of SQL for n jobs are more than the server's
 * max_allowed_packet (as read at connect; 0, unknown, is not checked).
 * Past it the server drops the connection: the dashboard would report
 * the database down to everyone, and a form's resend would be dropped
 * again.  So the request is refused whole, naming the field to change,
 * as `jobq enqueue` refuses such a job (batch.h). */
static int
too_big(struct req *r, size_t n, size_t len, char *err)
{
	size_t max = db_max_packet(r->db);

	if (max == 0 || len + BATCH_SQL_OVERHEAD <= max)
		return 0;
	if (n > 1)
		errf(err,
		    "count: %zu jobs of this payload make a statement of about %zu bytes, more than the "
		    "database's max_allowed_packet (%zu); enqueue fewer at once",
		    n, len + BATCH_SQL_OVERHEAD, max);
	else
		errf(err,
		    "payload: the job makes a statement of about %zu bytes, more than the database's "
		    "max_allowed_packet (%zu)",
		    len + BATCH_SQL_OVERHEAD, max);
	return 1;
}

/* Enqueues items[0..n), each job with its audit row, in one
 * transaction: a job is never there without the row that says who put it
 * there, and each job's page shows it.  One INSERT per job, because only
 * a single-row INSERT tells its id for sure (a multi-row one need not
 * take consecutive ids: auto_increment_increment on Galera, interleaved
 * auto-increment locks).  With a submit id the transaction claims it
 * first and records the jobs last, every id of them (@jobq_ids,
 * serve_submit.c).  o->first is the
 * first job's id, o->ids every job's, in order (they need not follow
 * one another); o->repeated 1 when the id was submitted before, and
 * then o->a holds that submit's answer and nothing was enqueued. */
static int
enqueue_audited(struct req *r, const struct enqueue_item *items, size_t n, const char *detail,
    const char *submit_id, struct enq_flow_out *o, char *err)
{
	struct audit_entry e = { r->user->name, r->addr, "enqueue", n > 1 ? n : 0, detail };
	struct db_res *res;
	struct buf sql;
	char **row;
	size_t i;
	int rc;

	free(o->ids);
	o->ids = NULL;
	o->repeated = 0;
	serve_submit_answer_clear(&o->a);
	buf_init(&sql);
	buf_adds(&sql, "START TRANSACTION;");
	if (submit_id != NULL)
		serve_submit_claim_sql(r, &sql, submit_id);
	for (i = 0; i < n; i++) {
		queue_enqueue_sql(r->db, &sql, &items[i], 1, NULL);
		/* each id as it is made: the audit row's INSERT makes its own */
		buf_adds(&sql, i == 0 ? ";SET @jobq_first = LAST_INSERT_ID(), @jobq_ids = LAST_INSERT_ID();"
		                      : ";SET @jobq_ids = CONCAT(@jobq_ids, ',', LAST_INSERT_ID());");
		audit_sql(r->db, &sql, &e, "LAST_INSERT_ID()");
		buf_adds(&sql, ";");
	}
	if (submit_id != NULL)
		serve_submit_done_sql(r, &sql, submit_id, n);
	buf_adds(&sql, "COMMIT");
	if (too_big(r, n, sql.len, err)) {
		buf_free(&sql);
		return ENQ_TOO_BIG;
	}
	rc = db_exec_retry(r->db, &sql, NULL, 0, err);
	buf_free(&sql);
	if (submit_id != NULL && (o->repeated = serve_submit_repeated(r, rc, submit_id, &o->a, err)) != 0)
		return o->repeated < 0 ? DB_EFAIL : DB_OK;
	if (rc != DB_OK || (res = db_query(r->db, &rc, err, "SELECT @jobq_first, @jobq_ids")) == NULL)
		return rc;
	if ((row = db_res_next(res)) != NULL) {
		char *p = row[1] != NULL ? row[1] : "", *end;

		o->first = db_col_u64(row[0], 0);
		o->ids = xcalloc(n + 1, sizeof *o->ids);
		for (i = 0; i < n && *p != '\0'; i++, p = *end == ',' ? end + 1 : end)
			o->ids[i] = strtoull(p, &end, 10);
	}
	db_res_free(res);
	return DB_OK;
}

/* The answer's "ids": every job's id, in the order of the jobs (ids,
 * or NULL for one job: first).  Ids need not follow one another
 * (auto_increment_increment on Galera, another transaction's insert
 * between two of ours), so first_id and count alone do not name the
 * jobs.  A repeated submit answers the ids its record keeps, the same
 * as the first answer; a record written before schema 29 keeps only the
 * first and the count: null for more than one job. */
static void
add_ids(cJSON *doc, const uint64_t *ids, uint64_t first, uint64_t count)
{
	cJSON *a;
	uint64_t i;

	if (ids == NULL && count > 1) {
		cJSON_AddNullToObject(doc, "ids");
		return;
	}
	a = cJSON_AddArrayToObject(doc, "ids");
	for (i = 0; i < count; i++)
		cJSON_AddItemToArray(a, cJSON_CreateNumber((double)(ids != NULL ? ids[i] : first)));
}

/* The answer to an enqueue: the first job's id, how many, and whether
 * an earlier request of the same submit made them; with "after", how
 * many of the jobs named have not ended, and why the jobs were
 * cancelled at once if they were.  A unique key that was taken is
 * answered 200 too, as `jobq enqueue` exits 0: "refused", the job that
 * holds the key, nothing enqueued.  A repeat of a submit id answers
 * what it made (or that it was refused) as the first time. */
static MHD_RESULT
enqueued(struct req *r, const struct enq_flow_out *o, uint64_t count, int after)
{
	cJSON *doc = cJSON_CreateObject();
	uint64_t first = o->repeated ? o->a.first_id : o->first;
	char msg[96];

	if (o->repeated)
		count = o->a.count;
	if (o->refused || (o->repeated && count == 0)) {
		cJSON_AddBoolToObject(doc, "refused", 1);
		ADD_NUM(doc, "holder_id", first);
		ADD_NUM(doc, "count", 0);
		snprintf(msg, sizeof msg, "the unique key is taken by job %llu; nothing was enqueued",
		    (unsigned long long)first);
		cJSON_AddStringToObject(doc, "message", msg);
		if (!o->repeated)
			cJSON_AddBoolToObject(doc, "in_window", o->in_window);
	} else {
		ADD_NUM(doc, "first_id", first);
		ADD_NUM(doc, "count", count);
		add_ids(doc, o->repeated ? o->a.ids : o->ids, first, count);
	}
	if (after && !o->repeated && !o->refused)
		ADD_NUM(doc, "waiting_on", o->waiting_on);
	if (!o->repeated && o->cancelled[0] != '\0')
		cJSON_AddStringToObject(doc, "cancelled", o->cancelled);
	cJSON_AddBoolToObject(doc, "repeated", o->repeated);
	return serve_json(r, 200, doc);
}

/* The statement of one job is within the server's packet (too_big);
 * a flow enqueue sends its jobs one statement each. */
static int
flow_too_big(struct req *r, const struct enqueue_item *it, char *err)
{
	struct buf sql;
	int big;

	buf_init(&sql);
	queue_enqueue_sql(r->db, &sql, it, 1, NULL);
	big = too_big(r, 1, sql.len, err);
	buf_free(&sql);
	return big;
}

/* Writes the jobs of e (items[0..n)): through serve_enqueue_flow when
 * they need a unique key, jobs to wait for or a group, else as one
 * multi-statement transaction (enqueue_audited).  An answer lost with a
 * submit id: the same submit again finds the first (repeated) when it
 * took, and enqueues now when it did not. */
static int
write_jobs(struct req *r, const struct enq_req *e, const struct enqueue_item *items, size_t n,
    const char *detail, struct enq_flow_out *o, int *unsure, char *err)
{
	struct enq_write w = { &e->flow, items, n, detail, e->submit_id };
	int rc, again = 0;

	if (!serve_enqueue_flow_used(&e->flow)) {
		do
			rc = enqueue_audited(r, items, n, detail, e->submit_id, o, err);
		while (!again++ && e->submit_id != NULL && serve_reconnect_unsure(r, rc, unsure));
		return rc;
	}
	if (flow_too_big(r, &items[0], err))
		return ENQ_TOO_BIG;
	do
		rc = serve_enqueue_flow(r, &w, o, err);
	while (!again++ && e->submit_id != NULL && serve_reconnect_unsure(r, rc, unsure));
	return rc;
}

/* POST /api/enqueue {"type", "queue", "payload", "count", "submit_id",
 * the options of enq_options, and "unique_key", "unique_for", "after",
 * "after_policy", "group", "on_complete", "on_success" as
 * serve_enqueue_flow_read reads them}: type and queue from the INI
 * whitelists only (422 otherwise); any other field, or one given twice,
 * is refused by name (400).  A submit_id seen before from this user enqueues nothing
 * and gets the first request's answer with "repeated": true.  An answer
 * lost without a submit_id is serve_db_unsure's 504. */
MHD_RESULT
api_enqueue(struct req *r)
{
	cJSON *in = serve_body_json(r);
	struct enqueue_item *items;
	struct enq_flow_out o = { 0 };
	struct enq_req e = { 0 };
	const char *msg = NULL;
	unsigned status, i;
	char err[ERRSZ], *detail;
	int rc, unsure = 0;
	MHD_RESULT ret;

	if (in == NULL)
		return serve_error(r, 400, "the body is not a JSON object");
	/* cJSON ends a string at a NUL: "{}\u0000junk" would enqueue "{}" */
	if (json_has_escaped_nul(r->body.data, r->body.len)) {
		cJSON_Delete(in);
		return serve_error(r, 400, "a string of the body holds \\u0000 (NUL), which a job cannot hold");
	}
	if ((status = enq_check(r, in, &e, &msg)) != 0 || (status = enq_ahead(r, &e, &msg)) != 0) {
		batch_job_clear(&e.job);
		cJSON_Delete(in);
		return status == 503 ? serve_db_error(r, "enqueue", msg) : serve_error(r, status, msg);
	}
	if (e.submit_id != NULL)
		serve_submit_prune(r);
	items = xcalloc((size_t)e.count, sizeof *items);
	for (i = 0; i < (unsigned)e.count; i++) {
		items[i] = e.job.e;
		items[i].payload = e.payload;
		items[i].payload_len = strlen(e.payload);
		items[i].unique_key = e.flow.unique_key;
	}
	/* type and queue are whitelisted names: nothing a person typed */
	detail = xasprintf("type=%s queue=%s", e.type, e.queue);
	rc = write_jobs(r, &e, items, (size_t)e.count, detail, &o, &unsure, err);
	if (rc == ENQ_TOO_BIG || rc == ENQ_FLOW_EUNKNOWN)
		ret = serve_error(r, 400, err);
	else if (rc == ENQ_FLOW_EGROUP)
		ret = serve_error(r, 409, err);
	else if (rc != DB_OK)
		ret = unsure ? serve_db_unsure(r, "enqueue", err) : serve_write_error(r, "enqueue", err);
	else {
		if (!o.repeated && !o.refused)
			wakeup_enqueued(r->srv->conf, items, (size_t)e.count);
		ret = enqueued(r, &o, (uint64_t)e.count, e.flow.nafter > 0);
	}
	free(detail);
	free(items);
	free(o.ids);
	serve_submit_answer_clear(&o.a);
	batch_job_clear(&e.job);
	cJSON_Delete(in);
	return ret;
}
