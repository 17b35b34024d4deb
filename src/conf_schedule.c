/* conf_schedule.c -- [schedule NAME] sections. */
#include "config.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf.h"
#include "conf_int.h"
#include "cron.h"
#include "duration.h"
#include "words.h"

void
conf_schedule_load(struct loader *ld, struct conf *c, const struct section *s, const char *name)
{
	struct schedule *sc = xcalloc(1, sizeof *sc);
	int cron_line = s->line, type_line = s->line, queue_line = s->line;
	size_t i;

	sc->name = xstrdup(name);
	sc->line = s->line;
	c->schedules = xrealloc(c->schedules, (c->nschedules + 1) * sizeof *c->schedules);
	c->schedules[c->nschedules++] = sc;
	for (i = 0; i < s->nentries; i++) {
		const struct entry *e = &s->entries[i];
		int64_t v;

		if (strcmp(e->key, "cron") == 0)
			ld_str(&sc->cron, e->value), cron_line = e->line;
		else if (strcmp(e->key, "type") == 0)
			ld_str(&sc->type, e->value), type_line = e->line;
		else if (strcmp(e->key, "queue") == 0)
			ld_str(&sc->queue, e->value), queue_line = e->line;
		else if (strcmp(e->key, "timezone") == 0)
			ld_str(&sc->timezone, e->value);
		else if (strcmp(e->key, "payload") == 0) {
			cJSON *j = cJSON_Parse(e->value);

			if (j == NULL)
				ld_error(ld, e->line, "payload: not valid JSON: %s", e->value);
			cJSON_Delete(j);
			ld_str(&sc->payload, e->value);
		} else if (strcmp(e->key, "priority") == 0) {
			if (ld_uint(ld, e, -32768, 32767, &v) == 0)
				sc->priority = (int)v;
		} else
			ld_unknown_key(ld, s, e);
	}
	if (sc->cron == NULL)
		ld_error(ld, s->line, "[schedule %s] has no cron", name);
	else {
		char err[ERRSZ];
		struct cron *cr = cron_parse(sc->cron, err);

		if (cr == NULL)
			ld_error(ld, cron_line, "cron: %s", err);
		cron_free(cr);
	}
	if (sc->type == NULL)
		ld_error(ld, s->line, "[schedule %s] has no type", name);
	else if (conf_handler(c, sc->type) == NULL)
		ld_error(ld, type_line, "type: unknown job type '%s' (no [handler %s] section)", sc->type,
		    sc->type);
	if (sc->payload == NULL)
		sc->payload = xstrdup("{}");
	if (sc->queue == NULL && sc->type != NULL && conf_handler(c, sc->type) != NULL)
		sc->queue = xstrdup(conf_handler(c, sc->type)->queue);
	if (sc->queue != NULL && !conf_has_queue(c, sc->queue))
		ld_error(ld, queue_line, "queue: unknown queue '%s' (no [queue %s] section)", sc->queue,
		    sc->queue);
}
