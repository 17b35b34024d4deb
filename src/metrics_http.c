/* metrics_http.c -- GET /metrics of `jobq work` (metrics_listen): the
 * registry of metrics.c and the process metrics, in the Prometheus text
 * format, served by libmicrohttpd on one thread of its own.
 *
 * The worker's loop never waits for it: a scrape reads the counters
 * with atomic loads and asks the database nothing, and the thread is
 * the only one that touches the connections.  With [serve]
 * metrics_token set (the dashboard's token: one secret for every
 * /metrics of a site) a request must carry it as a bearer token. */
#include "config.h"

#include <microhttpd.h>
#include <pthread.h>
#include <signal.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "listen.h"
#include "metrics.h"
#include "metrics_http.h"
#include "prom.h"

#if MHD_VERSION < 0x00097002
typedef int mhd_result;
#else
typedef enum MHD_Result mhd_result;
#endif

/* METRICS_HTTP_CONNS: a scraper or two, and room for a few probes;
 * more are refused. */
/* A request must arrive whole within this many seconds. */
#define METRICS_TIMEOUT_S 10

struct metrics_http {
	struct MHD_Daemon *d;
	int fd;
	char *token; /* NULL: none needed */
};

/* Queues the answer: body b with its type and the headers every answer
 * carries. */
static mhd_result
respond(struct MHD_Connection *c, unsigned status, const char *ctype, struct buf *b)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(b->len, b->data, MHD_RESPMEM_MUST_COPY);
	mhd_result ret;

	MHD_add_response_header(r, "Content-Type", ctype);
	MHD_add_response_header(r, "Cache-Control", "no-store");
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	if (status == 401)
		MHD_add_response_header(r, "WWW-Authenticate", "Bearer");
	if (status == 405)
		MHD_add_response_header(r, "Allow", "GET, HEAD");
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

/* libmicrohttpd's request callback: GET (or HEAD) /metrics, nothing
 * else.  A request body is never read. */
static mhd_result
on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method, const char *version,
    const char *upload, size_t *upload_len, void **con_cls)
{
	struct metrics_http *h = cls;
	struct buf b;
	mhd_result ret;
	unsigned status = 200;

	(void)version, (void)upload;
	if (*con_cls == NULL) {
		*con_cls = h; /* the headers are in: answer on the next call */
		return MHD_YES;
	}
	*upload_len = 0;
	buf_init(&b);
	if (strcmp(url, "/metrics") != 0)
		status = 404, buf_adds(&b, "only /metrics is served here\n");
	else if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
		status = 405, buf_adds(&b, "/metrics takes GET\n");
	else if (!prom_token_ok(h->token, MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization")))
		status = 401, buf_adds(&b, "/metrics needs Authorization: Bearer <metrics_token>\n");
	else {
		metrics_render(&b);
		prom_process(&b);
	}
	ret = respond(c, status, status == 200 ? PROM_CONTENT_TYPE : "text/plain; charset=utf-8", &b);
	buf_free(&b);
	return ret;
}

/* Starts serving /metrics on listen_at (ADDR:PORT; port 0: any free
 * one), with token (NULL: none) required.  Its thread starts with every
 * signal blocked, so that the worker's signals reach the worker's
 * thread.  The address bound goes to bound.  Returns NULL with err set
 * when the address cannot be had. */
struct metrics_http *
metrics_http_start(const char *listen_at, const char *token, char *bound, size_t boundlen, char *err)
{
	struct metrics_http *h;
	sigset_t all, old;
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;
	int fd;

	if (sodium_init() < 0)
		return errf(err, "libsodium failed to initialise"), NULL;
	if ((fd = listen_open(listen_at, bound, boundlen, err)) < 0)
		return NULL;
	flags |= MHD_is_feature_supported(MHD_FEATURE_EPOLL) == MHD_YES ? MHD_USE_EPOLL : MHD_USE_POLL;
	h = xcalloc(1, sizeof *h);
	h->fd = fd;
	h->token = token != NULL ? xstrdup(token) : NULL;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	h->d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, h, MHD_OPTION_LISTEN_SOCKET, fd,
	    MHD_OPTION_CONNECTION_LIMIT, (unsigned)METRICS_HTTP_CONNS, MHD_OPTION_CONNECTION_TIMEOUT,
	    (unsigned)METRICS_TIMEOUT_S, MHD_OPTION_END);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (h->d == NULL) {
		errf(err, "listen on %s: cannot start the HTTP server", listen_at);
		metrics_http_stop(h);
		return NULL;
	}
	return h;
}

/* Stops serving (a scrape in hand is finished first) and frees h. */
void
metrics_http_stop(struct metrics_http *h)
{
	if (h == NULL)
		return;
	if (h->d != NULL)
		MHD_stop_daemon(h->d);
	if (h->fd >= 0)
		close(h->fd);
	free(h->token);
	free(h);
}
