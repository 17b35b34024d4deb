/* serve_groups.c -- GET /api/groups (the groups, newest first, or those
 * whose name starts with a prefix) and GET /api/groups/ID|NAME (one
 * group as `jobq group show --json` prints it): thin over groups.c and
 * groups_view.c.  The group page lists the group's queued jobs through
 * GET /api/jobs?group=ID. */
#include "config.h"

#include <string.h>

#include "groups.h"
#include "serve_groups.h"
#include "utf8.h"

/* The most waiting jobs a group's answer lists, as `jobq group show`. */
#define WAITING_MAX 100

/* The groups of a list as a JSON array: id, name, state (open or
 * ended), the count of jobs and how many ended each way, and the times
 * (UTC, as the rest of the API gives them). */
cJSON *
serve_groups_rows(const struct group_row *g, size_t n)
{
	cJSON *a = cJSON_CreateArray();
	size_t i;

	for (i = 0; i < n; i++) {
		cJSON *o = cJSON_CreateObject();

		ADD_NUM(o, "id", g[i].id);
		cJSON_AddStringToObject(o, "name", g[i].name);
		cJSON_AddStringToObject(o, "state", g[i].ended_at[0] ? "ended" : "open");
		ADD_NUM(o, "total", g[i].total);
		ADD_NUM(o, "done", g[i].done);
		ADD_NUM(o, "dead", g[i].dead);
		ADD_NUM(o, "cancelled", g[i].cancelled);
		ADD_NUM(o, "expired", g[i].expired);
		cJSON_AddStringToObject(o, "created_at", g[i].created_at);
		serve_add_str_or_null(o, "ended_at", g[i].ended_at[0] ? g[i].ended_at : NULL);
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

/* GET /api/groups?q=PREFIX&before=ID&limit=N: with q, the groups whose
 * name starts with it, by name (one page: type more to narrow it);
 * without, the newest first, ids below before; next_before is the
 * cursor of the next page (null: the last). */
MHD_RESULT
api_groups(struct req *r)
{
	const char *q = serve_query(r, "q");
	struct group_row *rows;
	int64_t before, limit;
	char err[ERRSZ];
	size_t n;
	cJSON *doc;

	if (serve_query_uint(r, "before", 0, INT64_MAX, 0, &before) < 0 ||
	    serve_query_uint(r, "limit", 1, GROUPS_LIST_MAX, 50, &limit) < 0)
		return serve_error(r, 400, "before and limit must be whole numbers (limit 1-200)");
	if (q != NULL && (utf8_valid_prefix(q, strlen(q)) != strlen(q) || strlen(q) > GROUPS_NAME_MAX * 4))
		return serve_error(r, 400, "q: expected at most 128 characters of UTF-8");
	if (groups_list(r->db, q, (uint64_t)before, (unsigned)limit, &rows, &n, err) != DB_OK)
		return serve_db_error(r, "list groups", err);
	doc = cJSON_CreateObject();
	cJSON_AddItemToObject(doc, "groups", serve_groups_rows(rows, n));
	if ((q == NULL || *q == '\0') && n == (size_t)limit)
		ADD_NUM(doc, "next_before", rows[n - 1].id);
	else
		cJSON_AddNullToObject(doc, "next_before");
	groups_list_free(rows, n);
	return serve_json(r, 200, doc);
}

/* GET /api/groups/ID or /api/groups/NAME (all digits: an id; a name is
 * never all digits): the group as `jobq group show --json` prints it,
 * its waiting jobs (up to 100) among it; 404 when there is none. */
MHD_RESULT
api_group(struct req *r)
{
	const char *what = r->rest != NULL ? r->rest : "";
	struct group_wait *w = NULL;
	struct group_view v;
	char err[ERRSZ];
	size_t nw = 0;
	int found = 0, rc = DB_OK;
	cJSON *doc;

	if (*what != '\0' && utf8_valid_prefix(what, strlen(what)) == strlen(what) &&
	    strlen(what) <= GROUPS_NAME_MAX * 4)
		rc = groups_show(r->db, what, WAITING_MAX, &v, &found, &w, &nw, err);
	if (rc != DB_OK) {
		groups_waiting_free(w, nw);
		return serve_db_error(r, "show a group", err);
	}
	if (!found)
		return serve_error(r, 404, "no such group");
	doc = groups_json(&v, w, nw);
	groups_waiting_free(w, nw);
	return serve_json(r, 200, doc);
}
