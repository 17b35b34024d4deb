/* serve_http.h -- the HTTP layer of the dashboard (`jobq serve`), below
 * every page handler: the server every thread shares, the request being
 * answered, the one function that sends every response (serve_http.c)
 * and the JSON and query-string helpers around it.  The handlers
 * (serve_*.c) include this; the route table (serve.c) sits on top. */
#ifndef JOBQ_SERVE_HTTP_H
#define JOBQ_SERVE_HTTP_H

#include <cjson/cJSON.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "conf.h"
#include "db.h"
#include "users.h"

#if MHD_VERSION < 0x00097002
typedef int MHD_RESULT;
#else
typedef enum MHD_Result MHD_RESULT;
#endif

/* The server: what every thread of libmicrohttpd's pool shares, all of
 * it read only while it serves but the database's state (under db_mu,
 * through serve_db_mark).  Each thread has its own database connection
 * (serve_thread.c). */
struct serve {
	const struct conf *conf;
	const char *tz; /* of every time the API sends: UTC */
	int tls;
	char dummy_hash[160]; /* verified for unknown users: same timing */
	pthread_mutex_t db_mu;
	time_t db_down_since; /* the first failure of this outage; 0: up */
	struct serve_rate *rate; /* the API limit per session; NULL: none */
};

/* One request, from its first byte to its response. */
struct req {
	struct serve *srv;
	struct db *db; /* this thread's connection */
	struct MHD_Connection *conn;
	const char *method, *url;
	struct buf body;
	size_t body_max;      /* the most body this request may carry */
	int body_over;        /* a chunked body passed body_max: 413 */
	int nul_in_url;       /* the raw URL holds %00 (refused: 400) */
	int head_checked;     /* the access handler saw the head */
	int https;            /* reached over HTTPS (serve_proxy.c) */
	char addr[64];        /* the client's (serve_client_address) */
	/* What the login limit counts it as: addr, or for IPv6 its /64, the
	 * least one host is given (serve_client_address) */
	char limit_addr[64];
	int metrics_listener; /* asked on metrics_listen */
	/* set by the router */
	uint64_t id;      /* the number in /jobs/42 */
	const char *rest; /* what a trailing '*' matched */
	/* set once the session is known */
	const struct user_rec *user; /* NULL, or &user_buf */
	struct user_rec user_buf;
	char csrf[65];
	char session[65]; /* the session's token hash: its key in memory */
};

int serve_secure(const struct req *r);

/* The one place a response is built and sent. */
struct resp_extra {
	const char *set_cookie;    /* NULL: none */
	const char *allow;         /* 405: the methods the path takes */
	int64_t retry_after_s;     /* 429: > 0 */
	const char *server_timing; /* NULL: none */
};
MHD_RESULT serve_respond(struct req *r, unsigned status, const char *ctype, const void *body, size_t len,
    const struct resp_extra *x);
MHD_RESULT serve_json(struct req *r, unsigned status, cJSON *doc);
MHD_RESULT serve_json_x(struct req *r, unsigned status, cJSON *doc, const struct resp_extra *x);
MHD_RESULT serve_error(struct req *r, unsigned status, const char *msg);
MHD_RESULT serve_db_error(struct req *r, const char *what, const char *err);
MHD_RESULT serve_db_down(struct req *r);
MHD_RESULT serve_db_unsure(struct req *r, const char *what, const char *err);
MHD_RESULT serve_write_error(struct req *r, const char *what, const char *err);
int serve_reconnect_unsure(struct req *r, int rc, int *unsure);
void serve_db_mark(struct serve *s, int up, const char *why);
time_t serve_db_down_since(struct serve *s);

/* What the JSON endpoints read and write. */
#define ADD_NUM(o, k, v) cJSON_AddNumberToObject((o), (k), (double)(v))
void serve_add_str_or_null(cJSON *o, const char *k, const char *v);
cJSON *serve_body_json(struct req *r);
const char *serve_query(struct req *r, const char *key);
int serve_query_time(struct req *r, const char *key, char *buf, size_t len, const char **out);
int serve_query_uint(struct req *r, const char *key, int64_t min, int64_t max, int64_t def, int64_t *out);

#endif
