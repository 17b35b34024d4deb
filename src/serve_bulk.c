/* serve_bulk.c -- bulk actions on a filter (bulk.c): retry or forget
 * every dead job of a queue and type, release every stale one, delete
 * every waiting one, cancel every one in the queue.  The page first counts (POST /api/bulk/count: the
 * number and the highest id, which fix the set), the person confirms
 * that number, and the page then sends chunk after chunk (POST
 * /api/bulk), each a short request of one transaction per job, so a
 * large action never holds a lock or a server thread for long, shows
 * its progress, and can be left half-way with every job done or
 * untouched.  Every job acted on gets its own audit row.  The session
 * and its role are looked up again before each job: a person demoted,
 * logged out by another admin, removed or given a new password while a
 * chunk runs acts on no job after that, the answer says how many were
 * done before, and an audit row in the server's name records the stop
 * (serve_audit_stopped, as the dead letter's retry of every match). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bulk.h"
#include "queue.h"
#include "serve_audit.h"
#include "serve_auth.h"
#include "serve_bulk.h"
#include "wakeup.h"

/* Jobs one request acts on at most: about 0.3 s at one commit each. */
#define BULK_CHUNK 100

/* The queue and type filters of a bulk action, from the body: each
 * absent, empty (any) or one of the configured names (anything else is
 * refused: a filter is never free text, so it cannot pad or forge the
 * audit detail).  0, or the status with *msg set. */
unsigned
serve_bulk_names(struct req *r, cJSON *in, const char **queue, const char **type, const char **msg)
{
	const struct conf *c = r->srv->conf;
	cJSON *q = cJSON_GetObjectItem(in, "queue"), *t = cJSON_GetObjectItem(in, "type");

	if ((q != NULL && !cJSON_IsString(q) && !cJSON_IsNull(q)) ||
	    (t != NULL && !cJSON_IsString(t) && !cJSON_IsNull(t)))
		return *msg = "queue and type: names, or empty for any", 400;
	*queue = cJSON_GetStringValue(q);
	*type = cJSON_GetStringValue(t);
	if (*queue != NULL && **queue == '\0')
		*queue = NULL;
	if (*type != NULL && **type == '\0')
		*type = NULL;
	if (*queue != NULL && !conf_has_queue(c, *queue))
		return *msg = "unknown queue (no [queue NAME] section)", 422;
	if (*type != NULL && conf_handler(c, *type) == NULL)
		return *msg = "unknown job type (no [handler TYPE] section)", 422;
	return 0;
}

/* Whether the action takes that state filter: delete takes ready or
 * delayed, cancel any state a job in the queue can be in. */
static int
state_fits(const char *action, const char *state)
{
	int waiting = strcmp(state, "ready") == 0 || strcmp(state, "delayed") == 0;

	if (strcmp(action, "delete") == 0)
		return waiting;
	return strcmp(action, "cancel") == 0 && (waiting || strcmp(state, "waiting") == 0 ||
	                                            strcmp(state, "reserved") == 0 || strcmp(state, "stale") == 0);
}

/* The action and its filter from the body; 0, or the status and *msg. */
static unsigned
read_bulk(struct req *r, cJSON *in, const struct bulk_kind **k, struct bulk_filter *f, const char **msg)
{
	cJSON *s = cJSON_GetObjectItem(in, "state");
	unsigned status;

	*k = bulk_kind_find(cJSON_GetStringValue(cJSON_GetObjectItem(in, "action")));
	if (*k == NULL)
		return *msg = "action: retry, forget, release, delete or cancel", 400;
	if ((status = serve_bulk_names(r, in, &f->queue, &f->type, msg)) != 0)
		return status;
	f->state = cJSON_GetStringValue(s);
	if (f->state != NULL && *f->state == '\0')
		f->state = NULL;
	if (s != NULL && !cJSON_IsNull(s) && !cJSON_IsString(s))
		return *msg = "state: ready or delayed, or empty", 400;
	if (f->state != NULL && !state_fits(bulk_kind_name(*k), f->state))
		return *msg = "state: ready or delayed for delete; ready, delayed, waiting, reserved or stale for cancel",
		       400;
	f->by = r->user->name;
	f->handlers = r->srv->conf; /* retry leaves a type no [handler] takes, as jobq failed retry --all */
	return 0;
}

/* A whole number in the body, 0 up; -1 when absent or not one. */
static int
body_u64(cJSON *in, const char *key, uint64_t *v)
{
	cJSON *n = cJSON_GetObjectItem(in, key);

	if (!cJSON_IsNumber(n) || n->valuedouble < 0 || n->valuedouble > 9007199254740992.0 ||
	    n->valuedouble != (double)(uint64_t)n->valuedouble)
		return -1;
	*v = (uint64_t)n->valuedouble;
	return 0;
}

