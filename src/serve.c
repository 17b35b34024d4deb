/* serve.c -- the dashboard's daemon, the top of its files: the route
 * table, the router and the libmicrohttpd daemon with its clean shutdown.
 * It calls down into the page handlers (serve_*.c) and the HTTP layer
 * under them (serve_http.c, serve_thread.c, serve_proxy.c, serve_head.c,
 * serve_conn.c: the connection limits and deadlines); none of those
 * calls back up.
 *
 * libmicrohttpd runs a small pool of threads; each answers its requests
 * one at a time with a database connection of its own (serve_thread.c),
 * so a slow page does not hold up the others.  The main thread only
 * waits for SIGTERM or SIGINT (blocked everywhere, read with sigwait: no
 * handler runs at all) and then stops the daemon, which finishes the
 * requests in hand. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "json.h"
#include "listen.h"
#include "log.h"
#include "serve.h"
#include "serve_alerts.h"
#include "serve_auditlog.h"
#include "serve_auth.h"
#include "serve_bulk.h"
#include "serve_conn.h"
#include "serve_enqueue.h"
#include "serve_failed.h"
#include "serve_groups.h"
#include "serve_hasher.h"
#include "serve_head.h"
#include "serve_http.h"
#include "serve_jobs.h"
#include "serve_login.h"
#include "serve_metrics.h"
#include "serve_overview.h"
#include "serve_stats.h"
#include "serve_proxy.h"
#include "serve_queues.h"
#include "serve_rate.h"
#include "serve_schedules.h"
#include "serve_search.h"
#include "serve_sessions.h"
#include "serve_users.h"
#include "serve_static.h"
#include "serve_thread.h"
#include "serve_workers.h"

/* The most body a request may carry: a logged-in POST up to 4 MiB (an
 * enqueue's payload); the one POST open to anyone (the login) 16 KiB, so
 * nobody can make us buffer megabytes before knowing who they are;
 * anything else none. */
#define SERVE_BODY_MAX (4 * 1024 * 1024)
#define SERVE_BODY_ANON (16 * 1024)

enum need {
	ANYONE,  /* pages, static files, the login itself */
	VIEWER,  /* a session of any role */
	ADMIN,   /* a session with role = admin */
	METRICS, /* open, or the metrics_token when one is set */
};

struct route {
	const char *method;
	const char *path; /* '#': a job id; a trailing '*': the rest */
	enum need need;
	MHD_RESULT (*handler)(struct req *r);
};

/* Every endpoint of the dashboard, its method and who may use it.  Every
 * POST needs the session's CSRF token (but /api/login, which opens the
 * session) and a JSON body. */
