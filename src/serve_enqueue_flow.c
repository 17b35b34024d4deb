/* serve_enqueue_flow.c -- the jobs of POST /api/enqueue that need more
 * than their INSERT (serve_enqueue.c hands them here): a unique key
 * (flow.c), jobs to wait for (after.c), a group (groups.c), with
 * exactly the meaning `jobq enqueue` gives them.
 *
 * What holds as for every enqueue of the dashboard: one transaction
 * claims the submit id first (serve_submit.c), writes the jobs through
 * the same functions the CLI calls (their inside-a-transaction parts:
 * flow_unique_in_tx, after_enqueue_in_tx), an audit row per job, the
 * submit's record, and commits; a job is never there without its audit
 * row, and a resend of the submit id enqueues nothing and is answered
 * the same ids.  Unlike the plain
 * enqueue's single multi-statement string, this one goes statement by
 * statement: whether a key is taken or a job waited for has ended is
 * learned on the way.
 *
 * A unique key that is taken is no error, as for the CLI: the
 * transaction records the refusal in the submit's row (job_count 0, the
 * holder in first_id), so that a resend gets the same answer even once
 * the holder is done, and writes no audit row (nothing was enqueued). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "after.h"
#include "audit.h"
#include "batch.h"
#include "flow.h"
#include "serve_enqueue_flow.h"

/* "on_complete" or "on_success": a type with a [handler] section,
 * whose queue its callback goes to (as --on-complete is checked). */
static int
read_callback(const struct conf *c, cJSON *in, const char *k, const char **type, const char **queue, char *why)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(in, k);
	const struct handler *h;

	if (v == NULL || cJSON_IsNull(v))
		return 0;
	if (!cJSON_IsString(v) || (h = conf_handler(c, v->valuestring)) == NULL)
		return errf(why, "\"%s\": unknown callback type (no [handler TYPE] section)", k), -1;
	*type = v->valuestring;
	*queue = h->queue;
	return 0;
}

/* "group" with its callbacks: a name groups.c takes. */
static int
read_group(const struct conf *c, cJSON *in, struct enq_flow *f, char *why)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(in, "group");
	struct group_spec *g = &f->group;
	char err[ERRSZ];

	if (v == NULL || cJSON_IsNull(v)) {
		if ((cJSON_GetObjectItemCaseSensitive(in, "on_complete") != NULL &&
		        !cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(in, "on_complete"))) ||
		    (cJSON_GetObjectItemCaseSensitive(in, "on_success") != NULL &&
		        !cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(in, "on_success"))))
			return errf(why, "\"on_complete\" and \"on_success\" go with \"group\""), -1;
		return 0;
	}
	if (!cJSON_IsString(v))
		return errf(why, "\"group\": must be a string"), -1;
	if (groups_name_check(v->valuestring, err) < 0)
		return errf(why, "\"group\": %s", err), -1;
	g->name = v->valuestring;
	return read_callback(c, in, "on_complete", &g->on_complete, &g->complete_queue, why) < 0 ||
	        read_callback(c, in, "on_success", &g->on_success, &g->success_queue, why) < 0
	    ? -1
	    : 0;
}

/* "unique_key" and "unique_for", checked as --unique-key and
 * --unique-for are. */
static int
read_unique(cJSON *in, struct enq_flow *f, char *why)
{
	const cJSON *k = cJSON_GetObjectItemCaseSensitive(in, "unique_key");
	const cJSON *d = cJSON_GetObjectItemCaseSensitive(in, "unique_for");
	char err[ERRSZ];

	if (k != NULL && !cJSON_IsNull(k)) {
		if (!cJSON_IsString(k))
			return errf(why, "\"unique_key\": must be a string"), -1;
		if (flow_unique_key_check(k->valuestring, err) < 0)
			return errf(why, "\"unique_key\": %s", err), -1;
		f->unique_key = k->valuestring;
	}
	if (d == NULL || cJSON_IsNull(d))
		return 0;
	if (f->unique_key == NULL)
		return errf(why, "\"unique_for\" goes with \"unique_key\""), -1;
	return batch_duration_above0(d, "unique_for", &f->unique_for_ms, why);
}

