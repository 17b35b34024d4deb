/* serve_auth.c -- logins, sessions and CSRF tokens of `jobq serve`.
 *
 * A session is a random 32-byte token in an HttpOnly, SameSite=Strict
 * cookie; the database keeps only its SHA-256, the user's name, a CSRF
 * token of the same strength and the expiry.  So several servers share
 * sessions, a restart logs nobody out, and a copy of the table opens
 * nothing.  The role is looked up in the configuration on every request:
 * removing a [user] or demoting it takes effect at once. */
#include "config.h"

#include <pthread.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "serve_auth.h"
#include "serve_http.h"

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

/* Prepares what logins need: libsodium and a hash to verify against
 * when the user does not exist, so an unknown name takes as long to
 * refuse as a wrong password. */
int
serve_auth_init(struct serve *s)
{
	char pw[TOKEN_HEX + 1];

	if (sodium_init() < 0)
		return -1;
	new_token(pw);
	return crypto_pwhash_str(s->dummy_hash, pw, strlen(pw), crypto_pwhash_OPSLIMIT_INTERACTIVE,
	    crypto_pwhash_MEMLIMIT_INTERACTIVE);
}

/* Finds the request's session.  Returns 0 with r->user and r->csrf set,
 * 401 when there is no live session for a configured user, 500 when the
 * database failed (logged). */
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
	    "SELECT username, csrf_token FROM jobq_sessions WHERE token_hash = %q"
	    " AND expires_at > UTC_TIMESTAMP(6)",
	    hash);
	if (res == NULL) {
		log_error("serve: look up a session: %s", err);
		return 500;
	}
	rc = 401;
	if ((row = db_res_next(res)) != NULL && (r->user = conf_serve_user(r->srv->conf, row[0])) != NULL) {
		snprintf(r->csrf, sizeof r->csrf, "%s", row[1]);
		rc = 0;
	}
	db_res_free(res);
	return rc;
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

/* Failed logins in the window for the user and for the address; when
 * either reached the limit, *retry_s is how long until the oldest of
 * them leaves the window.  Returns a db_rc. */
static int
rate_limited(struct req *r, const char *user, int64_t *retry_s, char *err)
{
	const struct serve_conf *sc = &r->srv->conf->serve;
	struct db_res *res;
	char **row;
	int rc;

	*retry_s = 0;
	res = db_query(r->db, &rc, err,
	    "SELECT COUNT(*), TIMESTAMPDIFF(SECOND, UTC_TIMESTAMP(6), MIN(at) + INTERVAL %I MICROSECOND)"
	    " FROM jobq_login_failures WHERE username = %q AND at > UTC_TIMESTAMP(6) - INTERVAL %I "
	    "MICROSECOND"
	    " UNION ALL SELECT COUNT(*), TIMESTAMPDIFF(SECOND, UTC_TIMESTAMP(6), MIN(at) + INTERVAL %I"
	    " MICROSECOND) FROM jobq_login_failures WHERE address = %q"
	    " AND at > UTC_TIMESTAMP(6) - INTERVAL %I MICROSECOND",
	    sc->login_rate_window_ms * 1000, user, sc->login_rate_window_ms * 1000,
	    sc->login_rate_window_ms * 1000, r->addr, sc->login_rate_window_ms * 1000);
	if (res == NULL)
		return rc;
	while ((row = db_res_next(res)) != NULL)
		if (strtoull(row[0], NULL, 10) >= sc->login_rate_max && row[1] != NULL) {
			int64_t s = strtoll(row[1], NULL, 10) + 1;

			if (s > *retry_s)
				*retry_s = s;
		}
	db_res_free(res);
	return DB_OK;
}

/* One argon2id verification at a time: each takes 64 MiB, and a burst
 * of logins must not multiply that by the threads. */
static pthread_mutex_t verify_lock = PTHREAD_MUTEX_INITIALIZER;

/* Checks the password; an unknown user costs the same work. */
static const struct serve_user *
verify(struct req *r, const char *name, const char *password)
{
	const struct serve_user *u = conf_serve_user(r->srv->conf, name);
	const char *hash = u != NULL ? u->password_hash : r->srv->dummy_hash;
	int good;

	pthread_mutex_lock(&verify_lock);
	good = crypto_pwhash_str_verify(hash, password, strlen(password)) == 0;
	pthread_mutex_unlock(&verify_lock);
	return good && u != NULL ? u : NULL;
}

