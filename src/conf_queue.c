/* conf_queue.c -- the [queue NAME] sections: the queue whitelist, in
 * file order.  A queue's max_running is conf_flow.c's, its watchdogs
 * conf_watch.c's. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "conf_flow.h"
#include "conf_ini.h"
#include "conf_queue.h"
#include "conf_watch.h"
#include "nameset.h"

/* Appends name, with its description (NULL: none), to the whitelist. */
static void
add_queue(struct conf *c, const char *name, const char *description)
{
	size_t n = c->nqueues++; /* not strv_len(): one walk per queue added */

	c->queues = xgrow(c->queues, n + 1, 1, sizeof *c->queues);
	c->queues[n] = xstrdup(name);
	c->queues[n + 1] = NULL;
	c->queue_descriptions = xgrow(c->queue_descriptions, n + 1, 1, sizeof *c->queue_descriptions);
	c->queue_descriptions[n] = xstrdup(description != NULL ? description : "");
	c->queue_descriptions[n + 1] = NULL;
	if (c->queue_index == NULL)
		c->queue_index = nameset_new();
	nameset_add(c->queue_index, c->queues[n], n);
}

/* The index of queue name in c->queues, or NAMESET_NONE. */
static size_t
queue_at(const struct conf *c, const char *name)
{
	size_t i;

	if (c->queue_index != NULL)
		return nameset_get(c->queue_index, name);
	for (i = 0; c->queues[i] != NULL; i++) /* none added yet */
		if (strcmp(c->queues[i], name) == 0)
			return i;
	return NAMESET_NONE;
}

/* [queue NAME]: adds name to the whitelist; its keys are max_running,
 * description (shown by the dashboard's overview and `status --json`)
 * and the watchdogs' (conf_watch.c). */
void
conf_queue_load(struct loader *ld, struct conf *c, const struct section *s, const char *name)
{
	const char *description = NULL;
	char err[ERRSZ];
	size_t i;

	for (i = 0; i < s->nentries; i++) {
		const struct entry *e = &s->entries[i];

		if (strcmp(e->key, "max_running") == 0)
			conf_flow_queue(ld, c, name, e);
		else if (strcmp(e->key, "description") == 0) {
			if (conf_text_check("description", e->value, 255, err) < 0)
				ld_error(ld, e->line, "%s", err);
			else
				description = e->value;
		} else if (conf_watch_queue(ld, c, name, e) == 1)
			ld_unknown_key(ld, s, e);
	}
	add_queue(c, name, description);
}

/* No [queue] section at all: the one queue is "default". */
void
conf_queue_default(struct conf *c)
{
	if (strv_len(c->queues) == 0)
		add_queue(c, "default", NULL);
}

/* The description [queue name] gives, or NULL when it gives none (or
 * name is no configured queue). */
const char *
conf_queue_description(const struct conf *c, const char *name)
{
	size_t i = queue_at(c, name);

	if (i == NAMESET_NONE)
		return NULL;
	return c->queue_descriptions[i][0] != '\0' ? c->queue_descriptions[i] : NULL;
}

/* Whether name is a configured queue. */
int
conf_has_queue(const struct conf *c, const char *name)
{
	return queue_at(c, name) != NAMESET_NONE;
}