/* Reads the fields of f beyond "after" and "after_policy" (which the
 * caller read with the job, into f) and refuses what `jobq enqueue`
 * refuses together: a unique key held by more than one job, or with
 * "after" or "group" (--unique-key is for a single job without
 * --after; --group for --batch).  0, or -1 with why naming the fields. */
int
serve_enqueue_flow_read(const struct conf *c, cJSON *in, double count, struct enq_flow *f, char *why)
{
	if (read_unique(in, f, why) < 0 || read_group(c, in, f, why) < 0)
		return -1;
	if (f->unique_key == NULL)
		return 0;
	if (count != 1)
		return errf(why, "\"unique_key\" and \"count\": a unique key is held by one job; count must be 1"), -1;
	if (f->nafter > 0)
		return errf(why, "\"unique_key\" and \"after\" exclude each other (as --unique-key and --after do)"), -1;
	if (f->group.name != NULL)
		return errf(why, "\"unique_key\" and \"group\" exclude each other (as --unique-key and --group do)"), -1;
	return 0;
}

/* Whether the request needs this file: else the plain enqueue. */
int
serve_enqueue_flow_used(const struct enq_flow *f)
{
	return f->unique_key != NULL || f->nafter > 0 || f->group.name != NULL;
}

/* Opens the transaction and claims the submit id (the statement right
 * after START TRANSACTION, as serve_submit_repeated wants it).  DB_OK,
 * with o->repeated set when the id was used before. */
static int
open_tx(struct req *r, const char *submit_id, struct enq_flow_out *o, char *err)
{
	struct buf sql;
	int rc;

	buf_init(&sql);
	buf_adds(&sql, "START TRANSACTION");
	if (submit_id != NULL) {
		buf_adds(&sql, ";");
		serve_submit_claim_sql(r, &sql, submit_id);
		sql.data[--sql.len] = '\0';
	}
	rc = db_exec_buf(r->db, &sql, err);
	buf_free(&sql);
	if (rc != DB_OK && submit_id != NULL && (o->repeated = serve_submit_repeated(r, rc, submit_id, &o->a, err)) != 0)
		rc = o->repeated < 0 ? DB_EFAIL : DB_OK;
	return rc;
}

/* The jobs of w waiting for f->after, in f's group: after_enqueue's
 * transaction without its BEGIN and COMMIT; ids[i] gets job i's id. */
static int
insert_after(struct req *r, const struct enq_write *w, uint64_t *ids, struct enq_flow_out *o, char *err)
{
	struct after_job *a = xcalloc(w->n, sizeof *a);
	size_t i;
	int rc;

	for (i = 0; i < w->n; i++) {
		a[i].e = w->items[i];
		a[i].ids = w->f->after;
		a[i].nids = w->f->nafter;
		a[i].after_any = w->f->after_any;
	}
	rc = after_enqueue_in_tx(r->db, a, w->n, w->f->group.name != NULL ? &w->f->group : NULL, ids, err);
	if (rc == DB_OK) {
		o->waiting_on = a[0].e.waiting_on;
		snprintf(o->cancelled, sizeof o->cancelled, "%s", a[0].cancelled);
	}
	free(a);
	if (rc == AFTER_EUNKNOWN) {
		char why[ERRSZ];

		snprintf(why, sizeof why, "%s", err);
		errf(err, "\"after\": %s; nothing was enqueued", why);
		return ENQ_FLOW_EUNKNOWN;
	}
	if (rc == GROUPS_ECLOSED || rc == GROUPS_EDIFFER) {
		char why[ERRSZ];

		snprintf(why, sizeof why, "%s", err);
		errf(err, "\"group\": %s; nothing was enqueued", why);
		return ENQ_FLOW_EGROUP;
	}
	return rc;
}

/* Ends the transaction: an audit row for each job (none when the key
 * was refused), the submit's record (a refusal as 0 jobs from the
 * holder), COMMIT. */
