/* serve_http.c -- the one function that sends every response of `jobq
 * serve`, so no route can forget a security header, and the small
 * helpers around it (JSON out, JSON in, query strings).  The bottom of
 * the dashboard: every page handler calls down into it, it calls none. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "isotime.h"
#include "serve_http.h"

/* Whether cookies must be Secure and responses carry HSTS: the request
 * came over HTTPS (jobq's own TLS, an https public_url, or a trusted
 * proxy's X-Forwarded-Proto: https; serve_client_address decides), so
 * the browser must never send the session over plain HTTP, not even to
 * a port-80 redirect. */
int
serve_secure(const struct req *r)
{
	return r->https;
}

/* Sends status with body (copied) and the headers every response
 * carries: a CSP that allows only our own files (no inline script or
 * style), no framing, no MIME sniffing, no referrer, no caching of
 * data.  x adds a cookie, an Allow list or a Retry-After. */
MHD_RESULT
serve_respond(struct req *r, unsigned status, const char *ctype, const void *body, size_t len,
    const struct resp_extra *x)
{
	struct MHD_Response *resp;
	MHD_RESULT ret;

	resp = MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
	if (resp == NULL)
		fatal("serve: out of memory building a response");
	MHD_add_response_header(resp, "Content-Type", ctype);
	MHD_add_response_header(resp, "Content-Security-Policy",
	    "default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'");
	MHD_add_response_header(resp, "X-Frame-Options", "DENY");
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(resp, "Referrer-Policy", "no-referrer");
	MHD_add_response_header(resp, "Cache-Control", "no-store");
	if (serve_secure(r))
		MHD_add_response_header(resp, "Strict-Transport-Security", "max-age=31536000");
	if (x != NULL && x->set_cookie != NULL)
		MHD_add_response_header(resp, "Set-Cookie", x->set_cookie);
	if (x != NULL && x->allow != NULL)
		MHD_add_response_header(resp, "Allow", x->allow);
	if (x != NULL && x->server_timing != NULL)
		MHD_add_response_header(resp, "Server-Timing", x->server_timing);
	if (x != NULL && x->retry_after_s > 0) {
		char v[32];

		snprintf(v, sizeof v, "%lld", (long long)x->retry_after_s);
		MHD_add_response_header(resp, "Retry-After", v);
	}
	ret = MHD_queue_response(r->conn, status, resp);
	MHD_destroy_response(resp);
	log_debug("serve: %s %s %s %u", r->addr, r->method, r->url, status);
	return ret;
}

/* The JSON text with '<', '>' and '&' written as \u escapes (they can
 * stand only inside strings): even a browser that took the answer for
 * HTML would find no markup in it. */
static void
json_safe(struct buf *out, const char *text)
{
	for (; *text != '\0'; text++)
		if (*text == '<')
			buf_adds(out, "\\u003c");
		else if (*text == '>')
			buf_adds(out, "\\u003e");
		else if (*text == '&')
			buf_adds(out, "\\u0026");
		else
			buf_addc(out, *text);
}

/* Sends doc (and frees it). */
MHD_RESULT
serve_json(struct req *r, unsigned status, cJSON *doc)
{
	return serve_json_x(r, status, doc, NULL);
}

/* Sends doc (and frees it) with the extras of x. */
MHD_RESULT
serve_json_x(struct req *r, unsigned status, cJSON *doc, const struct resp_extra *x)
{
	char *text = cJSON_PrintUnformatted(doc);
	struct buf b;
	MHD_RESULT ret;

	cJSON_Delete(doc);
	if (text == NULL)
		fatal("serve: out of memory printing JSON");
	buf_init(&b);
	json_safe(&b, text);
	free(text);
	ret = serve_respond(r, status, "application/json; charset=utf-8", b.data, b.len, x);
	buf_free(&b);
	return ret;
}

/* {"error": msg} with status: a short sentence for the person. */
MHD_RESULT
serve_error(struct req *r, unsigned status, const char *msg)
{
	cJSON *doc = cJSON_CreateObject();

	cJSON_AddStringToObject(doc, "error", msg);
	return serve_json(r, status, doc);
}

/* Records whether the database answers: the first failure of an outage
 * notes its time (what the dashboard's banner shows as "since") and logs
 * once, with why (NULL: not known); the first success after it logs
 * the recovery.  Called by every
 * thread that connects (serve_thread_db) and by serve_db_error. */
void
serve_db_mark(struct serve *s, int up, const char *why)
{
	time_t was;

	pthread_mutex_lock(&s->db_mu);
	was = s->db_down_since;
	if (up)
		s->db_down_since = 0;
	else if (was == 0)
		s->db_down_since = time(NULL);
	pthread_mutex_unlock(&s->db_mu);
	if (up && was != 0)
		log_info("serve: the database answers again (down for %llds)", (long long)(time(NULL) - was));
	else if (!up && was == 0)
		log_error("serve: the database cannot be reached (%s); API calls answer 503 until it can",
		    why != NULL ? why : "connection lost");
}

/* When the current outage began; 0 when the database answered last. */
time_t
serve_db_down_since(struct serve *s)
{
	time_t t;

	pthread_mutex_lock(&s->db_mu);
	t = s->db_down_since;
	pthread_mutex_unlock(&s->db_mu);
	return t;
}

/* 503 with {"error", "db_down_since"} (UTC, as every API time) and a
 * Retry-After: the database cannot be reached, which is nobody's fault
 * in the request, and the page says so in a banner rather than a
 * generic error.  Marks the database down if nobody had yet. */
