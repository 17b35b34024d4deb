/* users.c -- the dashboard's users, from two places: the [user NAME]
 * sections of jobq.ini (kept as they are, read-only here) and the rows
 * of jobq_users (sql/017), which admins change from the Users page or
 * with `jobq user`.  A name of jobq.ini wins: it cannot be added to the
 * table, and the table's rows are never consulted for it.
 *
 * Every change is one statement; ending the changed user's sessions is
 * the session tag's work (sessions.c): a new hash or a missing user
 * makes them fail at their next request. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "users.h"

#define COLS "username, password_hash, role, DATE_FORMAT(created_at, '%%Y-%%m-%%d %%H:%%i:%%s'), created_by"

/* Why name cannot be a user's (NULL when it can): the rule of the
 * [user NAME] sections. */
const char *
users_bad_name(const char *name)
{
	if (name == NULL || *name == '\0')
		return "no user name";
	if (strlen(name) > NAME_MAX_LEN || !conf_valid_name(name))
		return "a user name is 1-64 letters, digits, '_', '.' or '-'";
	return NULL;
}

/* 1 for "admin", 0 for "viewer", -1 for anything else. */
int
users_role(const char *role)
{
	if (role != NULL && strcmp(role, "admin") == 0)
		return 1;
	if (role != NULL && strcmp(role, "viewer") == 0)
		return 0;
	return -1;
}

static void
from_ini(struct user_rec *u, const struct serve_user *s)
{
	memset(u, 0, sizeof *u);
	snprintf(u->name, sizeof u->name, "%s", s->name);
	snprintf(u->hash, sizeof u->hash, "%s", s->password_hash ? s->password_hash : "");
	u->admin = s->admin;
}

static void
from_row(struct user_rec *u, char **row)
{
	memset(u, 0, sizeof *u);
	snprintf(u->name, sizeof u->name, "%s", row[0]);
	snprintf(u->hash, sizeof u->hash, "%s", row[1]);
	u->admin = users_role(row[2]) == 1;
	u->in_db = 1;
	snprintf(u->created_at, sizeof u->created_at, "%s", row[3] ? row[3] : "");
	snprintf(u->created_by, sizeof u->created_by, "%s", row[4] ? row[4] : "");
}

/* The user called name: DB_OK with *u filled, USERS_NOT_FOUND, or a
 * DB_* error.  A jobq.ini user costs no query. */
int
users_find(struct db *db, const struct conf *c, const char *name, struct user_rec *u, char *err)
{
	const struct serve_user *s = conf_serve_user(c, name);
	struct db_res *res;
	char **row;
	int rc;

	if (s != NULL) {
		from_ini(u, s);
		return DB_OK;
	}
	res = db_query(db, &rc, err, "SELECT " COLS " FROM jobq_users WHERE username = %q", name);
	if (res == NULL)
		return rc;
	rc = USERS_NOT_FOUND;
	if ((row = db_res_next(res)) != NULL) {
		from_row(u, row);
		rc = DB_OK;
	}
	db_res_free(res);
	return rc;
}

/* Every user: jobq.ini's first, in their order there, then the table's
 * by name (a row shadowed by a jobq.ini name is left out). */
int
users_list(struct db *db, const struct conf *c, struct user_rec **list, size_t *n, char *err)
{
	const struct serve_conf *sc = &c->serve;
	struct db_res *res;
	char **row;
	size_t i;
	int rc;

	*list = NULL;
	*n = 0;
	res = db_query(db, &rc, err, "SELECT " COLS " FROM jobq_users ORDER BY username");
	if (res == NULL)
		return rc;
	*list = xcalloc(sc->nusers + db_res_rows(res) + 1, sizeof **list);
	for (i = 0; i < sc->nusers; i++)
		from_ini(&(*list)[(*n)++], sc->users[i]);
	while ((row = db_res_next(res)) != NULL)
		if (conf_serve_user(c, row[0]) == NULL)
			from_row(&(*list)[(*n)++], row);
	db_res_free(res);
	return DB_OK;
}

