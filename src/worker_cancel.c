/* worker_cancel.c -- cancel requests for the jobs this worker holds
 * (cancel.c writes them).  Twice a second, while it holds a job whose
 * outcome is not decided yet, the worker asks which of them carry a
 * request: one primary-key lookup per job, in one round trip.  A job
 * reserved ahead ends unstarted; a running handler is stopped like a
 * timed-out one (SIGTERM to its process group, SIGKILL after kill_grace;
 * a persistent handler's process is stopped and replaced), and
 * write_conclude writes the cancelled outcome.  A handler that had ended
 * already keeps its own outcome: it reached the worker first. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "log.h"
#include "queue_states.h"
#include "runner.h"
#include "worker_int.h"

#define CANCEL_POLL_MS 500

/* When the next look is due: INT64_MAX while no job waits for one. */
int64_t
cancel_due(const struct worker *w)
{
	if (slot_count(w, SLOT_READY) + slot_count(w, SLOT_RUNNING) == 0)
		return INT64_MAX;
	return w->next_cancel;
}

/* Acts on the request found for s's job. */
static void
cancel_slot(struct worker *w, struct slot *s, const char *by)
{
	char why[640];

	snprintf(s->job->cancel_by, sizeof s->job->cancel_by, "%s", by);
	snprintf(why, sizeof why, "cancelled by %s", by);
	if (s->state == SLOT_READY) {
		slot_end_unrun(w, s, OUT_CANCEL, "not started", why, why);
		return;
	}
	runner_terminate(s->run);
	s->cancelling = runner_interrupted(s->run);
	if (s->cancelling)
		log_info("job %llu: %s; stopping its handler", (unsigned long long)s->job->id, why);
}

void
cancel_poll(struct worker *w, int64_t now)
{
	struct db_res *r;
	struct buf sql;
	char **row, err[ERRSZ];
	unsigned i, n = 0;
	int rc;

	if (!w->db_up || now < cancel_due(w))
		return;
	w->next_cancel = now + CANCEL_POLL_MS;
	buf_init(&sql);
	buf_adds(&sql, "SELECT id, " CANCEL_WHO " FROM jobs WHERE cancel_by IS NOT NULL AND id IN (");
	for (i = 0; i < w->nslots; i++) {
		struct slot *s = &w->slots[i];

		if ((s->state == SLOT_READY || s->state == SLOT_RUNNING) && !s->cancelling)
			buf_printf(&sql, "%s%llu", n++ ? "," : "", (unsigned long long)s->job->id);
	}
	buf_adds(&sql, ")");
	r = n > 0 ? db_query_buf(w->db, &sql, &rc, err) : NULL;
	buf_free(&sql);
	if (n == 0)
		return;
	if (r == NULL) {
		conn_failed(w, rc, "looking for cancel requests", err);
		return;
	}
	while ((row = db_res_next(r)) != NULL) {
		uint64_t id = db_col_u64(row[0], 0);

		for (i = 0; i < w->nslots; i++) {
			struct slot *s = &w->slots[i];

			if ((s->state == SLOT_READY || s->state == SLOT_RUNNING) && !s->cancelling &&
			    s->job->id == id)
				cancel_slot(w, s, row[1] != NULL ? row[1] : "?");
		}
	}
	db_res_free(r);
}
