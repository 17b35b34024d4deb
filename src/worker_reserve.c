/* worker_reserve.c -- step 5 of the worker's loop: reserving jobs.  How
 * many to ask for (a free slot each, and some ahead while jobs are
 * short), when to poll again (adaptive polling), and the claim itself;
 * the jobs it gets are started by worker_start.c. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "metrics.h"
#include "queue.h"
#include "worker_int.h"

/* Adaptive polling (idle_wait): the shortest wait between two polls, and
 * how long after the last work found the wait reaches poll_interval. */
#define POLL_FAST_MS 5
#define POLL_RAMP_MS 2000
/* Reserving ahead (want_jobs): while jobs are short (mean under
 * AHEAD_SHORT_MS) and the queue has a backlog, jobs wait reserved beside
 * the running ones, so that a slot that frees starts the next job without
 * a round trip: as many as the running handlers end in AHEAD_WINDOW_MS,
 * at least max(concurrency, AHEAD_MIN), at most max(concurrency,
 * AHEAD_MAX).  The window makes a claim (three round trips and a commit)
 * bring about AHEAD_WINDOW_MS / 2 of work however short the jobs: at
 * 1,000 jobs/s a claim of 4 cost the database as much as the jobs'
 * outcomes did.  A job held ahead is not overtaken by later arrivals, so
 * the window stays a few tens of milliseconds. */
#define AHEAD_MIN 8
#define AHEAD_MAX 64
#define AHEAD_WINDOW_MS 40
#define AHEAD_SHORT_MS 100

/* The most jobs reserve_ahead lets wait beside conc running ones. */
unsigned
reserve_ahead_most(const struct conf *c, unsigned conc)
{
	if (c->worker.reserve_ahead >= 0)
		return (unsigned)c->worker.reserve_ahead;
	return conc > AHEAD_MAX ? conc : AHEAD_MAX;
}

/* How many jobs may wait reserved beside the running ones: reserve_ahead
 * when set; with auto (AHEAD_MIN) none until the handlers are known to
 * be short.  None for --once and --max-jobs, none without a backlog (an
 * idle queue gains nothing, and a job held here is one another worker
 * cannot take, and one that a job arriving in an earlier queue or at a
 * smaller priority does not overtake). */
static unsigned
ahead(const struct worker *w)
{
	int set = w->conf->worker.reserve_ahead;
	unsigned least, most;
	int64_t n;

	if (set == 0 || w->opts->once || w->opts->max_jobs > 0 || !w->backlog)
		return 0;
	if (set > 0)
		return (unsigned)set;
	if (conf_has_flow_limits(w->conf))
		return 0; /* a held job would count as running, and start after its rate slot */
	if (w->avg_ms < 0 || w->avg_ms >= AHEAD_SHORT_MS)
		return 0;
	n = (int64_t)w->conc * AHEAD_WINDOW_MS / (w->avg_ms > 1 ? w->avg_ms : 1);
	least = w->conc > AHEAD_MIN ? w->conc : AHEAD_MIN;
	most = reserve_ahead_most(w->conf, w->conc);
	return n < least ? least : n > most ? most : (unsigned)n;
}

/* How many jobs to reserve now: enough for every idle slot plus the ones
 * reserved ahead; while every slot is busy, only once the jobs waiting
 * have fallen to half of those ahead, so that claims come in batches. */
static unsigned
want_jobs(const struct worker *w)
{
	unsigned running = slot_count(w, SLOT_RUNNING), ready = slot_count(w, SLOT_READY);
	unsigned more = ahead(w), target = w->conc + more, n, room = w->nslots - slot_busy(w);

	if (running + ready >= target || (running + ready >= w->conc && ready > more / 2))
		return 0;
	n = target - running - ready;
	if (n > room)
		n = room;
	if (w->opts->max_jobs > 0) {
		uint64_t left =
		    w->opts->max_jobs > w->started + ready ? w->opts->max_jobs - w->started - ready : 0;

		if (left < n)
			n = (unsigned)left;
	}
	if (w->opts->once && n > 1)
		n = 1; /* --once takes one job, whatever the concurrency */
	return n;
}

/* Whether a reservation may be made once polling is due. */
int
reserve_can(const struct worker *w)
{
	if (w->stopping || !w->db_up || want_jobs(w) == 0)
		return 0;
	return !(w->opts->once && w->reserved_once);
}

/* When polling is due: the poll interval, or later while handler
 * starts are failing. */
int64_t
reserve_due(const struct worker *w)
{
	return w->next_poll > w->start_paused_until ? w->next_poll : w->start_paused_until;
}

/* The wait before the next poll when the last one found less than it
 * asked for: in proportion to the time since work was last found or a
 * wakeup came, from POLL_FAST_MS up to poll_interval, reached after
 * POLL_RAMP_MS.  A job that arrives t after the last one waits about
 * t * poll_interval / (2 * POLL_RAMP_MS) for the poll that finds it,
 * while the polls of an idle spell are spaced geometrically (a few dozen
 * to reach poll_interval, whatever it is). */
static int64_t
idle_wait(const struct worker *w, int64_t now)
{
	int64_t most = w->conf->worker.poll_interval_ms, since = now - w->active_at, t;

	if (since >= POLL_RAMP_MS)
		return most;
	t = since * most / POLL_RAMP_MS;
	return t < POLL_FAST_MS ? min64(POLL_FAST_MS, most) : t;
}

