/* serve_login.c -- POST /api/login, a page handler of `jobq serve`.
 *
 * A login is answered in two calls of the handler.  The first validates
 * the request, counts the attempt against the rate limit (serve_limit.c)
 * and hands the password to the hashing thread (serve_hasher.c), which
 * suspends the connection; the request thread is free at once.  When the
 * check is done libmicrohttpd calls the handler again, and the second
 * call opens the session or answers 401.  When the hasher's few slots are
 * taken the login gets 503 with Retry-After at once: a flood of logins
 * never holds the threads that serve the pages. */
#include "config.h"

#include <sodium.h>
#include <stdio.h>
#include <string.h>

#include "audit.h"
#include "log.h"
#include "serve_auth.h"
#include "serve_hasher.h"
#include "serve_limit.h"
#include "serve_login.h"

static MHD_RESULT
refuse(struct req *r, unsigned status, int64_t retry_s, const char *msg)
{
	struct resp_extra x = { 0 };
	char body[160];

	x.retry_after_s = retry_s;
	snprintf(body, sizeof body, "{\"error\":\"%s\"}", msg);
	return serve_respond(r, status, "application/json; charset=utf-8", body, strlen(body), &x);
}

/* The hasher had no slot: the reserved attempt is taken back. */
static MHD_RESULT
busy(struct req *r, uint64_t failure_id)
{
	serve_limit_release(r, failure_id);
	return refuse(r, 503, 1, "too many logins at once; try again in a second");
}

/* Fills c from the request body; 0, -1 when it is not a login, or a
 * DB_* error (err filled) when the user could not be looked up. */
static int
parse(struct req *r, struct login_check *c, char *err)
{
	cJSON *in = serve_body_json(r);
	const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(in, "user"));
	const char *pw = cJSON_GetStringValue(cJSON_GetObjectItem(in, "password"));
	struct user_rec u;
	int rc = -1;

	if (name != NULL && pw != NULL && strlen(name) <= NAME_MAX_LEN && strlen(pw) < sizeof c->password) {
		snprintf(c->name, sizeof c->name, "%s", name);
		snprintf(c->addr, sizeof c->addr, "%s", r->addr);
		snprintf(c->password, sizeof c->password, "%s", pw);
		c->remember = cJSON_IsTrue(cJSON_GetObjectItem(in, "remember"));
		/* An unknown name is checked against a dummy hash: it takes as
		 * long to refuse as a wrong password. */
		rc = users_bad_name(name) != NULL ? USERS_NOT_FOUND : users_find(r->db, r->srv->conf, name, &u, err);
		if (rc == DB_OK || rc == USERS_NOT_FOUND) {
			snprintf(c->hash, sizeof c->hash, "%s", rc == DB_OK ? u.hash : r->srv->dummy_hash);
			rc = 0;
		}
	}
	cJSON_Delete(in);
	return rc;
}

/* The first call: refuse, or reserve the attempt and suspend the request
 * until the hasher has checked it. */
static MHD_RESULT
login_start(struct req *r, const unsigned char *body_sha)
{
	struct login_check c;
	char err[ERRSZ];
	int64_t retry_s;
	MHD_RESULT ret = MHD_YES;

	int rc;

	memset(&c, 0, sizeof c);
	if ((rc = parse(r, &c, err)) == -1)
		ret = serve_error(r, 400, "expected {\"user\": ..., \"password\": ...}");
	else if (rc != 0)
		ret = serve_db_error(r, "look up a user", err);
	else if (!serve_hasher_has_room(r->addr))
		ret = busy(r, 0);
	else if (serve_limit_reserve(r, c.name, &c.failure_id, &retry_s, err) != DB_OK)
		ret = serve_db_error(r, "login rate", err);
	else if (retry_s > 0) {
		log_warn("serve: login of '%s' from %s refused: too many failed attempts", c.name, r->addr);
		ret = refuse(r, 429, retry_s, "too many failed logins; try again later");
	} else {
		memcpy(c.body_sha, body_sha, sizeof c.body_sha);
		if (serve_hasher_submit(r->conn, &c) < 0)
			ret = busy(r, c.failure_id);
	}
	sodium_memzero(&c, sizeof c);
	return ret;
}

/* The second call: the hasher's answer becomes a session or a 401 (the
 * reserved attempt then stays counted as a failure). */
static MHD_RESULT
login_finish(struct req *r, const struct login_check *c)
{
	struct user_rec *u = &r->user_buf;
	char err[ERRSZ], cookie[256];
	struct resp_extra x = { 0 };
	int rc = c->good ? users_find(r->db, r->srv->conf, c->name, u, err) : USERS_NOT_FOUND;

	/* Looked up again: the user may have been removed, or its password
	 * changed, while the hasher checked the old one. */
	if (rc == DB_OK && strcmp(u->hash, c->hash) != 0)
		rc = USERS_NOT_FOUND;
	if (rc != DB_OK && rc != USERS_NOT_FOUND)
		return serve_db_error(r, "look up a user", err);
	if (rc != DB_OK) {
		log_warn("serve: failed login of '%s' from %s", c->name, r->addr);
		return serve_error(r, 401, "wrong user name or password");
	}
	serve_limit_release(r, c->failure_id);
	r->user = u;
	if (serve_session_open(r, u, c->remember, cookie, sizeof cookie, err) != DB_OK)
		return serve_db_error(r, "open a session", err);
	if (audit_add(r->db, u->name, r->addr, "login", 0, c->remember ? "remember me" : "", err) != DB_OK)
		log_error("serve: audit the login of %s: %s", u->name, err);
	x.set_cookie = cookie;
	log_info("serve: '%s' logged in from %s", u->name, r->addr);
	return serve_json_x(r, 200, serve_me_doc(r), &x);
}

/* POST /api/login {"user", "password", "remember"}: 200 and a session
 * cookie; 401 for a wrong name or password (the same answer for both);
 * 429 with Retry-After once the address, or the name from an address
 * that failed before, used up its attempts; 503 with Retry-After when
 * too many logins are being checked at once. */
MHD_RESULT
api_login(struct req *r)
{
	unsigned char sha[crypto_hash_sha256_BYTES];
	struct login_check c;
	MHD_RESULT ret;

	crypto_hash_sha256(
	    sha, (const unsigned char *)(r->body.data != NULL ? r->body.data : ""), r->body.len);
	if (!serve_hasher_take(r->conn, sha, &c))
		return login_start(r, sha);
	ret = login_finish(r, &c);
	sodium_memzero(&c, sizeof c);
	return ret;
}
