/* worker_row.c -- the worker's row in the registry (registry.c, the
 * jobq_workers table): the queues it serves and the jobs it holds, as
 * the rows that `jobq workers` and the dashboard show. */
#include "config.h"

#include <unistd.h>

#include "registry.h"
#include "worker_int.h"

/* "critical,default,low" */
char *
row_queues(const struct worker *w)
{
	struct buf q;
	unsigned i;

	buf_init(&q);
	buf_adds(&q, "");
	for (i = 0; w->opts->queues[i] != NULL; i++)
		buf_printf(&q, "%s%s", i ? "," : "", w->opts->queues[i]);
	return buf_steal(&q);
}

/* Adds (or replaces) the worker's row in the registry. */
int
row_register(struct worker *w, char *err)
{
	char *queues = row_queues(w);
	int rc = registry_register(
	    w->db, w->id, w->host, (unsigned)getpid(), queues, w->conc, w->conf->worker.heartbeat_ms, err);

	free(queues);
	return rc;
}

/* "12:send_email,13:resize": the jobs in the registry row, those whose
 * handler runs (or has just ended, its outcome being written); not those
 * reserved ahead, which wait for a slot. */
char *
row_jobs(const struct worker *w)
{
	struct buf b;
	unsigned i;

	buf_init(&b);
	buf_adds(&b, "");
	for (i = 0; i < w->nslots; i++) {
		const struct slot *s = &w->slots[i];

		if ((s->state == SLOT_RUNNING || s->state == SLOT_WRITING) && !s->lease_lost)
			buf_printf(
			    &b, "%s%llu:%s", b.len ? "," : "", (unsigned long long)s->job->id, s->job->type);
	}
	return buf_steal(&b);
}
