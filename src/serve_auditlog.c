/* serve_auditlog.c -- the Audit page's endpoint, a page handler of
 * `jobq serve`: the whole audit trail (jobq_audit) for admins, filtered
 * by user, action and time and paged by keyset, over the same
 * audit_list() `jobq audit` calls.  serve_audit.c writes the trail;
 * this file only reads it. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "audit.h"
#include "isotime.h"
#include "serve_auditlog.h"
#include "utf8.h"

#define AUDIT_PAGE_DEFAULT 50

/* The user filter: NULL for none; "" (refused) when it is no UTF-8 or
 * longer than a user name can be.  Refused rather than sent on: bytes
 * that are no UTF-8 in a literal the server must convert are an error
 * there, not "no rows". */
static const char *
user_param(struct req *r)
{
	const char *v = serve_query(r, "user");
	size_t len;

	if (v == NULL || *v == '\0')
		return NULL;
	len = strlen(v);
	if (utf8_valid_prefix(v, len) != len || len > 4 * NAME_MAX_LEN)
		return "";
	return v;
}

/* Fills f from the query string; NULL, or the 400's sentence. */
static const char *
read_filter(struct req *r, struct audit_filter *f, char *since, char *until, size_t len)
{
	int64_t v;

	if ((f->user = user_param(r)) != NULL && *f->user == '\0')
		return "user must be a user name: UTF-8, at most 64 characters";
	f->action = serve_query(r, "action");
	if (f->action != NULL && *f->action == '\0')
		f->action = NULL;
	if (f->action != NULL && !audit_action_known(f->action))
		return "unknown action (the answer's \"actions\" lists the known ones; none for every "
		       "action)";
	if (serve_query_time(r, "since", since, len, &f->since) < 0)
		return "since must be an ISO 8601 time, like 2026-12-01T10:00:00Z";
	if (serve_query_time(r, "until", until, len, &f->until) < 0)
		return "until must be an ISO 8601 time, like 2026-12-01T10:00:00Z";
	if (serve_query_uint(r, "before", 1, INT64_MAX, 0, &v) < 0)
		return "before must be an audit row id (a whole number from 1)";
	f->before = (uint64_t)v;
	if (serve_query_uint(r, "limit", 1, AUDIT_LIST_MAX, AUDIT_PAGE_DEFAULT, &v) < 0)
		return "limit must be a whole number from 1 to 500";
	f->limit = (unsigned)v;
	return NULL;
}

static cJSON *
row_json(const struct audit_row *a)
{
	cJSON *o = cJSON_CreateObject();

	ADD_NUM(o, "id", a->id);
	cJSON_AddStringToObject(o, "at", a->at);
	cJSON_AddStringToObject(o, "user", a->user);
	cJSON_AddStringToObject(o, "address", a->address);
	cJSON_AddStringToObject(o, "action", a->action);
	if (a->job_id != 0)
		ADD_NUM(o, "job_id", a->job_id);
	else
		cJSON_AddNullToObject(o, "job_id");
	if (a->count != 0)
		ADD_NUM(o, "count", a->count);
	else
		cJSON_AddNullToObject(o, "count");
	cJSON_AddStringToObject(o, "detail", a->detail);
	return o;
}

/* GET /api/audit?user=&action=&since=&until=&before=&limit=: the audit
 * rows newest first (times in UTC), "next" the before= of the next
 * (older) page or null at the end, and the known action names for the
 * page's filter.  400 with a sentence for a filter that cannot be. */
MHD_RESULT
api_audit(struct req *r)
{
	struct audit_filter f = { 0 };
	struct audit_row *rows;
	char since[64], until[64], err[ERRSZ];
	const char *bad, *const *act;
	cJSON *doc, *a;
	size_t i, n;

	if ((bad = read_filter(r, &f, since, until, sizeof since)) != NULL)
		return serve_error(r, 400, bad);
	f.limit++; /* one more tells whether there is a next page */
	if (audit_list(r->db, &f, r->srv->tz, &rows, &n, err) != DB_OK)
		return serve_db_error(r, "list the audit trail", err);
	doc = cJSON_CreateObject();
	a = cJSON_AddArrayToObject(doc, "audit");
	for (i = 0; i < n && i < f.limit - 1; i++)
		cJSON_AddItemToArray(a, row_json(&rows[i]));
	if (n == f.limit)
		ADD_NUM(doc, "next", rows[f.limit - 2].id);
	else
		cJSON_AddNullToObject(doc, "next");
	a = cJSON_AddArrayToObject(doc, "actions");
	for (act = audit_actions(); *act != NULL; act++)
		cJSON_AddItemToArray(a, cJSON_CreateString(*act));
	audit_rows_free(rows, n);
	return serve_json(r, 200, doc);
}