static const struct route routes[] = {
	{ "GET", "/", ANYONE, serve_page },
	{ "GET", "/login", ANYONE, serve_page },
	{ "GET", "/jobs", ANYONE, serve_page },
	{ "GET", "/jobs/#", ANYONE, serve_page },
	{ "GET", "/failed", ANYONE, serve_page },
	{ "GET", "/groups", ANYONE, serve_page },
	{ "GET", "/groups/*", ANYONE, serve_page },
	{ "GET", "/history", ANYONE, serve_page },
	{ "GET", "/workers", ANYONE, serve_page },
	{ "GET", "/enqueue", ANYONE, serve_page },
	{ "GET", "/schedules", ANYONE, serve_page },
	{ "GET", "/schedules/*", ANYONE, serve_page },
	{ "GET", "/sessions", ANYONE, serve_page },
	{ "GET", "/users", ANYONE, serve_page },
	{ "GET", "/audit", ANYONE, serve_page },
	{ "GET", "/charts", ANYONE, serve_page },
	{ "GET", "/static/*", ANYONE, serve_static },
	{ "GET", "/metrics", METRICS, serve_metrics },
	{ "POST", "/api/login", ANYONE, api_login },
	{ "POST", "/api/logout", VIEWER, api_logout },
	{ "GET", "/api/me", ANYONE, api_me },
	{ "GET", "/api/overview", VIEWER, api_overview },
	{ "GET", "/api/alerts", VIEWER, api_alerts },
	{ "GET", "/api/jobs", VIEWER, api_jobs },
	{ "GET", "/api/jobs/#", VIEWER, api_job },
	{ "GET", "/api/search", VIEWER, api_search },
	{ "GET", "/api/groups", VIEWER, api_groups },
	{ "GET", "/api/groups/*", VIEWER, api_group },
	{ "GET", "/api/stats", VIEWER, api_stats },
	{ "POST", "/api/jobs/#/run-now", ADMIN, api_job_run_now },
	{ "POST", "/api/jobs/#/release", ADMIN, api_job_release },
	{ "POST", "/api/jobs/#/delete", ADMIN, api_job_delete },
	{ "POST", "/api/jobs/#/cancel", ADMIN, api_job_cancel },
	{ "GET", "/api/failed", VIEWER, api_failed },
	{ "POST", "/api/failed/retry", ADMIN, api_failed_retry },
	{ "POST", "/api/failed/retry-edited", ADMIN, api_failed_retry_edited },
	{ "POST", "/api/failed/forget", ADMIN, api_failed_forget },
	{ "POST", "/api/failed/clear", ADMIN, api_failed_clear },
	{ "POST", "/api/bulk/count", ADMIN, api_bulk_count },
	{ "POST", "/api/bulk", ADMIN, api_bulk },
	{ "GET", "/api/workers", VIEWER, api_workers },
	{ "POST", "/api/queues/pause", ADMIN, api_queue_pause },
	{ "POST", "/api/queues/resume", ADMIN, api_queue_resume },
	{ "GET", "/api/enqueue", VIEWER, api_enqueue_form },
	{ "POST", "/api/enqueue", ADMIN, api_enqueue },
	{ "GET", "/api/schedules", VIEWER, api_schedules },
	{ "GET", "/api/schedules/history", VIEWER, api_schedule_history },
	{ "POST", "/api/schedules/enable", ADMIN, api_schedule_enable },
	{ "POST", "/api/schedules/disable", ADMIN, api_schedule_disable },
	{ "POST", "/api/schedules/run-now", ADMIN, api_schedule_run_now },
	{ "POST", "/api/schedules/add", ADMIN, api_schedule_add },
	{ "POST", "/api/schedules/edit", ADMIN, api_schedule_edit },
	{ "POST", "/api/schedules/remove", ADMIN, api_schedule_remove },
	{ "GET", "/api/cron", VIEWER, api_cron_preview },
	{ "GET", "/api/sessions", ADMIN, api_sessions },
	{ "POST", "/api/sessions/end", ADMIN, api_sessions_end },
	{ "POST", "/api/users/add", ADMIN, api_user_add },
	{ "POST", "/api/users/role", ADMIN, api_user_role },
	{ "POST", "/api/users/password", ADMIN, api_user_password },
	{ "POST", "/api/users/remove", ADMIN, api_user_remove },
	{ "GET", "/api/audit", ADMIN, api_audit },
};

/* Matches url against a route's path; fills r->id and r->rest. */
static int
path_match(const char *pat, const char *url, struct req *r)
{
	while (*pat != '\0') {
		if (*pat == '*') {
			r->rest = url;
			return 1;
		}
		if (*pat == '#') {
			const char *start = url;

			r->id = 0;
			while (*url >= '0' && *url <= '9' && url - start < 19)
				r->id = r->id * 10 + (uint64_t)(*url++ - '0');
			if (url == start || (*url >= '0' && *url <= '9') || r->id == 0)
				return 0;
			pat++;
			continue;
		}
		if (*pat++ != *url++)
			return 0;
	}
	return *url == '\0';
}

