/* serve_auth.c -- logins, sessions and CSRF tokens of `jobq serve`.
 *
 * A session is a random 32-byte token in an HttpOnly, SameSite=Strict
 * cookie; the database keeps only its SHA-256, the user's name, a CSRF
 * token of the same strength and the expiry.  So several servers share
 * sessions, a restart logs nobody out, and a copy of the table opens
 * nothing.  The role is looked up on every request, in the configuration
 * and in jobq_users (users.c): removing a user or demoting it takes
 * effect at once. */
#include "config.h"

#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"
#include "log.h"
#include "serve_audit.h"
#include "serve_auth.h"
#include "serve_hasher.h"
#include "serve_http.h"
#include "sessions.h"
#include "users.h"

#define SERVE_COOKIE "jobq_session"
#define TOKEN_BYTES 32
#define TOKEN_HEX (2 * TOKEN_BYTES)

/* A fresh random token as hex (TOKEN_HEX + 1 bytes). */
static void
new_token(char *hex)
{
	unsigned char raw[TOKEN_BYTES];

	randombytes_buf(raw, sizeof raw);
	sodium_bin2hex(hex, TOKEN_HEX + 1, raw, sizeof raw);
	sodium_memzero(raw, sizeof raw);
}

/* The SHA-256 of a token, as hex: what the database stores. */
static void
token_hash(const char *token, char *hex)
{
	unsigned char h[crypto_hash_sha256_BYTES];

	crypto_hash_sha256(h, (const unsigned char *)token, strlen(token));
	sodium_bin2hex(hex, TOKEN_HEX + 1, h, sizeof h);
}

static int
is_token(const char *s)
{
	size_t i;

	if (s == NULL || strlen(s) != TOKEN_HEX)
		return 0;
	for (i = 0; i < TOKEN_HEX; i++)
		if (strchr("0123456789abcdef", s[i]) == NULL)
			return 0;
	return 1;
}

/* Ends, at start, the sessions of users removed from the configuration
 * or whose password changed (sessions.c).  A database that cannot be
 * reached is only logged: the start fails on it right after, and every
 * request checks the same again. */
static void
end_stale_sessions(struct serve *s)
{
	struct db *db = db_new(&s->conf->db);
	char err[ERRSZ];

	if (db_connect(db, 1, err) != DB_OK || sessions_end_stale(db, s->conf, "jobq serve", err) != DB_OK)
		log_warn("serve: end the sessions of removed users: %s", err);
	db_free(db);
}

/* Prepares what logins need: libsodium, the hashing thread and a hash to
 * verify against when the user does not exist, so an unknown name takes
 * as long to refuse as a wrong password. */
int
serve_auth_init(struct serve *s)
{
	char pw[TOKEN_HEX + 1];

	if (sodium_init() < 0 || serve_hasher_start() < 0)
		return -1;
	end_stale_sessions(s);
	new_token(pw);
	return crypto_pwhash_str(s->dummy_hash, pw, strlen(pw), crypto_pwhash_OPSLIMIT_INTERACTIVE,
	    crypto_pwhash_MEMLIMIT_INTERACTIVE);
}

/* Deletes the session whose token hash is arg, for audit_tx. */
static int
session_delete(struct db *db, void *arg, char *err)
{
	return db_exec(db, err, "DELETE FROM jobq_sessions WHERE token_hash = %q", (const char *)arg);
}

/* session_delete, but 1 (no audit row) when it was gone already. */
static int
session_end(struct db *db, void *arg, char *err)
{
	int rc = session_delete(db, arg, err);

	return rc == DB_OK && db_affected(db) == 0 ? 1 : rc;
}

/* A session whose user was removed or whose password changed: it ends
 * now, for good (re-adding the user does not revive it), and the audit
 * says why, in the same transaction.  Failures are logged: the request
 * is refused either way. */
static void
end_session(struct req *r, const char *hash, const char *user, int removed)
{
	struct audit_entry a = { user, r->addr, "session-end", 0,
		removed ? "the user was removed" : "the password changed" };
	char err[ERRSZ];
	int rc = audit_tx(r->db, &a, 0, session_end, (void *)hash, err);

	if (rc != DB_OK && rc != 1)
		log_error("serve: end a session of %s: %s", user, err);
}

/* r->user becomes the session's user: name, and the role from jobq.ini
 * or else db_role (the jobq_users row's). */
