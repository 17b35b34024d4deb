/* serve_sessions.c -- the Sessions page's endpoints, a page handler of
 * `jobq serve`: which users are logged in, and ending every session of
 * one of them, over the same sessions_* functions `jobq sessions` calls. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve_audit.h"
#include "serve_sessions.h"
#include "sessions.h"
#include "users.h"

/* One user of the list, with its live sessions (of list, n). */
static cJSON *
user_json(const struct user_rec *u, const struct sessions_user *list, size_t n)
{
	cJSON *o = cJSON_CreateObject();
	size_t j;

	cJSON_AddStringToObject(o, "user", u->name);
	cJSON_AddStringToObject(o, "role", u->admin ? "admin" : "viewer");
	cJSON_AddStringToObject(o, "source", u->in_db ? "database" : "jobq.ini");
	if (u->in_db) {
		cJSON_AddStringToObject(o, "created_at", u->created_at);
		cJSON_AddStringToObject(o, "created_by", u->created_by);
	}
	ADD_NUM(o, "sessions", 0);
	for (j = 0; j < n; j++)
		if (strcmp(list[j].user, u->name) == 0) {
			cJSON_ReplaceItemInObject(o, "sessions", cJSON_CreateNumber((double)list[j].count));
			cJSON_AddStringToObject(o, "last_login", list[j].last_login);
			cJSON_AddStringToObject(o, "last_address", list[j].last_address);
		}
	return o;
}

/* GET /api/sessions: every user (jobq.ini's, then the database's) with
 * its role, where it is kept, how many live sessions it has and where
 * the newest one logged in from. */
MHD_RESULT
api_sessions(struct req *r)
{
	struct sessions_user *list;
	struct user_rec *us;
	cJSON *doc, *users;
	char err[ERRSZ];
	size_t i, n, nus;

	if (sessions_list(r->db, &list, &n, err) != DB_OK)
		return serve_db_error(r, "list sessions", err);
	if (users_list(r->db, r->srv->conf, &us, &nus, err) != DB_OK) {
		sessions_list_free(list, n);
		return serve_db_error(r, "list users", err);
	}
	doc = cJSON_CreateObject();
	users = cJSON_AddArrayToObject(doc, "users");
	for (i = 0; i < nus; i++)
		cJSON_AddItemToArray(users, user_json(&us[i], list, n));
	free(us);
	sessions_list_free(list, n);
	return serve_json(r, 200, doc);
}

/* POST /api/sessions/end {"user": NAME}: ends every session of NAME (the
 * admin's own included, when it is theirs) and audits it; 200 with the
 * number ended, 400 without a user name or with one that breaks the
 * name rule (users_bad_name). */
MHD_RESULT
api_sessions_end(struct req *r)
{
	cJSON *in = serve_body_json(r), *doc;
	const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(in, "user"));
	char err[ERRSZ], detail[128] = "";
	struct sessions_end c = { NULL, 0, detail, sizeof detail };
	uint64_t n;

	/* The name rule first: a name no user can have is a 400 that says
	 * so, not a query the database refuses (a 500). */
	if (users_bad_name(name) != NULL) {
		MHD_RESULT ret =
		    serve_error(r, 400, name == NULL ? "expected {\"user\": NAME}" : users_bad_name(name));

		cJSON_Delete(in);
		return ret;
	}
	c.name = name;
	if (serve_audited(r, "end-sessions", 0, detail, sessions_end_act, &c, err) != DB_OK) {
		cJSON_Delete(in);
		return serve_write_error(r, "end sessions", err);
	}
	n = c.n;
	cJSON_Delete(in);
	doc = cJSON_CreateObject();
	ADD_NUM(doc, "ended", n);
	return serve_json(r, 200, doc);
}