static int
is_json(struct req *r)
{
	const char *ct = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Content-Type");

	/* The type itself, then parameters (";charset=utf-8"), if any:
	 * "application/jsonx" is another type. */
	return ct != NULL && strncasecmp(ct, "application/json", 16) == 0 &&
	    (ct[16] == '\0' || ct[16] == ';' || ct[16] == ' ' || ct[16] == '\t');
}

/* Whether the route is the page shell or one of its files: compiled
 * into the binary, so it is served without the database.  A reload
 * while the database is down must still draw the page, whose banner
 * then says what is wrong (the API answers 503). */
static int
from_binary(const struct route *rt)
{
	return rt->handler == serve_page || rt->handler == serve_static;
}

/* A session over its API rate ([serve] api_rate, api_burst): 429 with
 * Retry-After and the same seconds in the JSON body. */
static MHD_RESULT
too_many(struct req *r, int64_t wait_s)
{
	struct resp_extra x = { 0 };
	cJSON *doc = cJSON_CreateObject();
	char msg[96];

	snprintf(msg, sizeof msg, "too many requests from this session; try again in %lld s", (long long)wait_s);
	cJSON_AddStringToObject(doc, "error", msg);
	ADD_NUM(doc, "retry_after", wait_s);
	x.retry_after_s = wait_s;
	return serve_json_x(r, 429, doc, &x);
}

/* Whether the body is one JSON object, as every POST's is: checked once
 * here, so that garbled input is refused before any handler changes
 * anything, and named as what it is rather than as a missing field. */
static int
body_is_object(struct req *r)
{
	cJSON *in = serve_body_json(r);

	cJSON_Delete(in);
	return in != NULL;
}

/* Whether the handler refuses a \u0000 in its body itself, in words of
 * its own (the field it is in, the status its page expects). */
static int
own_nul_check(const struct route *rt)
{
	return rt->handler == api_enqueue || rt->handler == api_failed_retry_edited;
}

/* Checks who asks before the handler runs: the database (503, but for
 * the pages themselves), session (401), the session's API rate (429),
 * CSRF token on a POST (403), role (403), a JSON object as a POST's
 * whole body, no string in it cut short by a \u0000 (400; 413 for too
 * big).  A POST from another
 * site can send neither our cookie (SameSite=Strict) nor a JSON content
 * type without a preflight we never grant. */
static MHD_RESULT
guard(struct req *r, const struct route *rt)
{
	int post = strcmp(rt->method, "POST") == 0, rc;
	int64_t wait_s;

	if (!from_binary(rt) && r->db == NULL && (r->db = serve_thread_db(r->srv)) == NULL)
		return serve_db_down(r);
	if (rt->need == VIEWER || rt->need == ADMIN) {
		if ((rc = r->user != NULL ? 0 : serve_session(r)) == 500)
			return serve_db_error(r, "session", "the session lookup failed");
		if (rc != 0)
			return serve_error(r, 401, "not logged in");
		if ((wait_s = serve_rate_take(r->srv->rate, r->session)) > 0)
			return too_many(r, wait_s);
		if (post && !serve_csrf_ok(r))
			return serve_error(r, 403, "missing or wrong CSRF token");
		if (rt->need == ADMIN && !r->user->admin)
			return serve_error(r, 403, "this needs the admin role");
	}
	if (post && !is_json(r))
		return serve_error(r, 400, "expected a JSON body (Content-Type: application/json)");
	if (post && !body_is_object(r))
		return serve_error(r, 400, "expected a JSON object as the body");
	/* cJSON ends a string at a NUL: {"user": "ada\u0000x"} would read as
	 * "ada", a filter or a name silently other than the one sent. */
	if (post && !own_nul_check(rt) && json_has_escaped_nul(r->body.data, r->body.len))
		return serve_error(
		    r, 400, "a string of the body holds \\u0000 (NUL), which no field may hold");
	return rt->handler(r);
}

/* With metrics_listen set, /metrics is served there and nowhere else,
 * and that listener serves nothing else. */
static int
served_here(const struct req *r, const struct route *rt)
{
	if (r->srv->conf->serve.metrics_listen == NULL)
		return 1;
	return r->metrics_listener == (rt->need == METRICS);
}

