/* conf_worker.c -- the [worker] section: the worker's own keys, its
 * defaults, and the checks that need the whole file (queues served,
 * reserve_ahead against flow limits, heartbeat against reserve_ttl).
 * The handler keys [worker] may also set are conf_handler.c's. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "conf_argmax.h"
#include "conf_handler.h"
#include "conf_ini.h"
#include "conf_serve.h"
#include "conf_worker.h"
#include "cron.h"
#include "nameset.h"
#include "otlp.h"

/* The [worker] defaults: what an empty section means. */
void
conf_worker_defaults(struct conf *c)
{
	c->worker.concurrency = 1;
	c->worker.poll_interval_ms = 250;
	c->worker.reserve_ahead = -1;
	c->worker.reserve_ttl_ms = 60000;
	c->worker.reserve_mode = RESERVE_AUTO;
	c->worker.timezone = xstrdup("UTC");
	c->worker.log_format = LOG_TEXT;
	c->worker.log_level = LOG_INFO;
	c->worker.max_payload = 1024 * 1024;
	c->worker.keep_done_ms = 7 * 24 * 3600 * 1000LL;
}

/* Writes into buf the error of a configuration whose reserve_mode =
 * skip-locked meets a server without SKIP LOCKED, at the line of that
 * key, the one to change (jobq check and jobq work say it alike). */
void
conf_no_skip_locked(const struct conf *c, char *buf, size_t n)
{
	snprintf(buf, n, "%s:%d: reserve_mode = skip-locked, but the server does not support SKIP LOCKED"
	                 " (auto or update work on it)",
	    c->path, c->worker.reserve_mode_line);
}

/* The name of a reserve mode, as reserve_mode takes it. */
const char *
conf_reserve_mode_name(enum reserve_mode m)
{
	switch (m) {
	case RESERVE_SKIP_LOCKED:
		return "skip-locked";
	case RESERVE_UPDATE:
		return "update";
	default:
		return "auto";
	}
}

/* queues = a, b: the queues served, in this order. */
static int
set_queues(struct loader *ld, struct worker_conf *w, const struct entry *e)
{
	struct nameset *seen;
	size_t i;

	ld->queues_line = e->line;
	strv_free(w->queues);
	if (split_list(e->value, &w->queues) <= 0) {
		ld_error(ld, e->line, "queues: expected a comma-separated list of queue names, not '%s'",
		    e->value);
		strv_free(w->queues); /* a blank list comes back allocated */
		w->queues = NULL;
		return -1;
	}
	seen = nameset_new();
	for (i = 0; w->queues[i] != NULL; i++)
		if (nameset_add(seen, w->queues[i], i) != NAMESET_NONE) {
			/* the order says which queue is served first: a name
			 * twice says two things */
			ld_error(ld, e->line, "queues: '%s' is listed twice", w->queues[i]);
			nameset_free(seen);
			return -1;
		}
	nameset_free(seen);
	return 0;
}

/* wakeup_dir = an absolute path, or off. */
static int
set_wakeup_dir(struct loader *ld, struct worker_conf *w, const struct entry *e)
{
	/* A socket's whole path must fit in sun_path (108 bytes). */
	if (strcmp(e->value, "off") != 0 && (e->value[0] != '/' || strlen(e->value) > 70)) {
		ld_error(ld, e->line,
		    "wakeup_dir: expected an absolute path of at most 70 bytes or off, not '%s'", e->value);
		return -1;
	}
	ld_str(&w->wakeup_dir, e->value);
	return 0;
}

/* reserve_ahead = auto or a count of jobs held beside the running ones. */
static int
set_reserve_ahead(struct loader *ld, struct worker_conf *w, const struct entry *e)
{
	int64_t v;

	ld->reserve_ahead_line = e->line;
	if (strcmp(e->value, "auto") == 0)
		w->reserve_ahead = -1;
	else if (ld_uint(ld, e, 0, 1024, &v) < 0)
		return -1;
	else
		w->reserve_ahead = (int)v;
	return 0;
}

/* reserve_mode = auto, skip-locked or update. */
static int
set_reserve_mode(struct loader *ld, struct worker_conf *w, const struct entry *e)
{
	if (strcmp(e->value, "auto") == 0)
		w->reserve_mode = RESERVE_AUTO;
	else if (strcmp(e->value, "skip-locked") == 0)
		w->reserve_mode = RESERVE_SKIP_LOCKED;
	else if (strcmp(e->value, "update") == 0)
		w->reserve_mode = RESERVE_UPDATE;
	else {
		ld_error(
		    ld, e->line, "reserve_mode: expected auto, skip-locked or update, not '%s'", e->value);
		return -1;
	}
	w->reserve_mode_line = e->line;
	return 0;
}

/* log_format and log_level; 1 when e is neither. */
static int
set_log(struct loader *ld, struct worker_conf *w, const struct entry *e)
{
	if (strcmp(e->key, "log_format") == 0) {
		if (log_format_parse(e->value, &w->log_format) < 0) {
			ld_error(ld, e->line, "log_format: expected text or json, not '%s'", e->value);
			return -1;
		}
	} else if (strcmp(e->key, "log_level") == 0) {
		if (log_level_parse(e->value, &w->log_level) < 0) {
			ld_error(ld, e->line, "log_level: expected debug, info, warn or error, not '%s'",
			    e->value);
			return -1;
		}
	} else
		return 1;
	return 0;
}

