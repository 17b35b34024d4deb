/* worker_lease.c -- step 4 of the worker's loop: the heartbeat.  It
 * extends the leases of the jobs the worker holds, in as few round trips
 * as it can, writes their handlers' progress and checkpoints with them,
 * and refreshes the worker's registry row (worker_row.c).  What happens
 * to a job whose lease cannot be extended is keep_time's (worker_keep.c). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control.h"
#include "log.h"
#include "queue.h"
#include "registry.h"
#include "runner.h"
#include "worker_int.h"

/* Extends the leases of who[0..n) in one round trip, as far as the
 * first that fails; *tried gets how many were tried, that one included.
 * Those that went through run a full reserve_ttl from the moment the
 * request was sent; a lease found lost is logged once (the fence will
 * drop that job's outcome, and guard_leases stops its handler). */
static int
extend_some(struct worker *w, struct slot **who, unsigned n, unsigned *tried, char *err)
{
	struct job **jobs = xcalloc(n + 1, sizeof *jobs);
	int *lost = xcalloc(n + 1, sizeof *lost), rc;
	int64_t sent = mono_ms(), ttl = w->conf->worker.reserve_ttl_ms;
	unsigned i;

	for (i = 0; i < n; i++)
		jobs[i] = who[i]->job;
	rc = queue_extend(w->db, jobs, n, ttl, lost, err);
	for (i = 0; i < n; i++) {
		struct slot *s = who[i];

		s->extend_tried = sent;
		if (lost[i] < 0) {
			s->extend_failed = 1; /* the one that failed; the rest were not run */
			break;
		}
		s->extend_failed = s->extend_warned = 0;
		if (!lost[i])
			s->lease_until = sent + ttl;
		else {
			s->lease_lost = 1;
			log_warn("job %llu: lease lost (another worker or release-stale took it); its "
			         "outcome will be dropped",
			    (unsigned long long)s->job->id);
		}
	}
	*tried = i < n ? i + 1 : n;
	free(jobs);
	free(lost);
	return rc;
}

/* Marks the last progress line s's running handler wrote so far to be
 * written with this heartbeat's lease extension, when it is new: the
 * database sees progress once a heartbeat, however often it is written.
 * Until the handler writes one, the first extension writes "none". */
static void
note_progress(struct slot *s)
{
	char note[CONTROL_NOTE_MAX + 1];
	struct job *j = s->job;
	const char *buf;
	size_t len;
	int overflow, p;

	if (s->state != SLOT_RUNNING)
		return;
	buf = runner_control(s->run, &len, &overflow, NULL);
	if (buf == NULL || !control_progress(buf, len, &p, note, sizeof note)) {
		/* None yet: the first extension clears what an earlier attempt,
		 * whose worker died, may have left. */
		p = -1;
		note[0] = '\0';
	}
	if (j->progress_known && p == j->progress && strcmp(note, j->progress_note) == 0)
		return;
	j->progress_known = j->progress_new = 1;
	j->progress = p;
	snprintf(j->progress_note, sizeof j->progress_note, "%s", note);
}

/* Marks the newest checkpoint s's running handler wrote, when it is new
 * and good, to be written with this heartbeat's lease extension: a job
 * whose worker dies keeps the last checkpoint that reached it.  A bad
 * one (too large) is left for the outcome, which fails the run for it. */
static void
note_checkpoint(struct slot *s)
{
	struct job *j = s->job;
	const char *line;
	size_t len;
	unsigned seq;
	char *text;

	if (s->state != SLOT_RUNNING)
		return;
	line = runner_checkpoint(s->run, &len, &seq);
	if (line == NULL || seq == s->ckpt_noted)
		return;
	s->ckpt_noted = seq;
	if ((text = control_checkpoint(line, len)) == NULL)
		return;
	free(j->checkpoint_save);
	j->checkpoint_save = text;
	j->checkpoint_new = 1;
}

/* Heartbeat order: the jobs whose last extension went through first, then
 * those whose extension failed, the one tried longest ago first. */