/* The route of r's method and path, or NULL; allow collects the
 * methods its path takes otherwise. */
static const struct route *
find_route(struct req *r, char *allow, size_t allowlen)
{
	const char *method = strcmp(r->method, "HEAD") == 0 ? "GET" : r->method;
	size_t i;

	*allow = '\0';
	for (i = 0; i < ARRAY_LEN(routes); i++) {
		if (!served_here(r, &routes[i]) || !path_match(routes[i].path, r->url, r))
			continue;
		if (strcmp(routes[i].method, method) == 0)
			return &routes[i];
		if (strstr(allow, routes[i].method) == NULL)
			snprintf(allow + strlen(allow), allowlen - strlen(allow), "%s%s", *allow ? ", " : "",
			    strcmp(routes[i].method, "GET") == 0 ? "GET, HEAD" : routes[i].method);
	}
	return NULL;
}

/* Finds the route: 404 for an unknown path, 405 (with Allow) for a
 * known path asked with another method. */
static MHD_RESULT
dispatch(struct req *r)
{
	char allow[64];
	const struct route *rt = find_route(r, allow, sizeof allow);

	if (rt != NULL)
		return guard(r, rt);
	if (*allow != '\0') {
		struct resp_extra x = { 0 };
		static const char body[] = "{\"error\":\"method not allowed\"}";

		x.allow = allow;
		return serve_respond(r, 405, "application/json; charset=utf-8", body, strlen(body), &x);
	}
	return serve_error(r, 404, "no such page");
}

#define SERVE_THREADS 4

/* One listening socket and what it serves: everything, or with
 * metrics_listen set, the main one all but /metrics and the metrics
 * one /metrics alone. */
struct listener {
	struct serve *srv;
	int metrics;
	int fd;
	char bound[128]; /* the address it listens on */
	struct MHD_Daemon *d;
	struct serve_conns *conns; /* per-address limit, request deadline */
	char *cert, *key;
};

/* libmicrohttpd's URI log callback: the first thing seen of each
 * request, with the URL still raw.  Makes the request (what the access
 * handler gets as *con_cls) and notes an encoded NUL, which decoding
 * would hide. */
static void *
on_uri(void *cls, const char *uri, struct MHD_Connection *conn)
{
	struct listener *l = cls;
	struct req *r = xcalloc(1, sizeof *r);

	r->srv = l->srv;
	r->metrics_listener = l->metrics;
	r->conn = conn;
	r->nul_in_url = serve_head_url_has_nul(uri);
	buf_init(&r->body);
	return r;
}

/* How much body r may carry (see SERVE_BODY_MAX); a POST that needs a
 * session has it checked here, before any of its body is read.  0, or
 * -1 when r was answered (*ret) already. */
static int
body_bound(struct req *r, MHD_RESULT *ret)
{
	char allow[64];
	const struct route *rt = find_route(r, allow, sizeof allow);
	int rc;

	r->body_max = 0;
	if (rt == NULL) /* 404 or 405, whatever the body */
		return *ret = dispatch(r), -1;
	if (strcmp(rt->method, "POST") != 0)
		return 0;
	if (rt->need == ANYONE || rt->need == METRICS) {
		r->body_max = SERVE_BODY_ANON;
		return 0;
	}
	if ((r->db = serve_thread_db(r->srv)) == NULL)
		return *ret = serve_db_down(r), -1;
	if ((rc = serve_session(r)) == 500)
		return *ret = serve_db_error(r, "session", "the session lookup failed"), -1;
	if (rc != 0)
		return *ret = serve_error(r, 401, "not logged in"), -1;
	r->body_max = SERVE_BODY_MAX;
	return 0;
}

/* The access handler's first call, with the whole head: refuses what
 * serve_head_check refuses, a request without a session whose route
 * needs one, and a declared body over its bound (413), all before any
 * body is read.  0 to go on, or -1 when r was answered (*ret). */
