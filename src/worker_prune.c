/* worker_prune.c -- part of step 5 of the worker's loop: finished jobs
 * leave after keep_done.  A done job (or one forgotten from the dead
 * letter) is kept as its runs, which the History, a job's page and
 * `jobq show` read; every worker deletes the runs of finished jobs older
 * than keep_done, a chunk at a time.  The claim never reads job_runs,
 * so what is kept costs claims nothing (contrib/bench --only kept); the
 * pruning is spread thin so that it never holds the loop or a lock for
 * long: one statement of at most PRUNE_CHUNK rows a turn, again a
 * moment later while chunks come back full, else after a quarter of
 * keep_done (1 s to 10 min).
 *
 * Jobs whose expiry passed while no worker held them leave too
 * (sweep_tick): a worker that claims one finalizes it itself, but one in
 * a queue nobody serves, or delayed past its expiry, would wait for ever. */
#include "config.h"

#include <stdlib.h>

#include "final.h"
#include "log.h"
#include "metrics.h"
#include "runs.h"
#include "worker_int.h"

/* The expiry sweep: every SWEEP_MS (plus up to a second, so that the
 * workers of a host do not sweep in step), at once again after a full
 * batch. */
#define SWEEP_MS 5000
#define SWEEP_AGAIN_MS 100

#define PRUNE_CHUNK 1000
#define PRUNE_AGAIN_MS 250 /* after a full chunk: about 4,000 runs a second */
#define PRUNE_MIN_MS 1000
#define PRUNE_MAX_MS (10 * 60 * 1000)

/* How long between passes: a quarter of keep_done, within bounds, so a
 * finished job is gone at most that much after keep_done. */
static int64_t
prune_every(const struct worker *w)
{
	int64_t t = w->conf->worker.keep_done_ms / 4;

	return t < PRUNE_MIN_MS ? PRUNE_MIN_MS : t > PRUNE_MAX_MS ? PRUNE_MAX_MS : t;
}

/* The first pass comes one interval after the start: a worker that
 * only drains a queue and stops never prunes. */
void
prune_arm(struct worker *w)
{
	w->next_prune = mono_ms() + prune_every(w);
}

/* Step 5: one chunk of finished jobs' runs past keep_done, when due. */
void
prune_tick(struct worker *w, int64_t now)
{
	const int64_t keep = w->conf->worker.keep_done_ms;
	uint64_t removed = 0;
	char err[ERRSZ];
	int rc;

	if (keep <= 0 || !w->db_up || w->stopping || now < w->next_prune)
		return;
	rc = runs_prune_finished(w->db, keep, PRUNE_CHUNK, &removed, err);
	if (rc == DB_EGONE) {
		conn_failed(w, rc, "pruning finished jobs", err);
	} else if (rc != DB_OK) {
		/* a lock held by another worker's pass, say: the next pass */
		log_debug("pruning finished jobs: %s", err);
	} else if (removed > 0) {
		log_debug("pruned %llu runs of jobs finished more than keep_done ago", (unsigned long long)removed);
	}
	w->next_prune = mono_ms() + (rc == DB_OK && removed == PRUNE_CHUNK ? PRUNE_AGAIN_MS : prune_every(w));
}

/* Step 5: one batch of jobs whose expiry passed unstarted, finalized as
 * expired (or cancelled: final.c), when due. */
void
sweep_tick(struct worker *w, int64_t now)
{
	uint64_t ends[2] = { 0, 0 }, n;
	char err[ERRSZ];
	int rc;

	if (!w->db_up || w->stopping || now < w->next_sweep)
		return;
	rc = final_sweep(w->db, w->id, w->mode == RESERVE_SKIP_LOCKED, 0, ends, err);
	n = ends[0] + ends[1];
	if (rc == DB_EGONE)
		conn_failed(w, rc, "sweeping expired jobs", err);
	else if (rc != DB_OK)
		log_debug("sweeping expired jobs: %s", err);
	else if (n > 0) {
		/* outcomes as much as a claim's, though no handler ran */
		metrics_outcomes(MO_EXPIRED, ends[0]);
		metrics_outcomes(MO_CANCELLED, ends[1]);
		log_info("%llu job%s expired unstarted, %llu cancelled while no worker held them",
		    (unsigned long long)ends[0], ends[0] == 1 ? "" : "s", (unsigned long long)ends[1]);
	}
	w->next_sweep = mono_ms() + (n == FINAL_SWEEP_MAX ? SWEEP_AGAIN_MS : SWEEP_MS + rand() % 1000);
}
