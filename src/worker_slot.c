/* worker_slot.c -- the worker's slots: a reserved job each, from its
 * claim until its outcome is written (struct slot, worker_int.h).  The
 * bottom of the worker: counting slots by state, and clearing one. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "control.h"
#include "runner.h"
#include "worker_int.h"

/* How many slots hold a job, in any state. */
unsigned
slot_busy(const struct worker *w)
{
	unsigned i, n = 0;

	for (i = 0; i < w->nslots; i++)
		n += w->slots[i].state != SLOT_FREE;
	return n;
}

/* How many slots are in state. */
unsigned
slot_count(const struct worker *w, enum slot_state state)
{
	unsigned i, n = 0;

	for (i = 0; i < w->nslots; i++)
		n += w->slots[i].state == state;
	return n;
}

/* Frees what s holds and makes it a free slot. */
void
slot_clear(struct slot *s)
{
	runner_free(s->run);
	job_free(s->job);
	free(s->output);
	free(s->error);
	control_free(&s->ctl);
	free(s->follow);
	memset(s, 0, sizeof *s);
}