static int
on_head(struct req *r, MHD_RESULT *ret)
{
	const char *msg;
	unsigned status;

	r->head_checked = 1;
	serve_client_address(r);
	if ((status = serve_head_check(r, &msg)) != 0)
		return *ret = serve_error(r, status, msg), -1;
	if (body_bound(r, ret) < 0)
		return -1;
	if (serve_head_declared_length(r) > r->body_max)
		return *ret = serve_error(r, 413, "request body too large"), -1;
	return 0;
}

/* Takes one piece of r's body.  Past body_max (a chunked body, whose
 * length no header declared: on_head refused a declared one) the piece
 * and every later one is dropped, not kept: the request is answered 413
 * once the body has ended and is never acted on, however much of it
 * would parse.  libmicrohttpd takes an answer only before the body or
 * after it, never in the middle; a body that does not end is cut by the
 * request's deadline (serve_conn.c). */
static void
take_body(struct req *r, const char *piece, size_t len)
{
	if (!r->body_over && r->body.len + len > r->body_max) {
		log_info("serve: %s %s %s: chunked body over %zu bytes; the rest is dropped, the answer 413",
		    r->addr, r->method, r->url, r->body_max);
		r->body_over = 1;
		buf_free(&r->body);
		buf_init(&r->body);
	}
	if (!r->body_over)
		buf_add(&r->body, piece, len);
}

/* libmicrohttpd's access handler: called once with the headers, then
 * with each piece of the body, then once more with none; the request is
 * answered on that last call (413 for a chunked body past its bound:
 * take_body). */
static MHD_RESULT
on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method, const char *version,
    const char *upload, size_t *upload_size, void **con_cls)
{
	struct req *r = *con_cls;
	MHD_RESULT ret;

	(void)cls, (void)version;
	if (!r->head_checked) {
		r->url = url;
		r->method = method;
		return on_head(r, &ret) < 0 ? ret : MHD_YES;
	}
	if (*upload_size > 0) {
		take_body(r, upload, *upload_size);
		*upload_size = 0;
		return MHD_YES;
	}
	serve_conn_mark(conn, 1);
	if (r->body_over)
		return serve_error(r, 413, "request body too large");
	return dispatch(r); /* guard() connects, for what needs the database */
}

/* The request is over (answered, or its connection closed): frees it;
 * the connection's next request starts its deadline now. */
static void
on_completed(void *cls, struct MHD_Connection *conn, void **con_cls, enum MHD_RequestTerminationCode toe)
{
	struct req *r = *con_cls;

	(void)cls, (void)toe;
	serve_conn_mark(conn, 0);
	if (r == NULL)
		return;
	buf_free(&r->body);
	free(r);
	*con_cls = NULL;
}

static char *
slurp(const char *path, char *err)
{
	FILE *fp = fopen(path, "r");
	struct buf b;
	char chunk[4096];
	size_t n;

	if (fp == NULL)
		return errf(err, "open %s: %s", path, strerror(errno)), NULL;
	buf_init(&b);
	while ((n = fread(chunk, 1, sizeof chunk, fp)) > 0)
		buf_add(&b, chunk, n);
	fclose(fp);
	return buf_steal(&b);
}

/* Starts libmicrohttpd on l->fd: a pool of SERVE_THREADS threads for
 * the dashboard, its one polling thread for a metrics-only listener.
 * epoll (or poll) rather than select, which cannot watch an fd past
 * 1023, and a global limit of 4096 connections (512 for metrics) or what
 * the file limit leaves: with the per-address limit and the request
 * deadline of serve_conn.c, hundreds of slow clients leave room. */