/* Stores a new session; fills the cookie header. */
static int
open_session(struct req *r, const struct serve_user *u, int remember, char *cookie, size_t len, char *err)
{
	const struct serve_conf *sc = &r->srv->conf->serve;
	int64_t ttl = remember ? sc->remember_ttl_ms : sc->session_ttl_ms;
	char token[TOKEN_HEX + 1], hash[TOKEN_HEX + 1];
	char maxage[48] = "";
	int rc;

	new_token(token);
	new_token(r->csrf);
	token_hash(token, hash);
	/* Expired sessions and old failures go a few at a time. */
	db_exec(r->db, err, "DELETE FROM jobq_sessions WHERE expires_at < UTC_TIMESTAMP(6) LIMIT 100");
	db_exec(r->db, err,
	    "DELETE FROM jobq_login_failures WHERE at < UTC_TIMESTAMP(6) - INTERVAL 1 DAY"
	    " LIMIT 100");
	rc = db_exec(r->db, err,
	    "INSERT INTO jobq_sessions (token_hash, username, csrf_token, remember, address, expires_at)"
	    " VALUES (%q, %q, %q, %d, %q, UTC_TIMESTAMP(6) + INTERVAL %I MICROSECOND)",
	    hash, u->name, r->csrf, remember, r->addr, ttl * 1000);
	if (remember)
		snprintf(maxage, sizeof maxage, "; Max-Age=%lld", (long long)(ttl / 1000));
	snprintf(cookie, len, "%s=%s; Path=/; HttpOnly; SameSite=Strict%s%s", SERVE_COOKIE, token,
	    serve_secure(r) ? "; Secure" : "", maxage);
	sodium_memzero(token, sizeof token);
	return rc;
}

static cJSON *
me_doc(struct req *r)
{
	cJSON *doc = cJSON_CreateObject();

	cJSON_AddStringToObject(doc, "user", r->user->name);
	cJSON_AddStringToObject(doc, "role", r->user->admin ? "admin" : "viewer");
	cJSON_AddStringToObject(doc, "csrf", r->csrf);
	cJSON_AddStringToObject(doc, "timezone", r->srv->conf->worker.timezone);
	return doc;
}

/* POST /api/login {"user", "password", "remember"}: 200 and a session
 * cookie; 401 for a wrong name or password (the same answer for both);
 * 429 with Retry-After once the user or the address used up its failed
 * attempts. */
MHD_RESULT
api_login(struct req *r)
{
	cJSON *in = serve_body_json(r);
	const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(in, "user"));
	const char *pw = cJSON_GetStringValue(cJSON_GetObjectItem(in, "password"));
	int remember = cJSON_IsTrue(cJSON_GetObjectItem(in, "remember"));
	char err[ERRSZ], cookie[256];
	struct resp_extra x = { 0 };
	MHD_RESULT ret;

	if (name == NULL || pw == NULL || strlen(name) > NAME_MAX_LEN) {
		cJSON_Delete(in);
		return serve_error(r, 400, "expected {\"user\": ..., \"password\": ...}");
	}
	if (rate_limited(r, name, &x.retry_after_s, err) != DB_OK)
		ret = serve_db_error(r, "login rate", err);
	else if (x.retry_after_s > 0) {
		log_warn("serve: login of '%s' from %s refused: too many failed attempts", name, r->addr);
		static const char body[] = "{\"error\":\"too many failed logins; try again later\"}";

		ret = serve_respond(r, 429, "application/json; charset=utf-8", body, strlen(body), &x);
	} else if ((r->user = verify(r, name, pw)) == NULL) {
		log_warn("serve: failed login of '%s' from %s", name, r->addr);
		if (db_exec(r->db, err, "INSERT INTO jobq_login_failures (username, address) VALUES (%q, %q)",
		        name, r->addr) != DB_OK)
			ret = serve_db_error(r, "record a failed login", err);
		else
			ret = serve_error(r, 401, "wrong user name or password");
	} else if (open_session(r, r->user, remember, cookie, sizeof cookie, err) != DB_OK)
		ret = serve_db_error(r, "open a session", err);
	else {
		x.set_cookie = cookie;
		log_info("serve: '%s' logged in from %s", name, r->addr);
		ret = serve_json_x(r, 200, me_doc(r), &x);
	}
	cJSON_Delete(in);
	return ret;
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
	if (db_exec(r->db, err, "DELETE FROM jobq_sessions WHERE token_hash = %q", hash) != DB_OK)
		return serve_db_error(r, "close a session", err);
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
		return serve_error(r, 500, "internal error (the server log has the detail)");
	if (rc == 0)
		return serve_json(r, 200, me_doc(r));
	doc = cJSON_CreateObject();
	cJSON_AddNullToObject(doc, "user");
	return serve_json(r, 200, doc);
}
