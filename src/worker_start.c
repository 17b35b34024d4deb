/* worker_start.c -- starting the handlers of reserved jobs: in the order
 * they were reserved, while fewer than `concurrency` run.  A job that no
 * handler may get is buried unrun; one whose handler cannot be started,
 * or that waited too long reserved ahead, goes back unstarted. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "duration.h"
#include "flow.h"
#include "isotime.h"
#include "log.h"
#include "metrics.h"
#include "otlp.h"
#include "pool.h"
#include "runner.h"
#include "trace.h"
#include "worker_int.h"

#define START_RETRY_MIN_MS 100
#define START_RETRY_MAX_MS 5000
/* A job reserved ahead that waited this long is checked against the
 * paused queues before it starts (paused_since). */
#define PAUSE_LOOK_MS 100

/* At -v, a line when a handler starts: with only the finishes logged,
 * jobs of a later queue that finish first look as if they were taken
 * first. */
static void
log_start(const struct slot *s)
{
	char attempt[32];
	struct log_field f[5];

	snprintf(attempt, sizeof attempt, "%u/%u", s->job->attempt, s->max_attempts);
	f[0] = LF_N("job", s->job->id);
	f[1] = LF_S("type", s->job->type);
	f[2] = LF_S("queue", s->job->queue);
	f[3] = LF_S("attempt", attempt);
	f[4] = LF_N("pid", runner_pid(s->run));
	log_fields(LOG_DEBUG, "job started", f, 5);
}

/* A traceparent column another program wrote that is not a W3C trace
 * context: the run gets a new trace (trace_for_run), and the log says
 * why its trace id is not the one the application set. */
static void
warn_bad_trace(const struct job *j)
{
	char err[ERRSZ];
	struct log_field f[4];

	if (j->traceparent[0] == '\0' || trace_check(j->traceparent, err) == 0)
		return;
	f[0] = LF_N("job", j->id);
	f[1] = LF_S("type", j->type);
	f[2] = LF_S("traceparent", j->traceparent);
	f[3] = LF_S("error", err);
	log_fields(LOG_WARN, "the job's traceparent is not valid: its run starts a new trace", f, 4);
}

/* Buries a job without running it. */
static void
bury_unrun(struct worker *w, struct slot *s, const char *words, const char *reason, const char *error)
{
	slot_end_unrun(w, s, OUT_DEAD, words, reason, error);
}

/* Hands s's job back unstarted, attempt refunded: its outcome waits to
 * be written like any other. */
static void
give_back_unstarted(struct worker *w, struct slot *s)
{
	slot_end_unrun(w, s, OUT_GIVEBACK, "not started", "", NULL);
}

/* A handler could not be started (no descriptors, no processes left):
 * the job goes back, and this worker takes no new job for a while, from
 * 100 ms doubling to 5 s, rather than taking it again at once and
 * failing in a loop.  The same error is logged once per streak. */
static void
start_failed(struct worker *w, const struct job *j, const char *err)
{
	char d[32];

	w->start_delay = w->start_delay == 0 ? START_RETRY_MIN_MS : w->start_delay * 2;
	if (w->start_delay > START_RETRY_MAX_MS)
		w->start_delay = START_RETRY_MAX_MS;
	w->start_paused_until = mono_ms() + w->start_delay;
	duration_format(w->start_delay, d, sizeof d);
	if (strcmp(err, w->start_err) != 0) {
		log_error("job %llu: %s; taking no new job for %s (and longer while it lasts)",
		    (unsigned long long)j->id, err, d);
		snprintf(w->start_err, sizeof w->start_err, "%s", err);
	} else
		log_debug("job %llu: %s; taking no new job for %s", (unsigned long long)j->id, err, d);
}

/* Ends s's job unstarted when it must not start: cancelled while it was
 * reserved (the claim read the request), or expired -- its expires_at
 * passed (the time left at the claim, counted down here by the
 * monotonic clock), or it was due longer than its handler's
 * expire_after.  waited: ms since the claim.  1 when it ended it. */
static int
ends_unstarted(struct worker *w, struct slot *s, int64_t waited)
{
	const struct job *j = s->job;
	int64_t after = s->h != NULL ? s->h->expire_after_ms : 0;
	char why[640], d[32];

	if (j->cancel_by[0] != '\0') {
		snprintf(why, sizeof why, "cancelled by %s", j->cancel_by);
		slot_end_unrun(w, s, OUT_CANCEL, "not started", why, why);
		return 1;
	}
	if (j->expires_ms != INT64_MAX && waited >= j->expires_ms) {
		duration_format(waited - j->expires_ms, d, sizeof d);
		snprintf(why, sizeof why, "expired: its expires_at passed %s before a worker could start it", d);
	} else if (after > 0 && j->wait_ms >= 0 && j->wait_ms + waited >= after) {
		duration_format(after, d, sizeof d);
		snprintf(why, sizeof why, "expired: due for longer than its handler's expire_after (%s)", d);
	} else
		return 0;
	slot_end_unrun(w, s, OUT_EXPIRE, "not started", why, why);
	return 1;
}

