/* conf_watch.c -- the watchdog keys of [queue NAME]: max_wait,
 * stale_alert and dead_alert.  What they check is watchdog.c's; the
 * [schedule NAME] key alert_after is conf_schedule.c's, beside the
 * schedule's other keys. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "conf_ini.h"
#include "conf_watch.h"

/* The entry of queue, added with every check off when it has none.
 * Only [queue NAME] calls this, for the keys of its one section (a
 * second [queue NAME] is refused), which come one after another: the
 * entry is the last one added, or there is none yet.  One look, not a
 * walk through every queue's entry. */
static struct queue_watch *
watch_of(struct conf *c, const char *queue)
{
	struct queue_watch *q;

	if (c->nqueue_watches > 0 && strcmp(c->queue_watches[c->nqueue_watches - 1].queue, queue) == 0)
		return &c->queue_watches[c->nqueue_watches - 1];
	c->queue_watches = xgrow(c->queue_watches, c->nqueue_watches, 1, sizeof *c->queue_watches);
	q = &c->queue_watches[c->nqueue_watches++];
	memset(q, 0, sizeof *q);
	q->queue = xstrdup(queue);
	q->stale_ms = -1;
	return q;
}

/* dead_alert = N or N/DURATION ("5/h", "20/1d"): more than N jobs
 * dead-lettered within the window (an hour when not given). */
static int
set_dead_alert(struct loader *ld, struct queue_watch *q, const struct entry *e)
{
	char err[ERRSZ];
	int64_t v;

	if (strchr(e->value, '/') == NULL) {
		if (ld_uint(ld, e, 0, 1000000, &v) < 0)
			return -1;
		q->dead_count = (unsigned)v;
		q->dead_window_ms = 3600 * 1000LL;
		return 0;
	}
	if (conf_rate_parse(e->value, &q->dead_count, &q->dead_window_ms, err) < 0) {
		ld_error(ld, e->line, "dead_alert: %s", err);
		return -1;
	}
	return 0;
}

/* Applies one watchdog key of [queue name]; 1 when e is none of them,
 * -1 when bad (reported). */
int
conf_watch_queue(struct loader *ld, struct conf *c, const char *queue, const struct entry *e)
{
	if (strcmp(e->key, "max_wait") == 0)
		return ld_duration(ld, e, &watch_of(c, queue)->max_wait_ms, 1000);
	if (strcmp(e->key, "stale_alert") == 0)
		return ld_duration(ld, e, &watch_of(c, queue)->stale_ms, 0);
	if (strcmp(e->key, "dead_alert") == 0)
		return set_dead_alert(ld, watch_of(c, queue), e);
	return 1;
}

/* The watchdogs of queue, or NULL when it has none. */
const struct queue_watch *
conf_queue_watch(const struct conf *c, const char *queue)
{
	size_t i;

	for (i = 0; i < c->nqueue_watches; i++)
		if (strcmp(c->queue_watches[i].queue, queue) == 0)
			return &c->queue_watches[i];
	return NULL;
}

void
conf_watch_free(struct conf *c)
{
	size_t i;

	for (i = 0; i < c->nqueue_watches; i++)
		free(c->queue_watches[i].queue);
	free(c->queue_watches);
}
