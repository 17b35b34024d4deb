/* worker_slot.c -- the worker's slots: a reserved job each, from its
 * claim until its outcome is written (struct slot, worker_int.h).  The
 * bottom of the worker: counting slots by state, and clearing one. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control.h"
#include "runner.h"
#include "worker_int.h"

/* How many slots hold a job, in any state.  The loop asks this and
 * slot_count several times a turn: the counts are kept as states change
 * (slot_set, slot_clear) rather than counted over every slot. */
unsigned
slot_busy(const struct worker *w)
{
	return w->in_state[SLOT_READY] + w->in_state[SLOT_RUNNING] + w->in_state[SLOT_WRITING];
}

/* How many slots are in state (not SLOT_FREE). */
unsigned
slot_count(const struct worker *w, enum slot_state state)
{
	return w->in_state[state];
}

/* Moves s to state, keeping the counts. */
void
slot_set(struct worker *w, struct slot *s, enum slot_state state)
{
	if (s->state != SLOT_FREE)
		w->in_state[s->state]--;
	s->state = state;
	if (state != SLOT_FREE)
		w->in_state[state]++;
}

/* Frees what s holds and makes it a free slot. */
void
slot_clear(struct worker *w, struct slot *s)
{
	slot_set(w, s, SLOT_FREE);
	runner_free(s->run);
	job_free(s->job);
	free(s->output);
	free(s->error);
	control_free(&s->ctl);
	free(s->follow);
	memset(s, 0, sizeof *s);
}

/* Ends the job in s without starting its handler, as kind (OUT_CANCEL,
 * OUT_EXPIRE, OUT_DEAD for a job no handler may get, OUT_GIVEBACK):
 * the outcome waits to be written like any other.  A final one (cancel,
 * expire) gets a run row of no time that says why (error), as a done
 * job's last run does; error NULL: none. */
void
slot_end_unrun(struct worker *w, struct slot *s, enum outcome_write kind, const char *words, const char *reason,
    const char *error)
{
	s->write = kind;
	snprintf(s->words, sizeof s->words, "%s", words);
	snprintf(s->reason, sizeof s->reason, "%s", reason);
	if (error != NULL)
		s->error = xstrdup(error);
	if (kind == OUT_CANCEL || kind == OUT_EXPIRE) {
		s->has_run = 1;
		s->duration_ms = 0;
	}
	slot_set(w, s, SLOT_WRITING);
	w->write_now = 1;
}