/* Buries s's job unrun: its row counted max_attempts or more before
 * this claim.  jobq itself leaves a count equal to max_attempts only
 * when the last attempt ended with its worker (crash, kill -9: a job
 * that keeps killing workers must stop somewhere); a greater one was
 * set outside jobq (an application's UPDATE or INSERT) or max_attempts
 * was lowered since, and the reason says so rather than blame a worker.
 * The dead-letter row counts the attempts made, not this claim's. */
static void
used_up_unrun(struct worker *w, struct slot *s)
{
	char reason[256];
	unsigned made = s->job->attempt - 1;

	if (made == s->max_attempts)
		snprintf(reason, sizeof reason, "attempts used up (%u of %u; the last ended with its worker)",
		    made, s->max_attempts);
	else
		snprintf(reason, sizeof reason,
		    "attempts used up (%u of %u when claimed: the count was set outside jobq, or "
		    "max_attempts lowered since; not run)",
		    made, s->max_attempts);
	s->attempt_unmade = 1;
	bury_unrun(w, s, "not run", reason, reason);
}

/* Starts the handler of the READY job in s, or settles the job without
 * one: buried unrun when no handler may get it, given back when its
 * handler cannot be started. */
static void
start_job(struct worker *w, struct slot *s)
{
	char err[ERRSZ], reason[256];
	struct job *j = s->job;
	int64_t waited = mono_ms() - s->reserved_mono;

	/* The run's started_at is the claim's database time (for a job
	 * under a rate limit, the time its start was counted at): a job that
	 * waited reserved ahead starts that much later (a duration measured
	 * here, added to the database's time, never a clock compared). */
	if (s->ahead && waited > 0)
		isotime_add_ms(j->reserved_at, sizeof j->reserved_at, waited);
	s->h = conf_handler(w->conf, j->type);
	s->max_attempts = j->max_attempts ? j->max_attempts : s->h ? s->h->max_attempts : 1;
	w->started++;
	if (ends_unstarted(w, s, waited > 0 ? waited : 0))
		return;
	if (s->h == NULL) {
		char *msg = xasprintf(
		    "unknown job type '%s': no [handler %s] section in %s", j->type, j->type, w->conf->path);

		bury_unrun(w, s, "not run", "unknown job type", msg);
		free(msg);
		return;
	}
	if (job_defect(j, reason, sizeof reason) != NULL) {
		/* A row another program wrote that no handler should get. */
		bury_unrun(w, s, "not run", reason, reason);
		return;
	}
	if (j->attempt > s->max_attempts) {
		used_up_unrun(w, s);
		return;
	}
	/* The run's span id, made here so that its TRACEPARENT, its run
	 * row and its follow-ups agree. */
	warn_bad_trace(j);
	trace_for_run(j->traceparent, j->run_trace, sizeof j->run_trace);
	s->run = runner_start(s->h, j, s->max_attempts, err);
	if (s->run == NULL) {
		/* fork failed: hand the job straight back, attempt refunded. */
		start_failed(w, j, err);
		metrics_handler(j->type, MH_START_FAILED);
		give_back_unstarted(w, s);
		return;
	}
	s->started_ns = otlp_now_ns();
	metrics_handler(j->type, MH_START);
	metrics_wait(j->queue, j->type, j->wait_ms >= 0 ? j->wait_ms + (waited > 0 ? waited : 0) : -1);
	if (w->start_delay > 0)
		log_info("handlers start again (the last failure: %s)", w->start_err);
	w->start_delay = 0;
	w->start_err[0] = '\0';
	slot_set(w, s, SLOT_RUNNING);
	if (!j->charged) {
		/* Reserved ahead: its attempt is counted by the next outcome
		 * transaction (write_pending), or by its own outcome. */
		w->charge_due = 1;
		w->write_now = 1;
	}
	log_start(s);
}