/* Adds u (name, hash, admin, created_by) to the table: USERS_CONFLICT
 * when the name is taken, in jobq.ini or in the table. */
int
users_add(struct db *db, const struct conf *c, const struct user_rec *u, char *err)
{
	int rc;

	if (conf_serve_user(c, u->name) != NULL) {
		errf(err, "user %s is in %s: change it there", u->name, c->path);
		return USERS_CONFLICT;
	}
	rc = db_exec(db, err,
	    "INSERT IGNORE INTO jobq_users (username, password_hash, role, created_by) VALUES (%q, %q, %q, %q)",
	    u->name, u->hash, u->admin ? "admin" : "viewer", u->created_by);
	if (rc == DB_OK && db_affected(db) == 0) {
		errf(err, "user %s exists already", u->name);
		return USERS_CONFLICT;
	}
	return rc;
}

/* Runs one UPDATE or DELETE (set: its SQL, with the name as its one %q)
 * on a table user: USERS_CONFLICT for a jobq.ini user, USERS_NOT_FOUND
 * when there is no such row. */
static int
change(struct db *db, const struct conf *c, const char *name, const char *sql, const char *arg, char *err)
{
	int rc;

	if (conf_serve_user(c, name) != NULL) {
		errf(err, "user %s is in %s: change it there", name, c->path);
		return USERS_CONFLICT;
	}
	rc = arg != NULL ? db_exec(db, err, sql, arg, name) : db_exec(db, err, sql, name);
	if (rc == DB_OK && db_affected(db) == 0) {
		errf(err, "no user %s", name);
		return USERS_NOT_FOUND;
	}
	return rc;
}

/* Whether name is a table user that change() could change: DB_OK,
 * USERS_CONFLICT for a jobq.ini user, USERS_NOT_FOUND, with err saying
 * as change() would.  Asked before a password is read for it. */
int
users_changeable(struct db *db, const struct conf *c, const char *name, char *err)
{
	struct user_rec u;
	int rc;

	if (conf_serve_user(c, name) != NULL) {
		errf(err, "user %s is in %s: change it there", name, c->path);
		return USERS_CONFLICT;
	}
	if ((rc = users_find(db, c, name, &u, err)) == USERS_NOT_FOUND)
		errf(err, "no user %s", name);
	return rc;
}

/* Gives a table user the role admin (1) or viewer (0); setting the role
 * it has is no change, and no error. */
int
users_set_role(struct db *db, const struct conf *c, const char *name, int admin, char *err)
{
	struct user_rec u;
	int rc = users_find(db, c, name, &u, err);

	if (rc == USERS_NOT_FOUND)
		errf(err, "no user %s", name);
	if (rc != DB_OK || (u.in_db && u.admin == admin))
		return rc;
	return change(db, c, name,
	    "UPDATE jobq_users SET role = %q, changed_at = UTC_TIMESTAMP(6) WHERE username = %q",
	    admin ? "admin" : "viewer", err);
}

/* Gives a table user a new password hash (its sessions end). */
int
users_set_hash(struct db *db, const struct conf *c, const char *name, const char *hash, char *err)
{
	return change(db, c, name,
	    "UPDATE jobq_users SET password_hash = %q, changed_at = UTC_TIMESTAMP(6) WHERE username = %q",
	    hash, err);
}

/* Removes a table user (its sessions end). */
int
users_remove(struct db *db, const struct conf *c, const char *name, char *err)
{
	return change(db, c, name, "DELETE FROM jobq_users WHERE username = %q", NULL, err);
}

/* Makes the struct users_change arg (an audit_act_fn): DB_OK, or what
 * the users_* function said. */
int
users_change_act(struct db *db, void *arg, char *err)
{
	const struct users_change *ch = arg;

	switch (ch->op) {
	case USERS_ADD:
		return users_add(db, ch->conf, ch->u, err);
	case USERS_ROLE:
		return users_set_role(db, ch->conf, ch->name, ch->admin, err);
	case USERS_HASH:
		return users_set_hash(db, ch->conf, ch->name, ch->hash, err);
	default:
		return users_remove(db, ch->conf, ch->name, err);
	}
}
