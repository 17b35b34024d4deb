/* conf_flow.c -- the flow-control keys of the INI: max_running and rate
 * in [handler TYPE], max_running in [queue NAME].  What they do at claim
 * time is in flow.c. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "conf_flow.h"
#include "conf_ini.h"
#include "duration.h"

/* The largest max_running and rate count: far above any real fleet,
 * small enough that sums over them cannot overflow. */
#define FLOW_MAX 1000000

/* Parses "N/s", "N/m", "N/h", "N/d" or "N/DURATION" ("100/10m"): at most
 * N starts in any window of that length.  A bare unit means one of it, as
 * a person reads "500/d"; DURATION alone needs its count ("1d").  0 on
 * success, else -1 with err. */
int
conf_rate_parse(const char *s, unsigned *count, int64_t *window_ms, char *err)
{
	const char *slash = strchr(s, '/');
	char num[24];
	int64_t n;

	if (slash == NULL || (size_t)(slash - s) >= sizeof num) {
		errf(err, "expected COUNT/s, COUNT/m, COUNT/h, COUNT/d or COUNT/DURATION, not '%s'", s);
		return -1;
	}
	memcpy(num, s, (size_t)(slash - s));
	num[slash - s] = '\0';
	if (str_to_int64(num, 1, FLOW_MAX, &n) < 0) {
		errf(err, "bad count '%s' in '%s' (expected a whole number from 1 to %d)", num, s, FLOW_MAX);
		return -1;
	}
	if (strcmp(slash + 1, "s") == 0)
		*window_ms = 1000;
	else if (strcmp(slash + 1, "m") == 0)
		*window_ms = 60 * 1000;
	else if (strcmp(slash + 1, "h") == 0)
		*window_ms = 3600 * 1000;
	else if (strcmp(slash + 1, "d") == 0)
		*window_ms = 24 * 3600 * 1000;
	else if (duration_parse(slash + 1, window_ms, err) < 0)
		return -1;
	if (*window_ms < 10 || *window_ms > 7 * 24 * 3600 * 1000LL) {
		errf(err, "window of '%s' out of range (10ms to 7d)", s);
		return -1;
	}
	*count = (unsigned)n;
	return 0;
}

/* max_running or rate of one [handler TYPE]; -1 when bad (reported). */
int
conf_flow_handler(struct loader *ld, struct handler *h, const struct entry *e)
{
	char err[ERRSZ];
	int64_t v;

	if (strcmp(e->key, "max_running") == 0) {
		if (ld_uint(ld, e, 1, FLOW_MAX, &v) < 0)
			return -1;
		h->max_running = (unsigned)v;
		return 0;
	}
	if (conf_rate_parse(e->value, &h->rate_count, &h->rate_window_ms, err) < 0) {
		ld_error(ld, e->line, "rate: %s", err);
		return -1;
	}
	return 0;
}

/* max_running of one [queue NAME]; -1 when bad (reported). */
int
conf_flow_queue(struct loader *ld, struct conf *c, const char *queue, const struct entry *e)
{
	int64_t v;

	if (ld_uint(ld, e, 1, FLOW_MAX, &v) < 0)
		return -1;
	c->queue_limits = xgrow(c->queue_limits, c->nqueue_limits, 1, sizeof *c->queue_limits);
	c->queue_limits[c->nqueue_limits].queue = xstrdup(queue);
	c->queue_limits[c->nqueue_limits++].max_running = (unsigned)v;
	return 0;
}

void
conf_flow_free(struct conf *c)
{
	size_t i;

	for (i = 0; i < c->nqueue_limits; i++)
		free(c->queue_limits[i].queue);
	free(c->queue_limits);
}

/* Whether any max_running or rate is configured (worker_reserve.c reserves no
 * jobs ahead then: a held job would count as running and start late). */
int
conf_has_flow_limits(const struct conf *c)
{
	size_t i;

	for (i = 0; i < c->nhandlers; i++)
		if (c->handlers[i]->max_running > 0 || c->handlers[i]->rate_count > 0)
			return 1;
	return c->nqueue_limits > 0;
}

/* The max_running of queue, 0 when it has none. */
unsigned
conf_queue_max_running(const struct conf *c, const char *queue)
{
	size_t i;

	for (i = 0; i < c->nqueue_limits; i++)
		if (strcmp(c->queue_limits[i].queue, queue) == 0)
			return c->queue_limits[i].max_running;
	return 0;
}
