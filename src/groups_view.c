/* groups_view.c -- groups of jobs as people read them (groups.h): the
 * list of groups the dashboard pages through and searches by name, and
 * one group as JSON, the same object for `jobq group show --json` and
 * the dashboard's GET /api/groups/ID, so a script and the page read one
 * shape. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "groups.h"
#include "queue_states.h"
#include "timefmt.h"

/* prefix as a LIKE pattern that matches the names starting with it: its
 * own % and _ (and the escape, \) stand for themselves.  Free it. */
static char *
prefix_pattern(const char *prefix)
{
	struct buf b;

	buf_init(&b);
	for (; *prefix != '\0'; prefix++) {
		if (*prefix == '%' || *prefix == '_' || *prefix == '\\')
			buf_addc(&b, '\\');
		buf_addc(&b, *prefix);
	}
	buf_addc(&b, '%');
	return buf_steal(&b);
}

/* Fills *rows with up to limit (at most GROUPS_LIST_MAX) groups: with a
 * prefix (non-empty), those whose name starts with it, by name (a range
 * of the name's unique index: as cheap with a million groups as with
 * ten; names compare byte for byte, so case counts); without one, the
 * newest first, ids below before (0: from the newest), a range of the
 * primary key.  Free with groups_list_free. */
int
groups_list(struct db *db, const char *prefix, uint64_t before, unsigned limit, struct group_row **rows,
    size_t *n, char *err)
{
	struct db_res *r;
	char **row, *pat = NULL;
	struct buf where;
	int rc;

	*rows = NULL;
	*n = 0;
	if (limit > GROUPS_LIST_MAX)
		limit = GROUPS_LIST_MAX;
	buf_init(&where);
	if (prefix != NULL && *prefix != '\0') {
		pat = prefix_pattern(prefix);
		db_sql(db, &where, "name LIKE %q ORDER BY name", pat);
	} else if (before != 0)
		db_sql(db, &where, "id < %U ORDER BY id DESC", before);
	else
		buf_adds(&where, "TRUE ORDER BY id DESC");
	r = db_query(db, &rc, err,
	    "SELECT id, name, total, done, dead, cancelled, expired, LEFT(created_at, 19), LEFT(ended_at, 19)"
	    " FROM jobq_groups WHERE %s LIMIT %u",
	    where.data, limit);
	buf_free(&where);
	free(pat);
	if (r == NULL)
		return rc;
	*rows = xcalloc(db_res_rows(r) + 1, sizeof **rows);
	while ((row = db_res_next(r)) != NULL) {
		struct group_row *g = &(*rows)[(*n)++];
		uint64_t *count[] = { &g->total, &g->done, &g->dead, &g->cancelled, &g->expired };
		size_t i;

		g->id = db_col_u64(row[0], 0);
		g->name = xstrdup(row[1] != NULL ? row[1] : "");
		for (i = 0; i < ARRAY_LEN(count); i++)
			*count[i] = db_col_u64(row[2 + i], 0);
		snprintf(g->created_at, sizeof g->created_at, "%s", row[7] != NULL ? row[7] : "");
		snprintf(g->ended_at, sizeof g->ended_at, "%s", row[8] != NULL ? row[8] : "");
	}
	db_res_free(r);
	return DB_OK;
}

void
groups_list_free(struct group_row *rows, size_t n)
{
	while (n-- > 0)
		free(rows[n].name);
	free(rows);
}

/* Adds time t (UTC, "" for none: null) as ISO 8601 with its offset, as
 * `show --json` gives times (timefmt_json). */
static void
group_time(cJSON *o, const char *k, const char *t)
{
	char *iso;

	if (t[0] == '\0') {
		cJSON_AddNullToObject(o, k);
		return;
	}
	iso = timefmt_json(t);
	cJSON_AddStringToObject(o, k, iso);
	free(iso);
}

/* A callback as JSON: null when the group has none; its job, state and
 * whether that job was forgotten from the dead letter (its state then
 * "dead") null until it was enqueued. */
static cJSON *
group_callback(const char *type, uint64_t job, const char *state, int forgotten)
{
	cJSON *o;

	if (type[0] == '\0')
		return cJSON_CreateNull();
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "type", type);
	if (job != 0) {
		cJSON_AddNumberToObject(o, "job", (double)job);
		cJSON_AddStringToObject(o, "state", state);
		cJSON_AddBoolToObject(o, "forgotten", forgotten);
	} else {
		cJSON_AddNullToObject(o, "job");
		cJSON_AddNullToObject(o, "state");
		cJSON_AddNullToObject(o, "forgotten");
	}
	return o;
}

/* Group v with its waiting jobs w as one object: id, name, state,
 * times (ISO 8601, UTC), how many jobs it holds and how they ended, its
 * queued jobs by state, its callbacks and what each waiting job waits
 * for.  The caller owns (and frees) the object. */
cJSON *
groups_json(const struct group_view *v, const struct group_wait *w, size_t nw)
{
	static const char *const states[] = QUEUED_STATES;
	static const char *const end_names[] = { "total", "done", "dead", "cancelled", "expired" };
	const uint64_t ends[] = { v->total, v->done, v->dead, v->cancelled, v->expired };
	cJSON *o = cJSON_CreateObject(), *q = cJSON_CreateObject(), *a = cJSON_CreateArray();
	size_t i;

	cJSON_AddNumberToObject(o, "id", (double)v->id);
	cJSON_AddStringToObject(o, "name", v->name);
	cJSON_AddStringToObject(o, "state", v->ended_at[0] ? "ended" : "open");
	cJSON_AddBoolToObject(o, "being_enqueued", v->holds > 0);
	group_time(o, "created_at", v->created_at);
	group_time(o, "ended_at", v->ended_at);
	for (i = 0; i < ARRAY_LEN(ends); i++)
		cJSON_AddNumberToObject(o, end_names[i], (double)ends[i]);
	for (i = 0; i < ARRAY_LEN(states); i++)
		cJSON_AddNumberToObject(q, states[i], (double)v->queued[i]);
	cJSON_AddItemToObject(o, "queued", q);
	cJSON_AddItemToObject(o, "on_complete",
	    group_callback(v->on_complete, v->complete_job, v->complete_state, v->complete_forgotten));
	cJSON_AddItemToObject(o, "on_success",
	    group_callback(v->on_success, v->success_job, v->success_state, v->success_forgotten));
	for (i = 0; i < nw; i++) {
		cJSON *j = cJSON_CreateObject(), *after = cJSON_CreateArray();
		size_t k;

		cJSON_AddNumberToObject(j, "id", (double)w[i].id);
		for (k = 0; k < w[i].nafter; k++)
			cJSON_AddItemToArray(after, cJSON_CreateNumber((double)w[i].after[k]));
		cJSON_AddItemToObject(j, "waits_for", after);
		cJSON_AddItemToArray(a, j);
	}
	cJSON_AddItemToObject(o, "waiting", a);
	return o;
}