static int
extend_order(const void *a, const void *b)
{
	const struct slot *x = *(struct slot *const *)a, *y = *(struct slot *const *)b;

	if (x->extend_failed != y->extend_failed)
		return x->extend_failed - y->extend_failed;
	if (!x->extend_failed)
		return x < y ? -1 : x > y;
	return x->extend_tried < y->extend_tried ? -1 : x->extend_tried > y->extend_tried;
}

/* Extends the leases of the jobs we hold, in one round trip when all
 * goes well.  A job whose row another session keeps locked makes its
 * statement wait (up to the wait limit) and fail; the statements before
 * it stand, and the rest are sent again without it.  Jobs whose
 * extension failed go last, so that the others are extended first next
 * time; the retries stop once half a heartbeat interval has gone by.  A
 * job that cannot be extended is stopped before its lease ends
 * (guard_leases, in worker_keep.c). */
static int
extend_leases(struct worker *w, int64_t now, int ckpt_only, char *err)
{
	struct slot **who = xcalloc(w->nslots + 1, sizeof *who);
	unsigned i, n = 0, done = 0, tried;
	int rc = DB_OK, attempt = 0;

	for (i = 0; i < w->nslots; i++)
		if (w->slots[i].state != SLOT_FREE && !w->slots[i].lease_lost) {
			if (!ckpt_only)
				note_progress(&w->slots[i]);
			note_checkpoint(&w->slots[i]);
			if (!ckpt_only || w->slots[i].job->checkpoint_new)
				who[n++] = &w->slots[i];
		}
	qsort(who, n, sizeof *who, extend_order);
	while (done < n) {
		struct slot *s;

		if ((rc = extend_some(w, who + done, n - done, &tried, err)) == DB_OK || rc == DB_EGONE ||
		    rc == DB_EFAIL)
			break;
		s = who[done + tried - 1];
		/* A deadlock (the claiming UPDATE of the conditional mode locks
		 * the due index first, an extension its row first) rolled back
		 * only the statement that lost: send it again, after a short
		 * random pause, as a transaction would be. */
		if (rc == DB_ERETRY && mono_ms() - now < w->conf->worker.heartbeat_ms / 2 &&
		    db_retry_after(rc, ++attempt)) {
			done += tried - 1;
			continue;
		}
		attempt = 0;
		if (!s->extend_warned)
			log_warn("job %llu: lease not extended: %s", (unsigned long long)s->job->id, err);
		s->extend_warned = 1;
		done += tried;
		if (mono_ms() - now >= w->conf->worker.heartbeat_ms / 2)
			break;
		keep_time(w);
	}
	free(who);
	return rc == DB_EGONE || rc == DB_EFAIL ? rc : DB_OK;
}

/* Extends our leases and refreshes our registry row.  A lease that could
 * not be extended is only logged here; the registry row is refreshed all
 * the same (the worker is alive, and says so), unless the connection is
 * gone.  Between heartbeats, once new checkpoints are due to be saved
 * (ckpt_due), it extends only the leases of the handlers still running
 * that wrote one, with their checkpoints: a handler that has ended
 * hands its checkpoint to its outcome, and the other leases need no
 * extension yet. */
void
lease_heartbeat(struct worker *w, int64_t now)
{
	char err[ERRSZ], *current;
	int rc;

	if (!w->db_up)
		return;
	if (now < w->next_heartbeat && w->ckpt_due != 0 && now >= w->ckpt_due) {
		w->ckpt_due = 0;
		if ((rc = extend_leases(w, now, 1, err)) == DB_EGONE || rc == DB_EFAIL)
			conn_failed(w, rc, "checkpoint save", err);
		return;
	}
	if (now < w->next_heartbeat)
		return;
	w->next_heartbeat = now + w->conf->worker.heartbeat_ms;
	w->ckpt_due = 0;
	rc = extend_leases(w, now, 0, err);
	if (rc == DB_EGONE || rc == DB_EFAIL) {
		conn_failed(w, rc, "heartbeat", err);
		return;
	}
	keep_time(w);
	current = row_jobs(w);
	if ((rc = registry_heartbeat(w->db, w->id, &w->counts, current, err)) == 1)
		rc = row_register(w, err); /* our row was pruned: add it back */
	if (rc != DB_OK)
		conn_failed(w, rc, "heartbeat", err);
	free(current);
}