/* keep_done = 7d: how long a finished job stays (as its runs); 0, or 1s
 * and more. */
static int
set_keep_done(struct loader *ld, struct worker_conf *w, const struct entry *e)
{
	if (ld_duration(ld, e, &w->keep_done_ms, 0) < 0)
		return -1;
	if (w->keep_done_ms > 0 && w->keep_done_ms < 1000) {
		ld_error(ld, e->line, "keep_done: '%s' is too short (0 keeps every finished job, else at least 1s)",
		    e->value);
		return -1;
	}
	return 0;
}

/* max_payload = 1M: from 2 bytes ({}, the smallest payload) to 1G (the
 * largest statement a server takes: max_allowed_packet's ceiling). */
static int
set_max_payload(struct loader *ld, struct worker_conf *w, const struct entry *e)
{
	if (ld_size(ld, e, &w->max_payload) < 0)
		return -1;
	if (w->max_payload < 2 || w->max_payload > (size_t)1 << 30) {
		ld_error(ld, e->line, "max_payload: '%s' is out of range (2 to 1G)", e->value);
		return -1;
	}
	return 0;
}

/* timezone = Europe/Paris: the zone commands print times in and
 * schedules default to; opened here so that a bad one is reported at its
 * line by `jobq check`, not by each command that prints a time. */
static int
set_timezone(struct loader *ld, struct worker_conf *w, const struct entry *e)
{
	char err[ERRSZ];
	struct cron_zone *z = cron_zone_open(e->value, err);

	if (z == NULL) {
		ld_error(ld, e->line, "timezone: %s", err);
		return -1;
	}
	cron_zone_free(z);
	ld_str(&w->timezone, e->value);
	return 0;
}

/* otlp_endpoint = http://collector:4318: where the worker sends its
 * spans (otlp.c adds /v1/traces); checked here so that `jobq check`
 * reports a bad one. */
static void
set_otlp_endpoint(struct loader *ld, struct worker_conf *w, const struct entry *e)
{
	char err[ERRSZ];

	if (otlp_endpoint_check(e->value, err) < 0)
		ld_error(ld, e->line, "otlp_endpoint: %s, not '%s'", err, e->value);
	ld_str(&w->otlp_endpoint, e->value);
}

/* Applies one of the worker's own keys.  Returns 0 when applied, 1 when
 * e is not one of them, -1 when bad (reported). */
static int
worker_set(struct loader *ld, struct conf *c, const struct entry *e)
{
	struct worker_conf *w = &c->worker;
	const char *k = e->key;
	int64_t v;

	if (strcmp(k, "queues") == 0)
		return set_queues(ld, w, e);
	else if (strcmp(k, "concurrency") == 0) {
		if (ld_uint(ld, e, 1, 1024, &v) < 0)
			return -1;
		w->concurrency = (unsigned)v;
	} else if (strcmp(k, "poll_interval") == 0)
		return ld_duration(ld, e, &w->poll_interval_ms, 10);
	else if (strcmp(k, "wakeup_dir") == 0)
		return set_wakeup_dir(ld, w, e);
	else if (strcmp(k, "reserve_ahead") == 0)
		return set_reserve_ahead(ld, w, e);
	else if (strcmp(k, "reserve_ttl") == 0)
		return ld_duration(ld, e, &w->reserve_ttl_ms, 1000);
	else if (strcmp(k, "heartbeat") == 0) {
		ld->heartbeat_line = e->line;
		return ld_duration(ld, e, &w->heartbeat_ms, 100);
	} else if (strcmp(k, "reserve_mode") == 0)
		return set_reserve_mode(ld, w, e);
	else if (strcmp(k, "timezone") == 0)
		return set_timezone(ld, w, e);
	else if (strcmp(k, "max_payload") == 0)
		return set_max_payload(ld, w, e);
	else if (strcmp(k, "keep_done") == 0)
		return set_keep_done(ld, w, e);
	else if (strcmp(k, "metrics_listen") == 0)
		conf_serve_listen_addr(ld, e, &w->metrics_listen, 1); /* the token is [serve] metrics_token */
	else if (strcmp(k, "otlp_endpoint") == 0)
		set_otlp_endpoint(ld, w, e);
	else
		return set_log(ld, w, e);
	return 0;
}

/* A key [worker] does not take.  The [handler TYPE] keys that belong to
 * one type (its program, queue, next step and flow limits) have no
 * default: say so, rather than call a documented key unknown. */
static void
worker_unknown_key(struct loader *ld, const struct section *s, const struct entry *e)
{
	static const char *const per_type[] = { "exec", "queue", "on_success", "max_running", "rate" };
	size_t i;

	for (i = 0; i < ARRAY_LEN(per_type); i++)
		if (strcmp(e->key, per_type[i]) == 0) {
			ld_error(ld, e->line, "%s: a key of [handler TYPE] only, with no [worker] default",
			    e->key);
			return;
		}
	ld_unknown_key(ld, s, e);
}

