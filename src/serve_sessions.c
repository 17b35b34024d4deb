/* serve_sessions.c -- the Sessions page's endpoints, a page handler of
 * `jobq serve`: which users are logged in, and ending every session of
 * one of them, over the same sessions_* functions `jobq sessions` calls. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "serve_audit.h"
#include "serve_sessions.h"
#include "sessions.h"

/* GET /api/sessions: every configured user with its role, how many
 * live sessions it has and where the newest one logged in from. */
MHD_RESULT
api_sessions(struct req *r)
{
	const struct serve_conf *sc = &r->srv->conf->serve;
	struct sessions_user *list;
	cJSON *doc, *users;
	char err[ERRSZ];
	size_t i, n;

	if (sessions_list(r->db, &list, &n, err) != DB_OK)
		return serve_db_error(r, "list sessions", err);
	doc = cJSON_CreateObject();
	users = cJSON_AddArrayToObject(doc, "users");
	for (i = 0; i < sc->nusers; i++) {
		cJSON *u = cJSON_CreateObject();
		size_t j;

		cJSON_AddStringToObject(u, "user", sc->users[i]->name);
		cJSON_AddStringToObject(u, "role", sc->users[i]->admin ? "admin" : "viewer");
		ADD_NUM(u, "sessions", 0);
		for (j = 0; j < n; j++)
			if (strcmp(list[j].user, sc->users[i]->name) == 0) {
				cJSON_ReplaceItemInObject(
				    u, "sessions", cJSON_CreateNumber((double)list[j].count));
				cJSON_AddStringToObject(u, "last_login", list[j].last_login);
				cJSON_AddStringToObject(u, "last_address", list[j].last_address);
			}
		cJSON_AddItemToArray(users, u);
	}
	sessions_list_free(list, n);
	return serve_json(r, 200, doc);
}

/* POST /api/sessions/end {"user": NAME}: ends every session of NAME (the
 * admin's own included, when it is theirs) and audits it; 200 with the
 * number ended, 400 without a user name. */
MHD_RESULT
api_sessions_end(struct req *r)
{
	cJSON *in = serve_body_json(r), *doc;
	const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(in, "user"));
	char err[ERRSZ], detail[128];
	uint64_t n;

	if (name == NULL || *name == '\0' || strlen(name) > NAME_MAX_LEN) {
		cJSON_Delete(in);
		return serve_error(r, 400, "expected {\"user\": NAME}");
	}
	if (sessions_end_user(r->db, name, &n, err) != DB_OK) {
		cJSON_Delete(in);
		return serve_db_error(r, "end sessions", err);
	}
	snprintf(
	    detail, sizeof detail, "user %s: %llu session%s", name, (unsigned long long)n, n == 1 ? "" : "s");
	serve_audit(r, "end-sessions", 0, detail);
	cJSON_Delete(in);
	doc = cJSON_CreateObject();
	ADD_NUM(doc, "ended", n);
	return serve_json(r, 200, doc);
}