static int
close_tx(struct req *r, const struct enq_write *w, const uint64_t *ids, const struct enq_flow_out *o, char *err)
{
	struct audit_entry e = { r->user->name, r->addr, "enqueue", w->n > 1 ? w->n : 0, w->detail };
	struct buf sql;
	char id[24];
	size_t i;
	int rc;

	buf_init(&sql);
	buf_printf(&sql, "SET @jobq_first = %llu, @jobq_ids = ", (unsigned long long)o->first);
	/* every id, for the submit's record (serve_submit_done_sql) */
	for (i = 0; !o->refused && i < w->n; i++)
		buf_printf(&sql, "%s%llu", i == 0 ? "'" : ",", (unsigned long long)(ids != NULL ? ids[i] : o->first));
	buf_adds(&sql, o->refused ? "NULL" : "'");
	for (i = 0; !o->refused && i < w->n; i++) {
		snprintf(id, sizeof id, "%llu", (unsigned long long)(ids != NULL ? ids[i] : o->first));
		buf_adds(&sql, ";");
		audit_sql(r->db, &sql, &e, id);
	}
	if (w->submit_id != NULL) {
		buf_adds(&sql, ";");
		serve_submit_done_sql(r, &sql, w->submit_id, o->refused ? 0 : w->n);
		sql.data[--sql.len] = '\0';
	}
	rc = db_exec_buf(r->db, &sql, err);
	buf_free(&sql);
	/* COMMIT on its own: a lost answer to it is one the caller may be
	 * unsure of (db_unsure), and then resends with the submit id. */
	return rc == DB_OK ? db_commit(r->db, err) : rc;
}

/* One try of serve_enqueue_flow's transaction. */
static int
flow_try(struct req *r, const struct enq_write *w, struct enq_flow_out *o, char *err)
{
	const struct enq_flow *f = w->f;
	struct flow_unique u;
	uint64_t *ids = f->unique_key == NULL ? xcalloc(w->n + 1, sizeof *ids) : NULL;
	int rc;

	free(o->ids); /* of a try rerun whole */
	serve_submit_answer_clear(&o->a);
	memset(o, 0, sizeof *o);
	memset(&u, 0, sizeof u);
	rc = open_tx(r, w->submit_id, o, err);
	if (rc == DB_OK && !o->repeated)
		rc = ids == NULL ? flow_unique_in_tx(r->db, &w->items[0], f->unique_for_ms, &u, err)
		                 : insert_after(r, w, ids, o, err);
	if (rc == DB_OK && !o->repeated && (!u.refused || flow_unique_stands(&u))) {
		o->refused = u.refused;
		o->in_window = u.in_window;
		o->first = ids == NULL ? u.id : ids[0];
		rc = close_tx(r, w, ids, o, err);
		if (rc == DB_OK && !o->refused) {
			o->ids = ids != NULL ? ids : xcalloc(1, sizeof *o->ids);
			o->ids[0] = o->first;
			ids = NULL;
		}
	}
	if (rc != DB_OK || o->repeated || (u.refused && !flow_unique_stands(&u)))
		db_rollback(r->db);
	free(ids);
	if (f->unique_key != NULL && !o->repeated)
		rc = flow_unique_settle(r->db, &w->items[0], f->unique_for_ms, &u, rc, err);
	return rc;
}

/* Enqueues w in one transaction, rerun whole on a deadlock (and when a
 * unique key's holder ended as it was looked up).  DB_OK with o filled
 * (o->refused: the key is taken by o->first, nothing written;
 * o->repeated: the submit id was used, o->a its answer, nothing
 * written); a DB_* code; or ENQ_FLOW_EUNKNOWN, ENQ_FLOW_EGROUP with err
 * naming the field, nothing written. */
int
serve_enqueue_flow(struct req *r, const struct enq_write *w, struct enq_flow_out *o, char *err)
{
	int rc, attempt = 0;

	do
		rc = flow_try(r, w, o, err);
	while (db_retry_after(rc, ++attempt));
	return rc;
}