/* A reservation whose transaction deadlocked (or, on Galera, lost
 * certification) on every rerun claimed nothing and changed nothing:
 * with workers on several nodes that is contention, not a fault, and the
 * next poll tries again.  It is logged at debug, and as a warning only
 * when it goes on (every CLAIM_CONFLICT_WARN in a row), so that a busy
 * cluster does not fill the log or cron's mail. */
#define CLAIM_CONFLICT_WARN 20
static void
claim_conflict(struct worker *w, const char *err)
{
	w->claim_conflicts++;
	metrics_db_error(DB_ERETRY);
	if (w->claim_conflicts % CLAIM_CONFLICT_WARN == 0)
		log_warn("reserving jobs: %u attempts in a row lost to other workers' claims (%s); "
		         "with workers on several Galera nodes, consider writing through one node",
		    w->claim_conflicts, err);
	else
		log_debug("reserving jobs: %s; trying again at the next poll", err);
}

/* Gives back the jobs of a claim whose answer never came (queue_lost.c),
 * once the database answers again; returns DB_OK when none is left. */
int
reserve_release_lost(struct worker *w)
{
	char err[ERRSZ];
	uint64_t n;
	int rc;

	if (w->lost.token[0] == '\0')
		return DB_OK;
	if ((rc = queue_release_lost(w->db, &w->lost, &n, err)) != DB_OK)
		conn_failed(w, rc, "giving back the jobs of a claim whose answer was lost", err);
	else if (n > 0)
		log_info("%llu jobs of a claim whose answer was lost are back in their queue, attempt "
		         "refunded",
		    (unsigned long long)n);
	return rc;
}

/* Puts the n jobs just reserved (by a claim, or handed off by an
 * outcome) in free slots as READY, those beyond the free running places
 * marked as reserved ahead; got: when the reservation answered. */
void
reserve_place(struct worker *w, struct job **jobs, size_t n, int64_t got, int64_t now)
{
	int free_run = (int)w->conc - (int)slot_count(w, SLOT_RUNNING) - (int)slot_count(w, SLOT_READY);
	size_t i, k = 0;

	for (i = 0; i < n; i++) {
		while (w->slots[k].state != SLOT_FREE)
			k++;
		w->slots[k].ahead = (int)i >= free_run;
		w->slots[k].job = jobs[i];
		slot_set(w, &w->slots[k], SLOT_READY);
		w->slots[k].seq = ++w->seq;
		w->slots[k].reserved_mono = got;
		w->slots[k].lease_until = now + w->conf->worker.reserve_ttl_ms;
		w->slots[k].extend_tried = now;
	}
}

/* Step 5: once polling is due and a slot is free, claims as many jobs as
 * want_jobs says, puts them in free slots as READY and starts what may
 * run now; then sets when to poll next. */
void
reserve_jobs(struct worker *w, int64_t now)
{
	struct reserve_req req;
	struct buf parked;
	struct job **jobs;
	size_t n;
	char err[ERRSZ];
	unsigned limit = want_jobs(w);
	int64_t got;
	int rc, held = 0, free_run;
	int64_t t0;

	if (!reserve_can(w) || now < reserve_due(w) || reserve_release_lost(w) != DB_OK)
		return;
	req.queues = w->opts->queues;
	req.limit = limit;
	/* The jobs that start at once are charged by the claim, the ones
	 * reserved ahead when they start (job.charged). */
	free_run = (int)w->conc - (int)slot_count(w, SLOT_RUNNING) - (int)slot_count(w, SLOT_READY);
	req.charge = free_run > 0 ? (unsigned)free_run : 0;
	req.ttl_ms = w->conf->worker.reserve_ttl_ms;
	req.worker = w->id;
	req.mode = w->mode;
	req.flow = w->conf;
	req.held = w->opts->stop_when_empty ? &held : NULL;
	req.lost = &w->lost;
	buf_init(&parked);
	req.parked = &parked;
	t0 = mono_us();
	rc = queue_reserve(w->db, &req, &jobs, &n, err);
	if (parked.len > 0)
		log_warn("job%s %s: written waiting for other jobs (waiting_on > 0) but due, so a claim took %s: "
		         "put back to wait, due once released (plain SQL must write available_at = "
		         "'9999-12-31 23:59:59', jobq(1))",
		    strchr(parked.data, ',') ? "s" : "", parked.data, strchr(parked.data, ',') ? "them" : "it");
	metrics_claim(rc, rc == DB_OK ? (unsigned)n : 0, mono_us() - t0);
	if (rc == DB_OK)
		span_claim(w, n, mono_us() - t0);
	got = mono_ms();
	w->reserved_once = 1;
	if (rc == DB_ERETRY)
		claim_conflict(w, err);
	else if (rc != DB_OK)
		conn_failed(w, rc, "reserving jobs", err);
	else
		w->claim_conflicts = 0;
	/* held: due jobs wait for a flow limit; parked: the claim's places
	 * went to jobs put back to wait, and others may be due behind them */
	w->empty = rc == DB_OK && n == 0 && !held && parked.len == 0;
	w->backlog = n == limit;
	if (n > 0)
		w->active_at = now;
	w->next_poll = n == limit || parked.len > 0 ? now : now + idle_wait(w, now);
	buf_free(&parked);
	reserve_place(w, jobs, n, got, now);
	free(jobs);
	/* A stop that came while the claim was in flight (poll_db_wait reads the
	 * signals) found none of these jobs to give back: they go now. */
	if (w->stopping)
		start_give_back(w);
	start_ready(w);
}
