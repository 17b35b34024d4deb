/* sessions.c -- the dashboard's sessions in the database, the one place
 * both `jobq serve` and `jobq sessions` end them.
 *
 * A session is tied to the password hash its user had when it opened:
 * jobq_sessions.pw_tag holds the SHA-256 of that hash string.  A new
 * `jobq passwd` hash gives a new tag, so every older session of that user
 * stops opening anything, and a user removed and added again comes back
 * with a new hash.  The tag is a digest of a digest: it tells nothing
 * about the password. */
#include "config.h"

#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"
#include "sessions.h"

/* The tag of a password hash: SESSIONS_TAG_LEN hex digits and a NUL. */
void
sessions_tag(const char *password_hash, char *tag)
{
	unsigned char h[crypto_hash_sha256_BYTES];

	crypto_hash_sha256(h, (const unsigned char *)password_hash, strlen(password_hash));
	sodium_bin2hex(tag, SESSIONS_TAG_LEN + 1, h, sizeof h);
}

/* Whether a session with tag may still be used by a user whose
 * password hash is now password_hash (NULL: the user is gone). */
int
sessions_tag_ok(const char *password_hash, const char *tag)
{
	char now[SESSIONS_TAG_LEN + 1];

	if (password_hash == NULL || tag == NULL || strlen(tag) != SESSIONS_TAG_LEN)
		return 0;
	sessions_tag(password_hash, now);
	return sodium_memcmp(now, tag, SESSIONS_TAG_LEN) == 0;
}

/* The password hash user has now: from jobq.ini, else db_hash (the
 * jobq_users row's, or NULL: no such user). */
const char *
sessions_user_hash(const struct conf *c, const char *user, const char *db_hash)
{
	const struct serve_user *u = conf_serve_user(c, user);

	return u != NULL ? u->password_hash : db_hash;
}

/* Ends every session of user; *ended is how many there were. */
int
sessions_end_user(struct db *db, const char *user, uint64_t *ended, char *err)
{
	int rc = db_exec(db, err, "DELETE FROM jobq_sessions WHERE username = %q", user);

	*ended = rc == DB_OK ? db_affected(db) : 0;
	return rc;
}

/* Runs the struct sessions_end arg (an audit_act_fn). */
int
sessions_end_act(struct db *db, void *arg, char *err)
{
	struct sessions_end *e = arg;
	int rc = sessions_end_user(db, e->name, &e->n, err);

	if (rc == DB_OK)
		snprintf(e->detail, e->len, "user %s: %llu session%s", e->name, (unsigned long long)e->n,
		    e->n == 1 ? "" : "s");
	return rc;
}

/* Ends the sessions of one (user, tag) pair and audits it. */
static int
end_pair(struct db *db, const char *user, const char *tag, int removed, const char *address, char *err)
{
	char detail[128];
	uint64_t n;
	int rc;

	rc = db_exec(db, err, "DELETE FROM jobq_sessions WHERE username = %q AND pw_tag = %q", user, tag);
	if (rc != DB_OK || (n = db_affected(db)) == 0)
		return rc;
	snprintf(detail, sizeof detail, "%llu session%s: %s", (unsigned long long)n, n == 1 ? "" : "s",
	    removed ? "the user was removed" : "the password changed");
	return audit_add(db, user, address, "session-end", 0, detail, err);
}

/* Ends (and audits) every session whose user is no longer configured or
 * whose password changed since it opened (jobq.ini's [user] sections
 * and the jobq_users table alike): `jobq serve` does it when it
 * starts, so a removed user's sessions are gone before the user can be
 * added again.  address is who ends them, for the audit. */
int
sessions_end_stale(struct db *db, const struct conf *c, const char *address, char *err)
{
	struct db_res *res;
	char **row;
	int rc;

	res = db_query(db, &rc, err,
	    "SELECT DISTINCT s.username, s.pw_tag, u.password_hash FROM jobq_sessions s"
	    " LEFT JOIN jobq_users u ON u.username = s.username");
	if (res == NULL)
		return rc;
	while (rc == DB_OK && (row = db_res_next(res)) != NULL) {
		const char *hash = sessions_user_hash(c, row[0], row[2]);

		if (!sessions_tag_ok(hash, row[1]))
			rc = end_pair(db, row[0], row[1], hash == NULL, address, err);
	}
	db_res_free(res);
	return rc;
}

/* The users with live sessions, by name. */
int
sessions_list(struct db *db, struct sessions_user **list, size_t *n, char *err)
{
	struct db_res *res;
	char **row;
	int rc;

	*list = NULL;
	*n = 0;
	res = db_query(db, &rc, err,
	    "SELECT s.username, COUNT(*), DATE_FORMAT(MAX(s.created_at), '%%Y-%%m-%%d %%H:%%i:%%s'),"
	    " (SELECT t.address FROM jobq_sessions t WHERE t.username = s.username"
	    "  ORDER BY t.created_at DESC LIMIT 1)"
	    " FROM jobq_sessions s WHERE s.expires_at > UTC_TIMESTAMP(6) GROUP BY s.username ORDER BY "
	    "s.username");
	if (res == NULL)
		return rc;
	*list = xcalloc(db_res_rows(res) + 1, sizeof **list);
	while ((row = db_res_next(res)) != NULL) {
		struct sessions_user *u = &(*list)[(*n)++];

		u->user = xstrdup(row[0]);
		u->count = db_col_u64(row[1], 0);
		u->last_login = xstrdup(row[2] != NULL ? row[2] : "");
		u->last_address = xstrdup(row[3] != NULL ? row[3] : "");
	}
	db_res_free(res);
	return DB_OK;
}

void
sessions_list_free(struct sessions_user *list, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(list[i].user);
		free(list[i].last_login);
		free(list[i].last_address);
	}
	free(list);
}
