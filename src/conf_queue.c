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

/* [queue NAME]: adds name to the whitelist; its keys are max_running,
 * description and the watchdogs' (conf_watch.c). */
void
conf_queue_load(struct loader *ld, struct conf *c, const struct section *s, const char *name)
{
	size_t i, n = strv_len(c->queues);

	for (i = 0; i < s->nentries; i++)
		if (strcmp(s->entries[i].key, "max_running") == 0)
			conf_flow_queue(ld, c, name, &s->entries[i]);
		else if (strcmp(s->entries[i].key, "description") != 0 &&
		    conf_watch_queue(ld, c, name, &s->entries[i]) == 1)
			ld_unknown_key(ld, s, &s->entries[i]);
	c->queues = xrealloc(c->queues, (n + 2) * sizeof *c->queues);
	c->queues[n] = xstrdup(name);
	c->queues[n + 1] = NULL;
}

/* No [queue] section at all: the one queue is "default". */
void
conf_queue_default(struct conf *c)
{
	if (strv_len(c->queues) != 0)
		return;
	c->queues = xrealloc(c->queues, 2 * sizeof *c->queues);
	c->queues[0] = xstrdup("default");
	c->queues[1] = NULL;
}

/* Whether name is a configured queue. */
int
conf_has_queue(const struct conf *c, const char *name)
{
	size_t i;

	for (i = 0; c->queues[i] != NULL; i++)
		if (strcmp(c->queues[i], name) == 0)
			return 1;
	return 0;
}