/* The persistent process s's job went to ended by itself without reading
 * a byte of the request (runner_untaken): it was on its way out, a
 * handler that exits after its status line, and the job did not run.
 * Another process takes the job.  When the one that ended was an idle
 * process reused, the next may be one too, on its way out as well (a
 * slot's process that had just answered): that is tried again as often
 * as it happens, each time one process fewer in the pool.  A process
 * started for the job is given it once more only: should a second end
 * the same way (a handler that dies as it starts), its end stands as
 * the run's, as any process's that dies during a job.  Returns 1 when
 * s's job was settled here (another process has it, or it went back
 * unstarted). */
int
start_again(struct worker *w, struct slot *s)
{
	char err[ERRSZ];

	if (!runner_untaken(s->run) || (!runner_reused(s->run) && s->retaken))
		return 0;
	log_info("job %llu: persistent handler '%s' (pid %d) ended before it read the job; another process takes it",
	    (unsigned long long)s->job->id, s->h->type, (int)runner_pid(s->run));
	s->retaken |= !runner_reused(s->run);
	runner_free(s->run);
	if ((s->run = runner_start(s->h, s->job, s->max_attempts, err)) == NULL) {
		start_failed(w, s->job, err);
		metrics_handler(s->job->type, MH_START_FAILED);
		give_back_unstarted(w, s);
	}
	return 1;
}

/* Whether s's job may start now: a persistent handler's needs a process
 * the pool can lend (pool_has_room: at most concurrency processes live,
 * those still stopping included). */
static int
room_for(struct worker *w, const struct slot *s)
{
	const struct handler *h = conf_handler(w->conf, s->job->type);

	return h == NULL || !h->persistent || pool_has_room(h);
}

/* Whether s's queue is paused (jobq pause), for a job that has waited
 * reserved ahead PAUSE_LOOK_MS or longer: 1 paused, 0 not, -1 cannot
 * tell now (a database call is in flight: this runs in its waiter too;
 * the next turn of the loop looks).  The paused queues are read again
 * when the last read is that old, so a pause stops the jobs a busy worker
 * holds within about twice PAUSE_LOOK_MS, and the jobs that start within
 * PAUSE_LOOK_MS of their claim (all of them with reserve_ahead = auto)
 * cost no read:
 * the claim itself saw the queue not paused.  A failed read lets the job
 * start, as it would have before. */
static int
paused_since(struct worker *w, const struct slot *s, int64_t now)
{
	char err[ERRSZ], **list;
	size_t i;

	if (now - s->reserved_mono < PAUSE_LOOK_MS || !w->db_up)
		return 0;
	if (w->paused == NULL || now - w->paused_looked >= PAUSE_LOOK_MS) {
		if (db_in_flight(w->db))
			return -1;
		if (flow_paused_list(w->db, &list, err) != DB_OK) {
			log_debug("reading the paused queues: %s", err);
			return 0;
		}
		strv_free(w->paused);
		w->paused = list;
		w->paused_looked = now;
	}
	for (i = 0; w->paused[i] != NULL; i++)
		if (strcmp(w->paused[i], s->job->queue) == 0)
			return 1;
	return 0;
}

/* Starts the jobs reserved ahead, in the order they were reserved, while
 * fewer than `concurrency` handlers run.  One whose lease is no longer
 * ours, or has less than a third left (its extensions failed), is given
 * back unstarted (the fence drops that if the lease is gone), and so is
 * one whose queue was paused while it waited. */
void
start_ready(struct worker *w)
{
	int64_t now = mono_ms();

	while (slot_count(w, SLOT_RUNNING) < w->conc && !w->stopping) {
		struct slot *s = NULL;
		unsigned i;
		int paused;

		for (i = 0; i < w->nslots; i++)
			if (w->slots[i].state == SLOT_READY && (s == NULL || w->slots[i].seq < s->seq))
				s = &w->slots[i];
		if (s == NULL)
			return;
		if (s->lease_lost || s->lease_until - now < w->conf->worker.reserve_ttl_ms / 3) {
			give_back_unstarted(w, s);
			continue;
		}
		if ((paused = paused_since(w, s, now)) < 0)
			return; /* it keeps its place; the next turn looks */
		if (paused) {
			log_info("job %llu: queue %s was paused while the job waited reserved ahead; "
			         "given back unstarted",
			    (unsigned long long)s->job->id, s->job->queue);
			give_back_unstarted(w, s);
			continue;
		}
		if (!room_for(w, s))
			return; /* the oldest waits for a process to end; the rest keep their order */
		start_job(w, s);
	}
}

/* Gives back the jobs reserved ahead, unstarted, attempt refunded: the
 * worker is stopping. */
void
start_give_back(struct worker *w)
{
	unsigned i;

	for (i = 0; i < w->nslots; i++)
		if (w->slots[i].state == SLOT_READY)
			give_back_unstarted(w, &w->slots[i]);
}
