/* serve_enqueue.c -- the enqueue form: the INI whitelists, and POST
 * /api/enqueue through queue_enqueue, once per submit id
 * (serve_submit.c). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"
#include "json.h"
#include "queue.h"
#include "serve_audit.h"
#include "serve_enqueue.h"
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
	double delay_s, count;
	char why[ERRSZ]; /* what is wrong with the payload */
};

/* Checks an enqueue request: 0, or the status with msg set. */
static unsigned
enq_check(struct req *r, cJSON *in, struct enq_req *e, const char **msg)
{
	const struct conf *c = r->srv->conf;
	const struct handler *h;
	cJSON *p, *d, *n;

	e->type = cJSON_GetStringValue(cJSON_GetObjectItem(in, "type"));
	e->queue = cJSON_GetStringValue(cJSON_GetObjectItem(in, "queue"));
	p = cJSON_GetObjectItem(in, "payload");
	d = cJSON_GetObjectItem(in, "delay");
	n = cJSON_GetObjectItem(in, "count");
	e->payload = cJSON_IsString(p) ? p->valuestring : NULL;
	e->delay_s = cJSON_IsNumber(d) ? d->valuedouble : d == NULL ? 0 : -1;
	e->count = cJSON_IsNumber(n) ? n->valuedouble : n == NULL ? 1 : -1;
	if (e->type == NULL || e->payload == NULL)
		return *msg = "expected {\"type\", \"payload\" (JSON text), \"queue\", \"delay\", \"count\","
		              " \"submit_id\"}",
		       400;
	if (serve_submit_id(in, &e->submit_id, msg) < 0)
		return 400;
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
	/* The rule `jobq enqueue` holds a payload to: one JSON value and
	 * nothing after it, UTF-8, no raw control character in a string. */
	if (json_payload_check(e->payload, strlen(e->payload), c->worker.max_payload, 0, e->why) < 0)
		return *msg = e->why, 400;
	if (strlen(e->payload) * (size_t)e->count > 16 * 1024 * 1024)
		return *msg = "payload times count is more than 16 MiB", 400;
	return 0;
}

/* Enqueues items[0..n), each job with its audit row, in one
 * transaction: a job is never there without the row that says who put it
 * there, and each job's page shows it.  One INSERT per job, because only
 * a single-row INSERT tells its id for sure (a multi-row one need not
 * take consecutive ids: auto_increment_increment on Galera, interleaved
 * auto-increment locks).  With a submit id the transaction claims it
 * first and records the jobs last (serve_submit.c).  *first is the first
 * job's id; *repeated 1 when the id was submitted before, and then *a
 * holds that submit's answer and nothing was enqueued. */
static int
enqueue_audited(struct req *r, const struct enqueue_item *items, size_t n, const char *detail,
    const char *submit_id, uint64_t *first, struct submit_answer *a, int *repeated, char *err)
{
	struct audit_entry e = { r->user->name, r->addr, "enqueue", n > 1 ? n : 0, detail };
	struct db_res *res;
	struct buf sql;
	char **row;
	size_t i;
	int rc;

	*repeated = 0;
	buf_init(&sql);
	buf_adds(&sql, "START TRANSACTION;");
	if (submit_id != NULL)
		serve_submit_claim_sql(r, &sql, submit_id);
	for (i = 0; i < n; i++) {
		queue_enqueue_sql(r->db, &sql, &items[i], 1, NULL);
		buf_adds(&sql, i == 0 ? ";SET @jobq_first = LAST_INSERT_ID();" : ";");
		audit_sql(r->db, &sql, &e, "LAST_INSERT_ID()");
		buf_adds(&sql, ";");
	}
	if (submit_id != NULL)
		serve_submit_done_sql(r, &sql, submit_id, n);
	buf_adds(&sql, "COMMIT");
	rc = db_exec_retry(r->db, &sql, NULL, 0, err);
	buf_free(&sql);
	if (submit_id != NULL && (*repeated = serve_submit_repeated(r, rc, submit_id, a, err)) != 0)
		return *repeated < 0 ? DB_EFAIL : DB_OK;
	if (rc != DB_OK || (res = db_query(r->db, &rc, err, "SELECT @jobq_first")) == NULL)
		return rc;
	if ((row = db_res_next(res)) != NULL)
		*first = db_col_u64(row[0], 0);
	db_res_free(res);
	return DB_OK;
}

/* The answer to an enqueue: the first job's id, how many, and whether
 * an earlier request of the same submit made them. */
static MHD_RESULT
enqueued(struct req *r, uint64_t first, uint64_t count, int repeated)
{
	cJSON *doc = cJSON_CreateObject();

	ADD_NUM(doc, "first_id", first);
	ADD_NUM(doc, "count", count);
	cJSON_AddBoolToObject(doc, "repeated", repeated);
	return serve_json(r, 200, doc);
}

/* POST /api/enqueue {"type", "queue", "payload", "delay", "count",
 * "submit_id"}: type and queue from the INI whitelists only (422
 * otherwise).  A submit_id seen before from this user enqueues nothing
 * and gets the first request's answer with "repeated": true.  An answer
 * lost without a submit_id is serve_db_unsure's 504. */
MHD_RESULT
api_enqueue(struct req *r)
{
	cJSON *in = serve_body_json(r);
	struct enqueue_item *items;
	struct submit_answer a = { 0, 0 };
	struct enq_req e;
	const char *msg = NULL;
	uint64_t first = 0;
	unsigned status, i;
	char err[ERRSZ], *detail;
	int repeated = 0, rc, unsure = 0;
	MHD_RESULT ret;

	if (in == NULL)
		return serve_error(r, 400, "the body is not a JSON object");
	if ((status = enq_check(r, in, &e, &msg)) != 0) {
		cJSON_Delete(in);
		return serve_error(r, status, msg);
	}
	if (e.submit_id != NULL)
		serve_submit_prune(r);
	items = xcalloc((size_t)e.count, sizeof *items);
	for (i = 0; i < (unsigned)e.count; i++) {
		items[i].type = e.type;
		items[i].queue = e.queue;
		items[i].payload = e.payload;
		items[i].payload_len = strlen(e.payload);
		items[i].delay_ms = (int64_t)(e.delay_s * 1000);
	}
	/* type and queue are whitelisted names: nothing a person typed */
	detail = xasprintf("type=%s queue=%s", e.type, e.queue);
	rc = enqueue_audited(r, items, (size_t)e.count, detail, e.submit_id, &first, &a, &repeated, err);
	/* An answer lost with a submit id: the same submit again finds the
	 * first (repeated) when it took, and enqueues now when it did not. */
	if (e.submit_id != NULL && serve_reconnect_unsure(r, rc, &unsure))
		rc = enqueue_audited(r, items, (size_t)e.count, detail, e.submit_id, &first, &a, &repeated, err);
	if (rc != DB_OK)
		ret = unsure ? serve_db_unsure(r, "enqueue", err) : serve_write_error(r, "enqueue", err);
	else if (repeated)
		ret = enqueued(r, a.first_id, a.count, 1);
	else {
		wakeup_enqueued(r->srv->conf, items, (size_t)e.count);
		ret = enqueued(r, first, (uint64_t)e.count, 0);
	}
	free(detail);
	free(items);
	cJSON_Delete(in);
	return ret;
}
