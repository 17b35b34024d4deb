/* worker_keep.c -- keep_time: the work of the worker's loop that must not
 * wait for the database.  It stops handlers whose leases run out, ticks
 * the handlers (timeouts, kills), concludes the ones that end and starts
 * jobs reserved ahead in their place, and notices --max-time.  It runs
 * between any two database calls, and keep_due says when it is next
 * needed. */
#include "config.h"

#include "alert.h"
#include "duration.h"
#include "log.h"
#include "pool.h"
#include "runner.h"
#include "worker_int.h"

/* How long before the end of a lease (as we reckon it) its handler must
 * be gone: the longest one database call may block, since the loop may
 * be inside one at that moment, and a little slack; but at most a fifth
 * of the lease.  A server that answers ends its waits at the wait limit,
 * well inside that; only a connection that stalls altogether can take
 * the client's whole read timeout. */
static int64_t
lease_margin(const struct worker *w)
{
	return min64(db_call_bound(w->db) + 250, w->conf->worker.reserve_ttl_ms / 5);
}

/* SIGTERM to SIGKILL for a handler stopped for its lease: its kill_grace,
 * at most a tenth of the lease. */
static int64_t
lease_grace(const struct worker *w, const struct slot *s)
{
	return min64(s->h->kill_grace_ms, w->conf->worker.reserve_ttl_ms / 10);
}

/* When the handler of s is told to stop if its lease is not extended
 * by then. */
static int64_t
lease_stop_at(const struct worker *w, const struct slot *s)
{
	return s->lease_until - lease_margin(w) - lease_grace(w, s);
}

/* Stops each handler whose job this worker may no longer hold: past the
 * end of its lease another worker may take the job and run it too (and
 * this one could not stop its handler while it waits on the database).
 * A handler whose lease was not extended in time gets SIGTERM at
 * lease_stop_at and SIGKILL lease_margin before the lease ends; one whose
 * lease was found lost is stopped at once.  Its job is given back (the
 * fence drops that when the lease is gone). */
static void
guard_leases(struct worker *w, int64_t now)
{
	unsigned i;

	for (i = 0; i < w->nslots; i++) {
		struct slot *s = &w->slots[i];
		int64_t kill_by;
		char d[32];

		if (s->state != SLOT_RUNNING || s->lease_stop)
			continue;
		if (s->lease_lost)
			kill_by = now + lease_grace(w, s);
		else if (now >= lease_stop_at(w, s))
			kill_by = s->lease_until - lease_margin(w);
		else
			continue;
		s->lease_stop = 1;
		runner_terminate_by(s->run, kill_by);
		if (s->lease_lost) {
			log_warn("job %llu: stopping its handler: the job is no longer ours",
			    (unsigned long long)s->job->id);
			continue;
		}
		duration_format(s->lease_until - now, d, sizeof d);
		log_warn("job %llu: stopping its handler: its lease could not be extended and ends in %s "
		         "(the job goes back to the queue)",
		    (unsigned long long)s->job->id, d);
	}
}

/* Ticks the handlers (timeouts and kills), concludes each one that has
 * ended, ticks the alert programs and persistent processes, and starts
 * the jobs reserved ahead in the places that freed. */
static void
tick_runners(struct worker *w, int64_t now)
{
	unsigned i;

	pool_tick(now);
	for (i = 0; i < w->nslots; i++) {
		struct slot *s = &w->slots[i];

		if (s->state != SLOT_RUNNING)
			continue;
		runner_tick(s->run, now);
		if (runner_finished(s->run) && !start_again(w, s))
			write_conclude(w, s);
	}
	alerts_tick(w->alerts, now);
	start_ready(w);
}

/* The work that must not wait for the database: stop handlers whose
 * lease runs out, apply handler timeouts, notice --max-time.  Called at
 * the top of each turn and between any two database calls, so that a
 * slow call delays it by one wait limit at most. */
void
keep_time(struct worker *w)
{
	int64_t now = mono_ms();

	guard_leases(w, now);
	tick_runners(w, now);
	if (w->max_time_at > 0 && now >= w->max_time_at)
		signal_stop(w, 1, "--max-time reached");
}

/* The next moment something that needs no database is due: a handler's
 * timeout or kill, a lease's stop, --max-time, an alert program, a
 * persistent process's idle end.  INT64_MAX when nothing is. */
int64_t
keep_due(const struct worker *w)
{
	int64_t t = INT64_MAX;
	unsigned i;

	if (w->max_time_at > 0 && !w->stopping)
		t = w->max_time_at;
	t = min64(t, alerts_deadline(w->alerts));
	t = min64(t, pool_deadline());
	for (i = 0; i < w->nslots; i++)
		if (w->slots[i].state == SLOT_RUNNING) {
			t = min64(t, runner_deadline(w->slots[i].run));
			if (!w->slots[i].lease_stop)
				t = min64(t, lease_stop_at(w, &w->slots[i]));
		}
	return t;
}