/* The count's answer; for a retry also how many matching dead jobs it
 * leaves, being of a type no [handler] takes (unknown_type). */
static MHD_RESULT
count_answer(struct req *r, unsigned status, const char *error, const struct bulk_kind *k,
    const struct bulk_filter *f, uint64_t n, uint64_t upto)
{
	cJSON *doc = cJSON_CreateObject();
	struct bulk_filter left = *f;
	uint64_t unknown = 0;
	char err[ERRSZ];

	if (error != NULL)
		cJSON_AddStringToObject(doc, "error", error);
	cJSON_AddStringToObject(doc, "action", bulk_kind_name(k));
	ADD_NUM(doc, "count", n);
	ADD_NUM(doc, "upto", upto);
	left.unknown_types = 1;
	if (strcmp(bulk_kind_name(k), "retry") == 0 && bulk_count(r->db, k, &left, &unknown, NULL, err) == DB_OK)
		ADD_NUM(doc, "unknown_type", unknown);
	return serve_json(r, status, doc);
}

/* POST /api/bulk/count {"action", "queue", "type", "state"}: how many
 * jobs the action would act on now, and the highest of their ids. */
MHD_RESULT
api_bulk_count(struct req *r)
{
	cJSON *in = serve_body_json(r);
	const struct bulk_kind *k;
	struct bulk_filter f = { 0 };
	const char *msg = NULL;
	uint64_t n, upto;
	unsigned status = read_bulk(r, in, &k, &f, &msg);
	char err[ERRSZ];
	int rc = status != 0 ? DB_OK : bulk_count(r->db, k, &f, &n, &upto, err);
	MHD_RESULT ret;

	if (status != 0 || rc != DB_OK)
		ret = status != 0 ? serve_error(r, status, msg) : serve_db_error(r, "count jobs", err);
	else
		ret = count_answer(r, 200, NULL, k, &f, n, upto);
	cJSON_Delete(in); /* last: f's names point into it */
	return ret;
}

/* What one chunk did.  Each job's audit row is written in the job's
 * own transaction (bulk_filter.audit): a job acted on has its row, a
 * job not acted on has none, however the chunk ends. */
struct chunk {
	const char *action;
	uint64_t done, skipped;
	uint64_t refused; /* of skipped, those the server refused (not gone) */
	uint64_t down;    /* a cancel's: jobs that ended with one they waited for */
};

static void
tally(void *arg, uint64_t id, int rc, const char *err)
{
	struct chunk *c = arg;

	if (rc == DB_OK) {
		c->done++;
	} else {
		c->skipped++;
		if (rc != QUEUE_NOT_FOUND) {
			c->refused++;
			log_warn("bulk %s of job %llu: %s", c->action, (unsigned long long)id, err);
		}
	}
}

/* Of a stopped chunk: how many jobs of the set confirmed (ids up to
 * upto) after the last one tried are in it still, untouched; those that
 * left it meanwhile (another admin, a worker) are not, so the page does
 * not call them left as they were.  -1 when the database cannot say. */
static int64_t
count_left(struct req *r, const struct bulk_kind *k, const struct bulk_filter *f, uint64_t last, uint64_t upto)
{
	uint64_t all, done;
	char err[ERRSZ];

	if (bulk_count_upto(r->db, k, f, upto, &all, err) != DB_OK ||
	    bulk_count_upto(r->db, k, f, last, &done, err) != DB_OK)
		return -1;
	return all > done ? (int64_t)(all - done) : 0;
}

/* A chunk the server stopped (stop: why) is recorded in the server's
 * name, as a stopped retry of every dead job is (serve_audit_stopped):
 * its admin had lost the right by then, and no row of hers says the run
 * ended there.  The row says whose run it was, what this chunk did
 * (each earlier chunk's jobs have their rows), what it left and why.
 * A first chunk stopped before its first job changed nothing and has
 * no row. */
static void
stopped(struct req *r, const struct chunk *c, const char *detail, uint64_t after, int64_t left, const char *stop)
{
	struct serve_stop s = { c->done, c->refused, NULL, left };

	if (c->done > 0 || after > 0)
		serve_audit_stopped(r, c->action, &s, stop, detail);
}

/* The next chunk of a confirmed bulk action; gone, the jobs confirmed
 * that left the set before its first chunk, count as skipped. */