MHD_RESULT
serve_db_down(struct req *r)
{
	struct resp_extra x = { 0 };
	cJSON *doc = cJSON_CreateObject();
	char since[32] = "";
	struct tm tm;
	time_t t;

	serve_db_mark(r->srv, 0, NULL);
	if ((t = serve_db_down_since(r->srv)) != 0 && gmtime_r(&t, &tm) != NULL)
		strftime(since, sizeof since, "%Y-%m-%d %H:%M:%S", &tm);
	cJSON_AddStringToObject(doc, "error", "the database cannot be reached");
	serve_add_str_or_null(doc, "db_down_since", *since ? since : NULL);
	x.retry_after_s = 2;
	return serve_json_x(r, 503, doc, &x);
}

/* A database failure: the detail goes to the log, the client learns
 * only that it failed: 503 (serve_db_down) when the connection was lost
 * (db.c closes a connection whose server is gone), 500 otherwise. */
MHD_RESULT
serve_db_error(struct req *r, const char *what, const char *err)
{
	log_error("serve: %s %s: %s: %s", r->method, r->url, what, err);
	if (r->db == NULL || !db_connected(r->db))
		return serve_db_down(r);
	return serve_error(r, 500, "internal error (the server log has the detail)");
}

/* The answer to an action whose change the server may have applied
 * though its answer was lost (the connection dropped after COMMIT, or
 * after a statement that commits by itself, was sent: db_unsure): 504,
 * as a gateway whose upstream never answered, with {"error", "unsure":
 * true}.  Not a 503: that invites the same request again, and this one
 * may be done already; the person must look first.  The detail goes to
 * the log. */
MHD_RESULT
serve_db_unsure(struct req *r, const char *what, const char *err)
{
	cJSON *doc = cJSON_CreateObject();

	log_error("serve: %s %s: %s: %s (its answer was lost: it may have been applied)", r->method, r->url,
	    what, err);
	cJSON_AddStringToObject(doc, "error",
	    "the database's answer was lost: the change may have been applied; reload and look before "
	    "trying again");
	cJSON_AddBoolToObject(doc, "unsure", 1);
	return serve_json(r, 504, doc);
}

/* A failed write of an action (its change, its COMMIT): serve_db_unsure
 * when the answer to what commits was lost (db_unsure), else as
 * serve_db_error.  Call it before any other statement on r->db: the
 * next one forgets. */
MHD_RESULT
serve_write_error(struct req *r, const char *what, const char *err)
{
	if (r->db != NULL && db_unsure(r->db))
		return serve_db_unsure(r, what, err);
	return serve_db_error(r, what, err);
}

/* After a write that ended with rc: *unsure says whether its answer was
 * lost when the server may have applied it (db_unsure).  On any lost
 * connection r's connection is made again, and 1 says the caller may try
 * once more: when unsure, a second try that finds the first's work (or
 * a read) tells whether the change took before it answers
 * serve_db_unsure; when not, nothing was applied and the second try
 * simply makes the change.  0 when the connection was not lost or the
 * server cannot be reached. */
int
serve_reconnect_unsure(struct req *r, int rc, int *unsure)
{
	char err[ERRSZ];

	*unsure = rc == DB_EGONE && r->db != NULL && db_unsure(r->db);
	return rc == DB_EGONE && r->db != NULL && db_connect(r->db, 1, err) == DB_OK;
}

/* Adds v as a string, or null when v is NULL. */
void
serve_add_str_or_null(cJSON *o, const char *k, const char *v)
{
	if (v != NULL)
		cJSON_AddStringToObject(o, k, v);
	else
		cJSON_AddNullToObject(o, k);
}

/* The request body as a JSON object, or NULL when it is not one.  The
 * object must be the whole body (but white space): cJSON stops at the
 * end of the first value, and `{"ids": [1]} garbage` is not JSON. */
cJSON *
serve_body_json(struct req *r)
{
	const char *text = r->body.data ? r->body.data : "", *end = NULL;
	cJSON *doc = cJSON_ParseWithLengthOpts(text, r->body.len, &end, 0);

	while (end != NULL && end < text + r->body.len &&
	    (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n'))
		end++;
	if (doc != NULL && (!cJSON_IsObject(doc) || end != text + r->body.len)) {
		cJSON_Delete(doc);
		doc = NULL;
	}
	return doc;
}

/* A query-string argument; NULL when absent or empty. */
const char *
serve_query(struct req *r, const char *key)
{
	const char *v = MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, key);

	return v != NULL && *v != '\0' ? v : NULL;
}

/* A whole number from the query string in [min, max]; def when absent;
 * -1 when malformed. */
int
serve_query_uint(struct req *r, const char *key, int64_t min, int64_t max, int64_t def, int64_t *out)
{
	const char *v = serve_query(r, key);

	*out = def;
	return v == NULL ? 0 : str_to_int64(v, min, max, out);
}

/* A time filter (since, until) in UTC, parsed as the command line
 * parses times (isotime: ISO 8601 with an offset, or UTC) into buf.  0
 * when absent or empty (*out NULL) or parsed (*out = buf); -1 when it
 * does not parse or falls outside what the database can store. */
int
serve_query_time(struct req *r, const char *key, char *buf, size_t len, const char **out)
{
	const char *v = serve_query(r, key);
	char err[ERRSZ];

	*out = NULL;
	if (v == NULL || *v == '\0')
		return 0;
	if (isotime_to_utc(v, buf, len, err) != 0)
		return -1;
	*out = buf;
	return 0;
}