static void
set_user(struct req *r, const char *name, const char *db_role)
{
	const struct serve_user *u = conf_serve_user(r->srv->conf, name);

	memset(&r->user_buf, 0, sizeof r->user_buf);
	snprintf(r->user_buf.name, sizeof r->user_buf.name, "%s", name);
	r->user_buf.admin = u != NULL ? u->admin : users_role(db_role) == 1;
	r->user_buf.in_db = u == NULL;
	r->user = &r->user_buf;
}

/* Finds the request's session.  Returns 0 with r->user and r->csrf set,
 * 401 when there is no live session for a user (of jobq.ini or of the
 * jobq_users table) with the password hash it was opened with (such a
 * session is ended), 500 when the database failed (logged).  One query:
 * the user's row comes joined. */
int
serve_session(struct req *r)
{
	const char *cookie = MHD_lookup_connection_value(r->conn, MHD_COOKIE_KIND, SERVE_COOKIE);
	char hash[TOKEN_HEX + 1], err[ERRSZ];
	struct db_res *res;
	char **row;
	int rc;

	if (!is_token(cookie))
		return 401;
	token_hash(cookie, hash);
	res = db_query(r->db, &rc, err,
	    "SELECT s.username, s.csrf_token, s.pw_tag, u.password_hash, u.role FROM jobq_sessions s"
	    " LEFT JOIN jobq_users u ON u.username = s.username"
	    " WHERE s.token_hash = %q AND s.expires_at > UTC_TIMESTAMP(6)",
	    hash);
	if (res == NULL) {
		log_error("serve: look up a session: %s", err);
		return 500;
	}
	rc = 401;
	if ((row = db_res_next(res)) != NULL) {
		const char *pw_hash = sessions_user_hash(r->srv->conf, row[0], row[3]);

		if (!sessions_tag_ok(pw_hash, row[2])) {
			end_session(r, hash, row[0], pw_hash == NULL);
			row = NULL;
		} else
			set_user(r, row[0], row[4]);
	}
	if (row != NULL) {
		snprintf(r->csrf, sizeof r->csrf, "%s", row[1]);
		snprintf(r->session, sizeof r->session, "%s", hash);
		rc = 0;
	}
	db_res_free(res);
	return rc;
}

/* audit_still's fn for serve_still_admin: serve_session again, and
 * the role it finds.  A connection lost between two jobs is made again
 * and the session looked up once more, as each job's own write would
 * be tried again (failed_act_reconnecting); a database that cannot be
 * reached stops the action with 503, as the router's guard answers. */
static int
still_admin(void *arg, char *err)
{
	struct serve_still *s = arg;
	struct db *db = s->r->db;
	const char *why;
	int rc = serve_session(s->r);

	if (rc == 500 && !db_connected(db) && db_connect(db, 1, err) == DB_OK)
		rc = serve_session(s->r);
	if (rc == 0 && s->r->user->admin)
		return 0;
	if (rc == 0) {
		s->refused = 403;
		why = "this needs the admin role, which was taken from this user as the action ran";
	} else if (rc == 401) {
		s->refused = 401;
		why = "the session ended as the action ran (logged out, removed, or a new password)";
	} else if (!db_connected(db)) {
		s->refused = 503;
		why = "the database could not be reached to check the session";
	} else {
		s->refused = 500;
		why = "the session could not be checked";
	}
	snprintf(err, ERRSZ, "%s; the jobs after it were left as they were", why);
	return -1;
}

/* The check (struct serve_still) of request r, kept in s, for a long
 * action to ask before each job: one for every such action, so each
 * refuses alike. */
const struct audit_still *
serve_still_admin(struct serve_still *s, struct req *r)
{
	s->r = r;
	s->refused = 0;
	s->check.fn = still_admin;
	s->check.arg = s;
	return &s->check;
}

/* The answer of a long action whose check is s: doc with 200 when it
 * ran to its end (rc DB_OK), else (rc AUDIT_STOPPED) with "error": err
 * and the status s's check refused with.  Takes doc. */
MHD_RESULT
serve_still_answer(struct req *r, const struct serve_still *s, int rc, const char *err, cJSON *doc)
{
	if (rc != AUDIT_STOPPED)
		return serve_json(r, 200, doc);
	cJSON_AddStringToObject(doc, "error", err);
	return serve_json(r, s->refused, doc);
}