static MHD_RESULT
step(struct req *r, const struct bulk_kind *k, const struct bulk_filter *f, uint64_t after, uint64_t upto,
    uint64_t gone)
{
	struct chunk c = { bulk_kind_name(k), 0, gone, 0, 0 };
	struct serve_still st;
	struct bulk_filter fa = *f;
	struct audit_entry a;
	uint64_t last;
	char err[ERRSZ], detail[200];
	int more, rc;
	cJSON *doc;

	snprintf(detail, sizeof detail, "bulk: queue=%s type=%s%s%s", f->queue ? f->queue : "*",
	    f->type ? f->type : "*", f->state ? " state=" : "", f->state ? f->state : "");
	a = serve_audit_entry(r, c.action, 0, detail);
	fa.audit = &a;
	fa.still = serve_still_admin(&st, r); /* before each job */
	fa.down = &c.down;
	rc = bulk_step(r->db, k, &fa, after, upto, BULK_CHUNK, tally, &c, &last, &more, err);
	if (rc != DB_OK && rc != AUDIT_STOPPED)
		return serve_write_error(r, "bulk action", err);
	if (c.done > 0 && (strcmp(c.action, "retry") == 0 || strcmp(c.action, "release") == 0))
		wakeup_send(r->srv->conf, f->queue); /* jobs are due now */
	doc = cJSON_CreateObject();
	cJSON_AddStringToObject(doc, "action", c.action);
	ADD_NUM(doc, "done", c.done);
	ADD_NUM(doc, "skipped", c.skipped);
	ADD_NUM(doc, "down", c.down);
	if (rc == AUDIT_STOPPED) {
		int64_t left = count_left(r, k, f, last, upto);

		stopped(r, &c, detail, after, left, err);
		if (left >= 0)
			ADD_NUM(doc, "left", (uint64_t)left);
	}
	if (more)
		ADD_NUM(doc, "next_after", last);
	else
		cJSON_AddNullToObject(doc, "next_after");
	return serve_still_answer(r, &st, rc, err, doc);
}

/* Whether a first chunk may go ahead on fewer jobs than were confirmed:
 * only a cancel of every state, the one action meant for a queue being
 * worked, whose count drops between any two looks as jobs end (the
 * person could never confirm it).  Into that set a job comes back under
 * an old id only when a person brings it back (a dead job retried, a
 * dependent re-opened), and it is in the queue the person cancels.  Any
 * other set takes in jobs that change state (a failed attempt's backoff
 * makes a job delayed, time makes one ready): there fewer may hide a
 * newcomer, and only the exact count goes ahead. */
static int
fewer_ok(const struct bulk_kind *k, const struct bulk_filter *f)
{
	return strcmp(bulk_kind_name(k), "cancel") == 0 && f->state == NULL;
}

/* POST /api/bulk {"action", "queue", "type", "state", "count", "upto",
 * "after"}: acts on the next chunk of the set counted (ids up to upto)
 * after id after.  The first chunk (after 0) goes ahead only when the
 * set still holds count jobs (or, for a cancel of every state, no
 * more: fewer_ok; those gone count as skipped): 409 with the new count
 * and upto otherwise, so what is done is what the person confirmed.
 * Answers the jobs done, those skipped (gone meanwhile, or refused: a
 * live lease, an id queued again), and next_after (null when the set is
 * through).  A chunk whose session ended or whose user lost the admin
 * role as it ran stops there: 401 or 403, with "error", the jobs it
 * did before and "left", those of the set after it still in it; the
 * stop is audited in the server's name (stopped). */
MHD_RESULT
api_bulk(struct req *r)
{
	cJSON *in = serve_body_json(r);
	const struct bulk_kind *k;
	struct bulk_filter f = { 0 };
	const char *msg = NULL;
	uint64_t count = 0, upto = 0, after = 0, now, top;
	unsigned status = read_bulk(r, in, &k, &f, &msg);
	char err[ERRSZ];
	MHD_RESULT ret;

	if (status == 0 && (body_u64(in, "count", &count) < 0 || body_u64(in, "upto", &upto) < 0 ||
	                       (cJSON_GetObjectItem(in, "after") != NULL && body_u64(in, "after", &after) < 0)))
		status = 400, msg = "count, upto and after: whole numbers, from /api/bulk/count";
	if (status != 0) {
		ret = serve_error(r, status, msg);
	} else if (after > 0) {
		ret = step(r, k, &f, after, upto, 0);
	} else if (bulk_count_upto(r->db, k, &f, upto, &now, err) != DB_OK) {
		ret = serve_db_error(r, "count jobs", err);
	} else if (now > count || (now < count && !fewer_ok(k, &f))) {
		if (bulk_count(r->db, k, &f, &now, &top, err) != DB_OK)
			ret = serve_db_error(r, "count jobs", err);
		else
			ret = count_answer(r, 409, "the number of jobs changed; confirm again", k, &f, now, top);
	} else {
		ret = step(r, k, &f, 0, upto, count - now);
	}
	cJSON_Delete(in);
	return ret;
}
