/* conf.h -- the loaded jobq.ini: one typed, read-only structure. */
#ifndef JOBQ_CONF_H
#define JOBQ_CONF_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "backoff.h"
#include "log.h"
#include "util.h"

#define NAME_MAX_LEN 64

enum reserve_mode { RESERVE_AUTO, RESERVE_SKIP_LOCKED, RESERVE_UPDATE };
enum tls_mode { TLS_OFF, TLS_ON, TLS_VERIFY };

/* A set of exit statuses 0..255. */
struct exit_set {
	uint8_t bits[32];
};

/* The resource limits a handler may set (limit_as, limit_cpu,
 * limit_nofile, limit_nproc), applied with setrlimit in the child. */
enum handler_limit { LIMIT_AS, LIMIT_CPU, LIMIT_NOFILE, LIMIT_NPROC, NLIMITS };

/* A [handler TYPE] section merged over the [worker] defaults. */
struct handler {
	char *type;
	int line;
	char *exec;  /* as written */
	char **argv; /* argv[0] resolved to an absolute path */
	char *queue;
	int64_t timeout_ms; /* 0: none */
	int64_t kill_grace_ms;
	unsigned max_attempts;
	struct backoff backoff;
	int64_t retry_until_ms; /* 0: no limit */
	int64_t expire_after_ms; /* a job due this long unstarted expires; 0: never */
	struct exit_set permanent_exit;
	struct exit_set retry_exit;
	char *permanent_stderr_src;
	char *retry_stderr_src;
	pcre2_code *permanent_stderr;
	pcre2_code *retry_stderr;
	char *workdir;
	char *user;
	char *group;
	uid_t uid;
	gid_t gid;
	int has_uid, has_gid;
	char **env; /* NAME=value, NULL-terminated */
	size_t nenv; /* entries of env */
	size_t stdout_limit;
	size_t stderr_limit;
	int stdout_limit_line, stderr_limit_line; /* of the keys, here or in [worker]; 0: not set */
	int workdir_line;
	/* limits[LIMIT_AS] in bytes, [LIMIT_CPU] in seconds, the others
	 * counts; 0: not set, the handler keeps the worker's own limit. */
	uint64_t limits[NLIMITS];
	int limit_lines[NLIMITS];
	char *on_success; /* a job of this type is enqueued when one of ours is done */
	int on_success_line;
	char *on_dead;       /* as written: run with the dead job on stdin (also in [worker]) */
	int on_dead_line;    /* of the key, here or in [worker] */
	char **on_dead_argv; /* argv[0] resolved */
	unsigned max_running;   /* 0: no limit (flow.c) */
	unsigned rate_count;    /* 0: no rate limit; else this many starts ... */
	int64_t rate_window_ms; /* ... in any window this long */
	/* mode = persistent (src/pool.c): long-lived processes that take
	 * jobs one after another; recycled after max_jobs jobs (0: never)
	 * or once their RSS passes max_memory bytes (0: never); an idle
	 * one is stopped after idle_timeout_ms (0: kept). */
	int persistent;
	unsigned max_jobs;
	uint64_t max_memory;
	int64_t idle_timeout_ms;
};

/* A [queue NAME] section's watchdogs (watchdog.c; only queues that set
 * one): max_wait, stale_alert, dead_alert. */
struct queue_watch {
	char *queue;
	int64_t max_wait_ms;    /* a job ready this long alerts; 0: no check */
	int64_t stale_ms;       /* a lease expired this long ago alerts; -1: no check */
	unsigned dead_count;    /* more dead jobs than this ... */
	int64_t dead_window_ms; /* ... failed in this window alerts; 0: no check */
};

/* A [queue NAME] section's max_running (only queues that set it). */
struct queue_limit {
	char *queue;
	unsigned max_running;
};

struct db_conf {
	char *host;
	unsigned port;
	char *socket;
	char *user;
	char *password;
	char *database;
	enum tls_mode tls;
	char *tls_ca;
	char *tls_cert;
	char *tls_key;
	int64_t connect_timeout_ms;
	int64_t read_timeout_ms;
};

int conf_db_host(const struct db_conf *c, size_t i, char *host, size_t n, unsigned *port, const char **why);

struct worker_conf {
	char **queues; /* served in this order */
	unsigned concurrency;
	int64_t poll_interval_ms;
	char *wakeup_dir; /* NULL: the default (wakeup.c); "off": no wakeups */
	int reserve_ahead; /* jobs reserved beside the running ones; -1: auto (worker_reserve.c) */
	int64_t reserve_ttl_ms;
	int64_t heartbeat_ms;
	enum reserve_mode reserve_mode;
	int reserve_mode_line; /* of the key (cmd_check.c names it); 0: not set */
	char *timezone;
	enum log_format log_format;
	enum log_level log_level;
	size_t max_payload;
	char **on_dead_argv; /* [worker] on_dead, for a dead job whose type has no [handler] */
	char **on_alert_argv; /* [worker] on_alert: the watchdogs' incidents (watchdog.c); NULL: none */
	char **env; /* [worker] env.NAME=value, NULL-terminated: on_alert's, and on_dead's above */
	int64_t keep_done_ms; /* finished jobs' runs are pruned past this age; 0: never */
	char *metrics_listen; /* ADDR:PORT of the worker's own /metrics (metrics_http.c); NULL: none */
	char *otlp_endpoint;  /* the OTLP/HTTP collector spans go to (otlp.c); NULL: none */
};