/* [worker]: its own keys into c->worker, the handler keys into
 * defaults (for every [handler TYPE]). */
void
conf_worker_load(struct loader *ld, struct conf *c, const struct section *s, struct handler *defaults)
{
	int alert_line = 0;
	size_t i;

	for (i = 0; i < s->nentries; i++) {
		const struct entry *e = &s->entries[i];

		if (strcmp(e->key, "on_alert") == 0) {
			/* the watchdogs' program (worker_watch.c): the worker's own */
			strv_free(c->worker.on_alert_argv);
			c->worker.on_alert_argv = conf_handler_program(ld, defaults, e);
			alert_line = e->line;
		} else if (worker_set(ld, c, e) == 1 && conf_handler_set(ld, defaults, e) == 1)
			worker_unknown_key(ld, s, e);
	}
	conf_handler_index_env(ld, defaults);
	/* run as the worker, with [worker]'s env.NAME keys (alert.c), which
	 * may come after them: checked as a whole once all are read */
	if (c->worker.on_alert_argv != NULL)
		conf_argmax_check(
		    ld, alert_line, "on_alert", c->worker.on_alert_argv, defaults->env, geteuid(), ARGMAX_ALERT);
	if (defaults->on_dead_argv != NULL)
		conf_argmax_check(ld, defaults->on_dead_line, "on_dead", defaults->on_dead_argv, defaults->env,
		    geteuid(), ARGMAX_ALERT);
}

/* max_jobs, max_memory and idle_timeout in [worker] are defaults for
 * persistent handlers: with none configured they would be accepted and
 * do nothing, so they are refused. */
void
conf_worker_check_mode_keys(struct loader *ld, const struct conf *c, const struct section *s)
{
	size_t i;

	for (i = 0; i < c->nhandlers; i++)
		if (c->handlers[i]->persistent)
			return;
	for (i = 0; i < s->nentries; i++) {
		const char *k = s->entries[i].key;

		if (strcmp(k, "max_jobs") == 0 || strcmp(k, "max_memory") == 0 ||
		    strcmp(k, "idle_timeout") == 0)
			ld_error(
			    ld, s->entries[i].line, "%s: only for mode = persistent, and no handler is", k);
	}
}

/* Refuses queues that name a queue with no [queue NAME] section: one
 * line for the key, naming the first and counting the others (a list
 * of names from another file would otherwise print a line each). */
static void
check_queues_known(struct loader *ld, const struct conf *c)
{
	const char *first = NULL;
	size_t i, more = 0;

	for (i = 0; c->worker.queues[i] != NULL; i++)
		if (!conf_has_queue(c, c->worker.queues[i])) {
			if (first == NULL)
				first = c->worker.queues[i];
			else
				more++;
		}
	if (first == NULL)
		return;
	if (more == 0)
		ld_error(ld, ld->queues_line, "queues: unknown queue '%s' (no [queue %s] section)", first, first);
	else
		ld_error(ld, ld->queues_line, "queues: unknown queue '%s' (no [queue %s] section), and %zu more",
		    first, first, more);
}

/* Once everything is loaded: fills in the queues served (all, when not
 * given) and the heartbeat (when not given), and checks them. */
void
conf_worker_validate(struct loader *ld, struct conf *c)
{
	size_t i;

	if (c->worker.queues == NULL) {
		size_t n = strv_len(c->queues);

		c->worker.queues = xcalloc(n + 1, sizeof *c->worker.queues);
		for (i = 0; i < n; i++)
			c->worker.queues[i] = xstrdup(c->queues[i]);
	}
	check_queues_known(ld, c);
	/* A job held ahead counts as running for max_running, and its start
	 * (after the claim that logged it for rate) is late: with limits,
	 * only auto (which then holds none) or 0. */
	if (c->worker.reserve_ahead > 0 && conf_has_flow_limits(c))
		ld_error(ld, ld->reserve_ahead_line,
		    "reserve_ahead: cannot hold jobs ahead with max_running or rate limits configured (use "
		    "auto or 0)");
	if (c->worker.heartbeat_ms == 0) {
		c->worker.heartbeat_ms = c->worker.reserve_ttl_ms / 3;
		if (c->worker.heartbeat_ms > 10000)
			c->worker.heartbeat_ms = 10000;
	} else if (c->worker.heartbeat_ms * 2 > c->worker.reserve_ttl_ms)
		ld_error(ld, ld->heartbeat_line, "heartbeat: must be at most half of reserve_ttl");
}

/* Frees what [worker] and its defaults allocated. */
void
conf_worker_free(struct conf *c)
{
	strv_free(c->worker.queues);
	strv_free(c->worker.on_dead_argv);
	strv_free(c->worker.on_alert_argv);
	strv_free(c->worker.env);
	free(c->worker.timezone);
	free(c->worker.wakeup_dir);
	free(c->worker.metrics_listen);
	free(c->worker.otlp_endpoint);
}