static int
start_daemon(struct listener *l, char *err)
{
	struct serve *s = l->srv;
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG | MHD_ALLOW_SUSPEND_RESUME;
	struct MHD_OptionItem opts[8];
	size_t n = 0;

	if (s->tls) {
		if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES)
			return errf(err,
			           "tls_cert/tls_key: this libmicrohttpd was built without TLS; "
			           "put jobq serve behind a reverse proxy for HTTPS"),
			       -1;
		if ((l->cert = slurp(s->conf->serve.tls_cert, err)) == NULL ||
		    (l->key = slurp(s->conf->serve.tls_key, err)) == NULL)
			return -1;
		flags |= MHD_USE_TLS;
		opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_CERT, 0, l->cert };
		opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_KEY, 0, l->key };
	}
	flags |= MHD_is_feature_supported(MHD_FEATURE_EPOLL) == MHD_YES ? MHD_USE_EPOLL : MHD_USE_POLL;
	if (!l->metrics)
		opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_THREAD_POOL_SIZE, SERVE_THREADS, NULL };
	opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_TIMEOUT, 30, NULL };
	opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_LIMIT,
		l->metrics ? serve_conn_limit(512, 8) : serve_conn_limit(4096, 2), NULL };
	opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_END, 0, NULL };
	if ((l->conns = serve_conn_new(&s->conf->serve, l->metrics ? "metrics_listen" : "listen")) == NULL)
		return errf(err, "cannot start the connection reaper: out of resources"), -1;
	l->d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, l, MHD_OPTION_LISTEN_SOCKET, l->fd,
	    MHD_OPTION_URI_LOG_CALLBACK, on_uri, l, MHD_OPTION_NOTIFY_COMPLETED, on_completed, l,
	    MHD_OPTION_NOTIFY_CONNECTION, serve_conn_notify, l->conns, MHD_OPTION_ARRAY, opts,
	    MHD_OPTION_END);
	if (l->d == NULL)
		return errf(err, "cannot start the HTTP server on %s", l->bound), -1;
	return 0;
}

/* Whether fd listens on a loopback address only (127/8, ::1). */
static int
on_loopback(int fd)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;
	static const unsigned char v6_loop[16] = { [15] = 1 };

	if (getsockname(fd, (struct sockaddr *)&ss, &sl) < 0)
		return 0;
	if (ss.ss_family == AF_INET)
		return (ntohl(((struct sockaddr_in *)&ss)->sin_addr.s_addr) >> 24) == 127;
	return ss.ss_family == AF_INET6 &&
	    memcmp(((struct sockaddr_in6 *)&ss)->sin6_addr.s6_addr, v6_loop, 16) == 0;
}

/* A session cookie sent in clear over a network can be read on the way
 * and replayed: the dashboard speaks plain HTTP only on the loopback
 * (where a TLS proxy on the same host reaches it), unless the operator
 * says allow_plain_http = yes (a proxy on another host, a private
 * network).  metrics_listen carries no session and is exempt. */
static int
plain_http_ok(const struct listener *l, const char *at, char *err)
{
	const struct serve_conf *sc = &l->srv->conf->serve;

	if (l->metrics || l->srv->tls || sc->allow_plain_http || on_loopback(l->fd))
		return 1;
	errf(err,
	    "listen: plain HTTP on %s (not a loopback address) would send sessions in clear; "
	    "set tls_cert and tls_key, or (behind a TLS proxy) allow_plain_http = yes",
	    at);
	return 0;
}

/* Opens and starts one listener; -1 with err set (and nothing left
 * open) when it cannot. */
static int
listener_start(struct listener *l, struct serve *s, int metrics, const char *at, char *err)
{
	memset(l, 0, sizeof *l);
	l->srv = s;
	l->metrics = metrics;
	if ((l->fd = listen_open(at, l->bound, sizeof l->bound, err)) < 0)
		return -1;
	if (!plain_http_ok(l, at, err) || start_daemon(l, err) < 0) {
		close(l->fd);
		l->fd = -1;
		return -1;
	}
	if (metrics)
		log_info("serve: /metrics served on %s://%s", s->tls ? "https" : "http", l->bound);
	else
		log_info("serve: listening on %s://%s", s->tls ? "https" : "http", l->bound);
	return 0;
}

