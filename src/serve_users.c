/* serve_users.c -- the Users page's endpoints (admins only), a page
 * handler of `jobq serve`: add a user to the database, change its role
 * or its password, remove it; each audited, over the same users_*
 * functions `jobq user` calls.  Users of jobq.ini are listed but changed
 * only there (409).  An admin cannot remove or demote itself: the last
 * admin would lock everyone out of these very buttons.  A new password
 * or a removal ends the user's sessions at their next request (the
 * session tag, sessions.c). */
#include "config.h"

#include <sodium.h>
#include <stdio.h>
#include <string.h>

#include "password.h"
#include "serve_audit.h"
#include "serve_users.h"
#include "users.h"

/* The request's fields: "user" (checked against the name rule), and
 * "role" / "password" when want_role / want_pw.  NULL when they are all
 * there and well-formed, else the 400 message. */
static const char *
fields(cJSON *in, const char **name, const char **role, const char **pw, int want_role, int want_pw)
{
	*name = cJSON_GetStringValue(cJSON_GetObjectItem(in, "user"));
	*role = cJSON_GetStringValue(cJSON_GetObjectItem(in, "role"));
	*pw = cJSON_GetStringValue(cJSON_GetObjectItem(in, "password"));
	if (users_bad_name(*name) != NULL)
		return users_bad_name(*name);
	if (want_role && users_role(*role) < 0)
		return "role: expected admin or viewer";
	if (want_pw && *pw == NULL)
		return "expected a password";
	return NULL;
}

/* Makes the change c and its audit row in one transaction, and answers:
 * 200 {"user": NAME}, or the error the users_* code says. */
static MHD_RESULT
answer(struct req *r, struct users_change *c, const char *action, const char *detail)
{
	char err[ERRSZ];
	cJSON *doc;
	int rc = serve_audited(r, action, 0, detail, users_change_act, c, err);

	if (rc == USERS_NOT_FOUND)
		return serve_error(r, 404, err);
	if (rc == USERS_CONFLICT)
		return serve_error(r, 409, err);
	if (rc != DB_OK)
		return serve_write_error(r, action, err);
	doc = cJSON_CreateObject();
	cJSON_AddStringToObject(doc, "user", c->name);
	return serve_json(r, 200, doc);
}

/* POST /api/users/add {"user", "role", "password"}. */
MHD_RESULT
api_user_add(struct req *r)
{
	cJSON *in = serve_body_json(r);
	const char *name, *role, *pw, *bad = fields(in, &name, &role, &pw, 1, 1);
	char err[ERRSZ], detail[NAME_MAX_LEN + 64];
	struct user_rec u;
	struct users_change c = { r->srv->conf, USERS_ADD, NULL, &u, 0, NULL };
	MHD_RESULT ret;

	memset(&u, 0, sizeof u);
	if (bad != NULL || password_hash(pw, u.hash, err) < 0) {
		ret = serve_error(r, 400, bad != NULL ? bad : err);
		cJSON_Delete(in);
		return ret;
	}
	snprintf(u.name, sizeof u.name, "%s", name);
	u.admin = users_role(role);
	snprintf(u.created_by, sizeof u.created_by, "%s", r->user->name);
	c.name = name;
	snprintf(detail, sizeof detail, "user %s, role %s", name, role);
	ret = answer(r, &c, "user-add", detail);
	sodium_memzero(&u, sizeof u);
	cJSON_Delete(in);
	return ret;
}

/* POST /api/users/role {"user", "role"}. */
MHD_RESULT
api_user_role(struct req *r)
{
	cJSON *in = serve_body_json(r);
	const char *name, *role, *pw, *bad = fields(in, &name, &role, &pw, 1, 0);
	char detail[NAME_MAX_LEN + 64];
	MHD_RESULT ret;

	if (bad != NULL)
		ret = serve_error(r, 400, bad);
	else if (strcmp(name, r->user->name) == 0 && users_role(role) == 0)
		ret = serve_error(r, 409, "you cannot take the admin role from yourself");
	else {
		struct users_change c = { r->srv->conf, USERS_ROLE, name, NULL, users_role(role), NULL };

		snprintf(detail, sizeof detail, "user %s, role %s", name, role);
		ret = answer(r, &c, "user-role", detail);
	}
	cJSON_Delete(in);
	return ret;
}

/* POST /api/users/password {"user", "password"}. */
MHD_RESULT
api_user_password(struct req *r)
{
	cJSON *in = serve_body_json(r);
	const char *name, *role, *pw, *bad = fields(in, &name, &role, &pw, 0, 1);
	char err[ERRSZ], hash[PASSWORD_HASH_MAX], detail[NAME_MAX_LEN + 64];
	MHD_RESULT ret;

	if (bad != NULL || password_hash(pw, hash, err) < 0)
		ret = serve_error(r, 400, bad != NULL ? bad : err);
	else {
		struct users_change c = { r->srv->conf, USERS_HASH, name, NULL, 0, hash };

		snprintf(detail, sizeof detail, "user %s: a new password; its sessions end", name);
		ret = answer(r, &c, "user-password", detail);
	}
	sodium_memzero(hash, sizeof hash);
	cJSON_Delete(in);
	return ret;
}

/* POST /api/users/remove {"user"}. */
MHD_RESULT
api_user_remove(struct req *r)
{
	cJSON *in = serve_body_json(r);
	const char *name, *role, *pw, *bad = fields(in, &name, &role, &pw, 0, 0);
	char detail[NAME_MAX_LEN + 64];
	MHD_RESULT ret;

	if (bad != NULL)
		ret = serve_error(r, 400, bad);
	else if (strcmp(name, r->user->name) == 0)
		ret = serve_error(r, 409, "you cannot remove yourself");
	else {
		struct users_change c = { r->srv->conf, USERS_REMOVE, name, NULL, 0, NULL };

		snprintf(detail, sizeof detail, "user %s; its sessions end", name);
		ret = answer(r, &c, "user-remove", detail);
	}
	cJSON_Delete(in);
	return ret;
}