enum schedule_source { SCHEDULE_INI, SCHEDULE_DB };

#define SCHEDULE_CATCH_UP_MS (3600 * 1000LL) /* catch_up default: 1h */

/* catch_up = none | latest [D] | all [D]: after downtime, enqueue no
 * late fire, the latest one within D, or every one within D. */
enum catch_up { CATCH_UP_LATEST, CATCH_UP_NONE, CATCH_UP_ALL };

/* A [schedule NAME] section, or a row of jobq_schedules (see
 * schedules.h): when to enqueue which job. */
struct schedule {
	char *name;
	int line; /* 0 for a database schedule */
	enum schedule_source source;
	char *cron;
	char *type;
	char *payload; /* JSON */
	char *queue;
	int priority;
	char *timezone;      /* IANA name; the [worker] timezone when not given */
	int enabled;         /* as written; the database may switch it (schedules.c) */
	int ini_enabled;     /* an INI schedule's enabled as its file says */
	int overlap_allow;   /* 0: skip a fire while the last job is queued or running */
	int64_t catch_up_ms; /* a fire later than this is recorded as missed */
	enum catch_up catch_up_mode; /* which late fires are enqueued (scheduler.c) */
	int64_t alert_after_ms;      /* watchdog.c: a fire or its job this late alerts; 0: never */
	char *description;
	char *problem; /* a database schedule the INI no longer allows: why */
	char *version; /* a database schedule's updated_at as loaded (the fires check it) */
};

/* A dashboard user ([user NAME]). */
struct serve_user {
	char *name;
	char *password_hash; /* argon2id, as `jobq passwd` prints it */
	int admin;           /* role = admin; else viewer (read only) */
};

/* One entry of trusted_proxies: an address, or a network with its
 * prefix length (bits = 32 or 128 for a single address). */
struct serve_net {
	int family; /* AF_INET or AF_INET6 */
	unsigned char addr[16];
	unsigned bits;
};

/* The [serve] section: `jobq serve`, the dashboard. */
struct serve_conf {
	char *listen; /* ADDR:PORT */
	char *tls_cert, *tls_key;
	int64_t session_ttl_ms;
	int64_t remember_ttl_ms;
	unsigned login_rate_max; /* failed logins allowed per window ... */
	int64_t login_rate_window_ms;
	char *metrics_token; /* NULL: /metrics needs no token */
	int64_t overview_cache_ms; /* the overview snapshot's life; 0: none */
	char *metrics_listen;      /* ADDR:PORT of /metrics alone; NULL: on listen */
	struct serve_net *trusted_proxies; /* whose X-Forwarded-For is believed */
	size_t ntrusted_proxies;
	char *public_url;     /* the address people type; NULL: not said */
	int public_https;     /* public_url is https://: Secure cookies, HSTS */
	int allow_plain_http; /* plain HTTP on a non-loopback listen address */
	char **allowed_hosts; /* the Host names answered; NULL: any */
	unsigned api_rate_count;    /* API calls per session per window; 0: no limit */
	int64_t api_rate_window_ms; /* ... */
	unsigned api_burst;         /* calls a session may make at once */
	struct serve_user **users;
	size_t nusers;
};

struct nameset;

struct conf {
	char *path;
	struct db_conf db;
	struct worker_conf worker;
	char **queues; /* the queue whitelist, in file order */
	size_t nqueues;
	char **queue_descriptions; /* each queue's description, "" for none */
	struct queue_limit *queue_limits;
	size_t nqueue_limits;
	struct queue_watch *queue_watches;
	size_t nqueue_watches;
	struct handler **handlers;
	size_t nhandlers;
	struct nameset *queue_index;   /* queues by name: their index in queues */
	struct nameset *handler_index; /* handlers by type: their index in handlers */
	struct schedule **schedules;
	size_t nschedules;
	struct serve_conf serve;
};

/* conf_load flags */
#define CONF_CHECK_EXEC 0x1 /* handler programs must exist and be executable */

const char *conf_default_path(void);
struct conf *conf_load(const char *path, int flags, struct buf *errors, struct buf *warnings);
void conf_free(struct conf *c);
const struct handler *conf_handler(const struct conf *c, const char *type);
int conf_has_queue(const struct conf *c, const char *name);
const char *conf_queue_description(const struct conf *c, const char *name);
unsigned conf_queue_max_running(const struct conf *c, const char *queue);
int conf_has_flow_limits(const struct conf *c);
int conf_rate_parse(const char *s, unsigned *count, int64_t *window_ms, char *err);
const struct serve_user *conf_serve_user(const struct conf *c, const char *name);
int conf_valid_name(const char *s);
const char *conf_reserve_mode_name(enum reserve_mode m);
void conf_no_skip_locked(const struct conf *c, char *buf, size_t n);
int exit_set_has(const struct exit_set *s, int code);
int exit_set_parse(const char *s, struct exit_set *out, char *err);
const char *conf_limit_key(enum handler_limit l);
int conf_limit_resource(enum handler_limit l);
struct schedule *schedule_new(const char *name, enum schedule_source source);
int schedule_set(const struct conf *c, struct schedule *s, const char *key, const char *value, char *err);
int schedule_finish(const struct conf *c, struct schedule *s, char *err);
void schedule_free(struct schedule *s);

#endif
