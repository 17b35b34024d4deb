/* serve_search.c -- GET /api/search, a page handler of `jobq serve`:
 * jobs in any state (queued, dead, done) by queue, type, state, unique
 * key, payload text and enqueue time, a page at a time (search.c). */
#include "config.h"

#include <string.h>

#include "groups.h"
#include "search.h"
#include "serve_groups.h"
#include "serve_search.h"
#include "utf8.h"

/* A text filter: NULL for none; "" (refused) when it is no UTF-8 or
 * longer than max: bytes that are no UTF-8 in a literal the server must
 * convert are an error there, not "no rows". */
static const char *
text_param(struct req *r, const char *key, size_t max)
{
	const char *v = serve_query(r, key);
	size_t len;

	if (v == NULL || *v == '\0')
		return NULL;
	len = strlen(v);
	return utf8_valid_prefix(v, len) != len || len > max ? "" : v;
}

/* Fills f from the query string; NULL, or the 400's sentence. */
static const char *
read_filter(struct req *r, struct search_filter *f, char *since, char *until, size_t len)
{
	int64_t after, limit;

	f->state = serve_query(r, "state");
	if (f->state != NULL && *f->state == '\0')
		f->state = NULL;
	if (f->state != NULL && !search_state_valid(f->state))
		return "state: expected ready, delayed, reserved, stale, queued, done or dead";
	f->queue = text_param(r, "queue", NAME_MAX_LEN);
	f->type = text_param(r, "type", NAME_MAX_LEN);
	f->unique_key = text_param(r, "unique_key", 255);
	f->text = text_param(r, "q", 255);
	if ((f->queue && !*f->queue) || (f->type && !*f->type) || (f->unique_key && !*f->unique_key) ||
	    (f->text && !*f->text))
		return "queue, type, unique_key and q must be UTF-8 (queue and type at most 64 bytes, the "
		       "others 255)";
	if (serve_query_time(r, "since", since, len, &f->since) < 0 ||
	    serve_query_time(r, "until", until, len, &f->until) < 0)
		return "since and until must be ISO 8601 times, like 2026-12-01T10:00:00Z";
	if (serve_query_uint(r, "after", 0, INT64_MAX, 0, &after) < 0 ||
	    serve_query_uint(r, "limit", 1, 500, 50, &limit) < 0)
		return "after and limit must be whole numbers (limit 1-500)";
	f->after_id = (uint64_t)after;
	f->limit = (unsigned)limit;
	return NULL;
}

/* The most groups a search lists beside its jobs. */
#define SEARCH_GROUPS 10

/* Adds "groups" to doc: the groups whose name starts with prefix (by
 * name, at most SEARCH_GROUPS), so that typing a group's name finds it
 * as well as the jobs whose payload holds it. */
static int
add_groups(struct req *r, cJSON *doc, const char *prefix, char *err)
{
	struct group_row *g;
	size_t n;
	int rc = groups_list(r->db, prefix, 0, SEARCH_GROUPS, &g, &n, err);

	if (rc != DB_OK)
		return rc;
	cJSON_AddItemToObject(doc, "groups", serve_groups_rows(g, n));
	groups_list_free(g, n);
	return DB_OK;
}

/* GET /api/search?q=group:NAME: the groups whose name starts with NAME,
 * and no jobs (the prefix says it is a group that is looked for). */
static MHD_RESULT
search_groups(struct req *r, const char *prefix)
{
	char err[ERRSZ];
	cJSON *doc = cJSON_CreateObject();

	cJSON_AddArrayToObject(doc, "jobs");
	cJSON_AddNullToObject(doc, "next_after");
	if (*prefix == '\0' || add_groups(r, doc, prefix, err) != DB_OK) {
		cJSON_Delete(doc);
		return *prefix == '\0' ? serve_error(r, 400, "group: expected a name (or its start) after it")
		                       : serve_db_error(r, "search groups", err);
	}
	return serve_json(r, 200, doc);
}

/* GET /api/search?state=&queue=&type=&unique_key=&q=&since=&until=&after=&limit=:
 * one page of jobs in any state, lowest id first; next_after is the
 * keyset of the next page (null on the last).  A payload text search
 * reads SEARCH_TEXT_WINDOW rows of each place at most: when its window ends before the
 * page is full, searched_to says how far it read, and next_after goes
 * on from there. */
MHD_RESULT
api_search(struct req *r)
{
	struct search_filter f = { 0 };
	struct search_page pg;
	char since[64], until[64], err[ERRSZ];
	const char *bad = read_filter(r, &f, since, until, sizeof since);
	cJSON *doc, *a;
	size_t i;

	if (bad != NULL)
		return serve_error(r, 400, bad);
	if (f.text != NULL && strncmp(f.text, "group:", 6) == 0)
		return search_groups(r, f.text + 6);
	if (search_jobs(r->db, &f, &pg, err) != DB_OK)
		return serve_db_error(r, "search jobs", err);
	doc = cJSON_CreateObject();
	if (f.text != NULL && add_groups(r, doc, f.text, err) != DB_OK) {
		cJSON_Delete(doc);
		search_page_free(&pg);
		return serve_db_error(r, "search groups", err);
	}
	a = cJSON_AddArrayToObject(doc, "jobs");
	for (i = 0; i < pg.n; i++) {
		cJSON *o = cJSON_CreateObject();

		ADD_NUM(o, "id", pg.rows[i].id);
		cJSON_AddStringToObject(o, "state", pg.rows[i].state);
		cJSON_AddStringToObject(o, "queue", pg.rows[i].queue);
		cJSON_AddStringToObject(o, "type", pg.rows[i].type);
		ADD_NUM(o, "attempts", pg.rows[i].attempts);
		serve_add_str_or_null(o, "created_at", pg.rows[i].created_at);
		serve_add_str_or_null(o, "ended_at", pg.rows[i].ended_at);
		cJSON_AddItemToArray(a, o);
	}
	if (pg.next_after != 0)
		ADD_NUM(doc, "next_after", pg.next_after);
	else
		cJSON_AddNullToObject(doc, "next_after");
	if (pg.searched_to != 0)
		ADD_NUM(doc, "searched_to", pg.searched_to);
	search_page_free(&pg);
	return serve_json(r, 200, doc);
}