/* Stops a listener (the requests in hand are finished first). */
static void
listener_stop(struct listener *l)
{
	if (l->d != NULL)
		MHD_stop_daemon(l->d);
	if (l->fd >= 0)
		close(l->fd);
	serve_conn_free(l->conns);
	free(l->cert);
	free(l->key);
	memset(l, 0, sizeof *l);
	l->fd = -1;
}

/* Fills s, prepares logins and connects once, so that a wrong password
 * fails the start, not the first page.  0, or -1 with err set. */
static int
prepare(struct serve *s, const struct conf *c, char *err)
{
	struct db *probe;
	int rc;

	s->conf = c;
	/* The API speaks UTC; the page shows the configured zone (and UTC
	 * on hover), so the server needs no time zone tables. */
	s->tz = "+00:00";
	s->tls = c->serve.tls_cert != NULL;
	pthread_mutex_init(&s->db_mu, NULL);
	if (serve_auth_init(s) < 0)
		return errf(err, "libsodium failed to initialise"), -1;
	probe = db_new(&c->db);
	rc = db_connect(probe, 1, err) == DB_OK ? 0 : -1;
	db_free(probe);
	return rc;
}

/* Blocks the signals that stop the server (and HUP), to be read with
 * sigwait; called before the daemon's threads start, so they inherit the
 * mask and the signals reach sigwait() in wait_for_stop. */
static void
block_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGHUP); /* no reload yet: a HUP from a closing terminal is ignored */
	pthread_sigmask(SIG_BLOCK, set, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/* Starts the metrics listener (with metrics_listen set), then the main
 * one.  0, or -1 with err set. */
static int
start_listeners(
    struct serve *s, struct listener *main_l, struct listener *metrics_l, const char *listen_at, char *err)
{
	const struct conf *c = s->conf;

	if (c->serve.metrics_listen != NULL) {
		char merr[ERRSZ];

		if (listener_start(metrics_l, s, 1, c->serve.metrics_listen, merr) < 0) {
			/* "metrics_listen: ..." (cmd_serve reports a listen
			 * problem as a configuration error). */
			errf(err, "%s%s", strncmp(merr, "listen", 6) == 0 ? "metrics_" : "", merr);
			return -1;
		}
	}
	return listener_start(main_l, s, 0, listen_at, err);
}

/* Waits for SIGTERM or SIGINT (those of set, which are blocked). */
static void
wait_for_stop(const sigset_t *set)
{
	int sig = 0;

	while (sig != SIGTERM && sig != SIGINT)
		if (sigwait(set, &sig) != 0)
			break;
	log_info("serve: %s: stopping", signal_name(sig));
}

/* Serves until SIGTERM or SIGINT.  Returns 0, or -1 with err set when
 * the server could not start. */
int
serve_run(const struct conf *c, const char *listen_at, char *err)
{
	struct serve s = { 0 };
	struct listener main_l = { .fd = -1 }, metrics_l = { .fd = -1 };
	sigset_t set;
	int rc = -1;

	if (prepare(&s, c, err) < 0)
		return -1;
	serve_schedules_init(); /* before the request threads: see serve_schedules.c */
	if (serve_thread_init() < 0)
		return errf(err, "pthread_key_create: out of resources"), -1;
	block_signals(&set);
	s.rate = serve_rate_new(&c->serve);
	if (serve_overview_start(&s) < 0 || serve_stats_start(&s) < 0)
		errf(err, "cannot start the overview and statistics threads: out of resources");
	else if (start_listeners(&s, &main_l, &metrics_l, listen_at, err) == 0) {
		wait_for_stop(&set);
		rc = 0;
	}
	serve_hasher_stop(); /* no login left suspended */
	listener_stop(&main_l);
	listener_stop(&metrics_l);
	serve_overview_stop();
	serve_stats_stop();
	serve_thread_end();
	serve_rate_free(s.rate);
	return rc;
}
