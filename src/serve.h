/* serve.h -- what the parts of the dashboard (`jobq serve`) share: the
 * request being answered, the one function that sends every response,
 * sessions, and the handlers the route table names. */
#ifndef JOBQ_SERVE_H
#define JOBQ_SERVE_H

#include <cjson/cJSON.h>
#include <microhttpd.h>
#include <stddef.h>
#include <stdint.h>

#include "conf.h"
#include "db.h"

#if MHD_VERSION < 0x00097002
typedef int MHD_RESULT;
#else
typedef enum MHD_Result MHD_RESULT;
#endif

#define SERVE_BODY_MAX (4 * 1024 * 1024)
#define SERVE_COOKIE "jobq_session"

/* The server: what every thread of libmicrohttpd's pool shares, all of
 * it read only while it serves.  Each thread has its own database
 * connection (serve.c). */
struct serve {
	const struct conf *conf;
	const char *tz; /* of every time the API sends: UTC */
	int tls;
	char dummy_hash[160]; /* verified for unknown users: same timing */
};

/* One listening socket and what it serves: everything, or with
 * metrics_listen set, the main one all but /metrics and the metrics
 * one /metrics alone. */
struct listener {
	struct serve *srv;
	int metrics;
	int fd;
	char bound[128]; /* the address it listens on */
	struct MHD_Daemon *d;
	char *cert, *key;
};

/* One request, from its first byte to its response. */
struct req {
	struct serve *srv;
	struct db *db; /* this thread's connection */
	struct MHD_Connection *conn;
	const char *method, *url;
	struct buf body;
	int too_large;
	char addr[64]; /* the client's (serve_client_address) */
	int metrics_listener; /* asked on metrics_listen */
	/* set by the router */
	uint64_t id;      /* the number in /jobs/42 */
	const char *rest; /* what a trailing '*' matched */
	/* set once the session is known */
	const struct serve_user *user;
	char csrf[65];
};

/* serve_http.c: the one place a response is built and sent. */
struct resp_extra {
	const char *set_cookie; /* NULL: none */
	const char *allow;      /* 405: the methods the path takes */
	int64_t retry_after_s;  /* 429: > 0 */
	const char *server_timing; /* NULL: none */
};
MHD_RESULT serve_respond(struct req *r, unsigned status, const char *ctype, const void *body, size_t len,
    const struct resp_extra *x);
MHD_RESULT serve_json(struct req *r, unsigned status, cJSON *doc);
MHD_RESULT serve_json_x(struct req *r, unsigned status, cJSON *doc, const struct resp_extra *x);
MHD_RESULT serve_error(struct req *r, unsigned status, const char *msg);
MHD_RESULT serve_db_error(struct req *r, const char *what, const char *err);
cJSON *serve_body_json(struct req *r);
const char *serve_query(struct req *r, const char *key);

/* serve_auth.c: sessions, logins, CSRF. */
int serve_auth_init(struct serve *s);
int serve_session(struct req *r);
int serve_csrf_ok(struct req *r);
MHD_RESULT api_login(struct req *r);
MHD_RESULT api_logout(struct req *r);
MHD_RESULT api_me(struct req *r);

/* serve_www.c (generated from src/www/): the static files. */
struct www_file {
	const char *path; /* "/static/app.js" */
	const char *type;
	const char *data;
	size_t len;
};
extern const struct www_file www_files[];
extern const size_t www_nfiles;
MHD_RESULT serve_static(struct req *r);
MHD_RESULT serve_page(struct req *r);

/* serve_api.c: what the endpoints share. */
#define ADD_NUM(o, k, v) cJSON_AddNumberToObject((o), (k), (double)(v))
void serve_add_str_or_null(cJSON *o, const char *k, const char *v);
int serve_query_uint(struct req *r, const char *key, int64_t min, int64_t max, int64_t def, int64_t *out);
void serve_audit(struct req *r, const char *action, uint64_t job_id, const char *detail);

/* The JSON endpoints: serve_overview.c, serve_jobs.c, serve_failed.c,
 * serve_workers.c, serve_enqueue.c. */
MHD_RESULT api_overview(struct req *r);
int serve_overview_start(struct serve *s);
void serve_overview_stop(void);
void serve_overview_invalidate(void);
MHD_RESULT api_jobs(struct req *r);
MHD_RESULT api_job(struct req *r);
MHD_RESULT api_job_run_now(struct req *r);
MHD_RESULT api_job_release(struct req *r);
MHD_RESULT api_job_delete(struct req *r);
MHD_RESULT api_failed(struct req *r);
MHD_RESULT api_failed_retry(struct req *r);
MHD_RESULT api_failed_forget(struct req *r);
MHD_RESULT api_failed_clear(struct req *r);
MHD_RESULT api_workers(struct req *r);
MHD_RESULT api_enqueue_form(struct req *r);
MHD_RESULT api_enqueue(struct req *r);

/* serve_queues.c: pause and resume, as `jobq pause|resume`. */
MHD_RESULT api_queue_pause(struct req *r);
MHD_RESULT api_queue_resume(struct req *r);

/* serve_schedules.c: the Schedules page; every call into the cron
 * module's time-zone code is serialised by one mutex there. */
void serve_schedules_init(void);
MHD_RESULT api_schedules(struct req *r);
MHD_RESULT api_schedule_history(struct req *r);
MHD_RESULT api_schedule_enable(struct req *r);
MHD_RESULT api_schedule_disable(struct req *r);
MHD_RESULT api_schedule_run_now(struct req *r);
MHD_RESULT api_schedule_edit(struct req *r);
MHD_RESULT api_cron_preview(struct req *r);

/* serve_proxy.c: who asks, behind trusted_proxies too. */
void serve_client_address(struct req *r);

/* serve_metrics.c */
MHD_RESULT serve_metrics(struct req *r);

/* serve.c */
struct db *serve_thread_db(struct serve *s);
int serve_run(const struct conf *c, const char *listen, char *err);

#endif