/* The X-CSRF-Token header equals the session's token; compared in
 * constant time, so timing tells an attacker nothing about it. */
int
serve_csrf_ok(struct req *r)
{
	const char *got = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "X-CSRF-Token");

	return got != NULL && strlen(got) == TOKEN_HEX && strlen(r->csrf) == TOKEN_HEX &&
	    sodium_memcmp(got, r->csrf, TOKEN_HEX) == 0;
}

/* Stores a new session of u, tied to u's password hash as it is now;
 * fills the cookie header. */
int
serve_session_open(
    struct req *r, const struct user_rec *u, int remember, char *cookie, size_t len, char *err)
{
	const struct serve_conf *sc = &r->srv->conf->serve;
	int64_t ttl = remember ? sc->remember_ttl_ms : sc->session_ttl_ms;
	char token[TOKEN_HEX + 1], hash[TOKEN_HEX + 1], tag[SESSIONS_TAG_LEN + 1];
	char maxage[48] = "";
	int rc;

	new_token(token);
	new_token(r->csrf);
	token_hash(token, hash);
	sessions_tag(u->hash, tag);
	/* Expired sessions go a few at a time (serve_limit.c prunes old
	 * failed logins). */
	db_exec(r->db, err, "DELETE FROM jobq_sessions WHERE expires_at < UTC_TIMESTAMP(6) LIMIT 100");
	rc = db_exec(r->db, err,
	    "INSERT INTO jobq_sessions"
	    " (token_hash, username, csrf_token, remember, address, expires_at, pw_tag)"
	    " VALUES (%q, %q, %q, %d, %q, UTC_TIMESTAMP(6) + INTERVAL %I MICROSECOND, %q)",
	    hash, u->name, r->csrf, remember, r->addr, ttl * 1000, tag);
	if (remember)
		snprintf(maxage, sizeof maxage, "; Max-Age=%lld", (long long)(ttl / 1000));
	snprintf(cookie, len, "%s=%s; Path=/; HttpOnly; SameSite=Strict%s%s", SERVE_COOKIE, token,
	    serve_secure(r) ? "; Secure" : "", maxage);
	sodium_memzero(token, sizeof token);
	return rc;
}

/* What /api/me and a login answer: the user, the role, the CSRF token
 * and the time zone the pages show. */
cJSON *
serve_me_doc(struct req *r)
{
	cJSON *doc = cJSON_CreateObject();

	cJSON_AddStringToObject(doc, "user", r->user->name);
	cJSON_AddStringToObject(doc, "role", r->user->admin ? "admin" : "viewer");
	cJSON_AddStringToObject(doc, "csrf", r->csrf);
	cJSON_AddStringToObject(doc, "timezone", r->srv->conf->worker.timezone);
	return doc;
}

/* POST /api/logout: the session ends here and in every browser that
 * shares it. */
MHD_RESULT
api_logout(struct req *r)
{
	const char *cookie = MHD_lookup_connection_value(r->conn, MHD_COOKIE_KIND, SERVE_COOKIE);
	char hash[TOKEN_HEX + 1], err[ERRSZ], clear[128];
	struct resp_extra x = { 0 };

	token_hash(cookie, hash); /* the router checked the session */
	/* The session ends with its audit row. */
	if (serve_audited(r, "logout", 0, "", session_delete, hash, err) != DB_OK)
		return serve_write_error(r, "close a session", err);
	snprintf(clear, sizeof clear, "%s=; Path=/; HttpOnly; SameSite=Strict%s; Max-Age=0", SERVE_COOKIE,
	    serve_secure(r) ? "; Secure" : "");
	x.set_cookie = clear;
	return serve_respond(r, 200, "application/json; charset=utf-8", "{}", 2, &x);
}

/* GET /api/me: who is logged in, the role and the CSRF token the page
 * sends with every POST; {"user": null} without a session (a question
 * with an answer, not an error: the page then shows the login form). */
MHD_RESULT
api_me(struct req *r)
{
	cJSON *doc;
	int rc = serve_session(r);

	if (rc == 500)
		return serve_db_error(r, "session", "the session lookup failed");
	if (rc == 0)
		return serve_json(r, 200, serve_me_doc(r));
	doc = cJSON_CreateObject();
	cJSON_AddNullToObject(doc, "user");
	return serve_json(r, 200, doc);
}
