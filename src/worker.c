/* worker.c -- the event loop of `jobq work`.
 *
 * One thread, one poll(2).  The loop owns up to `concurrency` slots; a
 * slot holds one reserved job from reservation until its outcome is
 * written.  Each turn it:
 *   1. reads the self-pipe (SIGCHLD, SIGTERM, SIGINT) and reaps children
 *      (worker_signal.c);
 *   2. reconnects to the database if the connection was lost (capped
 *      backoff, one log line per change of state: worker_conn.c);
 *   3. writes outcomes that are waiting (a handler that finished while
 *      the database was away keeps its slot, and its lease is extended,
 *      until the write succeeds or the lease turns out to be lost:
 *      worker_write.c);
 *   4. extends the leases of the jobs it holds (heartbeat) and refreshes
 *      its row in the worker registry (worker_lease.c, worker_row.c);
 *   5. ticks the scheduler (--schedule), prunes finished jobs past
 *      keep_done and runs the watchdogs, each when due (worker_prune.c,
 *      worker_watch.c); reserves as many jobs
 *      as it has free slots, when polling is due, and starts their
 *      handlers (worker_reserve.c, worker_start.c);
 *   6. sleeps in poll() until a pipe, a signal, a wakeup datagram
 *      (wakeup.c: a job was committed on this host) or the next deadline
 *      (worker_poll.c).
 *
 * Polling adapts: right after work was found (or a wakeup came) the next
 * poll follows within milliseconds, and the wait grows with the time
 * since, up to poll_interval (idle_wait), so a stream of jobs inserted by
 * plain SQL is seen at once while an idle worker sends a few statements
 * a second.
 *
 * The loop has one thread, so a database call that waits holds up
 * everything else.  No call may wait long: the connection has a wait
 * limit (a third of the heartbeat, 1..10 s) that bounds lock waits,
 * statements and the client's timeouts (db_set_wait_limit).  Between any
 * two calls keep_time() (worker_keep.c) does what cannot wait: it stops
 * the handler of a job whose lease could not be extended before that
 * lease ends (past it, another worker may start the same job), applies
 * handler timeouts and notices --max-time.
 *
 * Signals only write a byte to the self-pipe.  The first SIGTERM/SIGINT
 * stops reservations and lets running handlers finish; a second one
 * terminates them and gives their jobs back without charging an attempt.
 * A stopping worker whose outcomes cannot be written gives up on them
 * after reserve_ttl (those jobs come back when their leases expire).
 *
 * The steps live in the files below this one (worker_int.h lists them);
 * none of those calls back up into this file. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "alert.h"
#include "duration.h"
#include "guard.h"
#include "log.h"
#include "metrics.h"
#include "metrics_http.h"
#include "otlp.h"
#include "pool.h"
#include "queue.h"
#include "registry.h"
#include "runner.h"
#include "scheduler.h"
#include "wakeup.h"
#include "worker.h"
#include "worker_int.h"

/* Whether the loop is done: nothing held and no alert program running,
 * and a stop, --once, --max or --stop-when-empty says so. */
static int
should_exit(const struct worker *w)
{
	if (slot_busy(w) > 0 || alerts_busy(w->alerts) > 0)
		return 0;
	if (w->stopping)
		return 1;
	if (w->opts->once && w->reserved_once)
		return 1;
	if (w->opts->max_jobs > 0 && w->finished >= w->opts->max_jobs)
		return 1;
	return w->opts->stop_when_empty && w->empty;
}

/* Whether a stopping worker whose handlers have all ended stops waiting
 * for outcomes it cannot write: at once on a hard stop with the database
 * gone; otherwise once writing has failed (or the database been away)
 * for a whole reserve_ttl, for a stop and --max-time must end even when
 * another session keeps a row locked.  Those jobs come back when their
 * leases expire. */
static int
stop_gives_up(const struct worker *w, int64_t now)
{
	int64_t since = w->write_failing_since;
	unsigned i;

	if (!w->stopping)
		return 0;
	for (i = 0; i < w->nslots; i++)
		if (w->slots[i].state == SLOT_RUNNING)
			return 0;
	if (w->stopping >= 2 && !w->db_up)
		return 1;
	if (!w->db_up && (since == 0 || w->down_since < since))
		since = w->down_since;
	if (since > 0 && since < w->stopping_since)
		since = w->stopping_since; /* the wait is counted from the stop */
	return since > 0 && now - since >= w->conf->worker.reserve_ttl_ms;
}

/* --schedule: enqueue the schedules' due fires, at most once a minute
 * (exactly-once across workers is the scheduler's, by the database). */
static void
tick_schedule(struct worker *w, int64_t now)
{
	if (w->opts->schedule && w->db_up && !w->stopping && now >= w->next_schedule)
		w->next_schedule = mono_ms() + scheduler_worker_tick(w->conf, w->db);
}

/* Frees what worker_init made. */
static void
worker_free_arrays(struct worker *w)
{
	otlp_stop(w->otlp); /* first: its thread counts into the metrics */
	w->otlp = NULL;
	metrics_http_stop(w->metrics);
	w->metrics = NULL;
	metrics_free();
	free(w->slots);
	free(w->pfd);
	free(w->pfd_first);
	free(w->pfd_count);
	alerts_free(w->alerts);
	watchdog_unsure_free(&w->watch_unsure);
	strv_free(w->paused);
}

/* Turns on the hand-off of released jobs (queue.h: struct handoff) for
 * a worker that takes jobs freely: not under flow limits (a handed job
 * would bypass them), not --once or --max-jobs (they count what the
 * claims take). */
static void
handoff_setup(struct worker *w)
{
	struct buf q;
	size_t i;

	if (conf_has_flow_limits(w->conf) || w->opts->once || w->opts->max_jobs > 0)
		return;
	buf_init(&q);
	for (i = 0; w->opts->queues[i] != NULL; i++)
		db_sql(w->db, &q, "%s%q", i ? "," : "", w->opts->queues[i]);
	w->handoff_queues = q.data;
	w->handoff.queues = w->handoff_queues;
	w->handoff.worker = w->id;
	w->handoff.ttl_ms = w->conf->worker.reserve_ttl_ms;
}

/* Connects (the wait limit then covers the client's timeouts), sets up
 * the signals, learns the reserve mode, adds the worker's registry row
 * and says so.  Returns -1 with err filled when the worker cannot start,
 * -2 when reserve_mode = skip-locked names what the server has not (it
 * would fail every claim, and never exit). */
static int
worker_start(struct worker *w, char *err)
{
	struct log_field f[6];
	enum reserve_mode probed;
	const char *st;
	char wait[32], *queues;

	db_set_wait_limit(w->db, w->wait_ms);
	db_set_waiter(w->db, poll_db_wait, w);
	if (db_connect(w->db, 1, err) != DB_OK || signal_setup(err) < 0)
		return -1;
	st = db_statement_timeout(w->db);
	w->mode = w->conf->worker.reserve_mode;
	if (w->mode != RESERVE_UPDATE && queue_probe(w->db, &probed, err) != DB_OK)
		return -1;
	if (w->mode == RESERVE_AUTO)
		w->mode = probed;
	else if (w->mode == RESERVE_SKIP_LOCKED && probed != RESERVE_SKIP_LOCKED) {
		conf_no_skip_locked(w->conf, err, ERRSZ);
		return -2;
	}
	if (row_register(w, err) != DB_OK)
		return -1;
	handoff_setup(w);
	queues = row_queues(w);
	f[0] = LF_S("worker", w->id);
	f[1] = LF_S("queues", queues);
	f[2] = LF_N("concurrency", w->conc);
	f[3] = LF_S("reserve_mode", conf_reserve_mode_name(w->mode));
	duration_format(w->wait_ms, wait, sizeof wait);
	f[4] = LF_S("db_wait_limit", wait);
	f[5] = LF_S("statement_timeout", st != NULL ? st : "none");
	log_fields(LOG_INFO, "worker started", f, 6);
	free(queues);
	return 0;
}

/* Drops the outcomes that could not be written, stops the persistent
 * handlers, removes the registry row and logs the worker's counts. */
static void
worker_finish(struct worker *w)
{
	char err[ERRSZ];
	unsigned i, unwritten = 0;
	struct log_field f[5];
	struct rusage ru;

	for (i = 0; i < w->nslots; i++)
		if (w->slots[i].state != SLOT_FREE) {
			unwritten++;
			if (w->slots[i].state == SLOT_WRITING) /* its handler ran */
				write_abandon(w, &w->slots[i]);
			slot_clear(w, &w->slots[i]);
		}
	if (unwritten > 0)
		log_warn("%u outcomes could not be written; those jobs return when their leases expire",
		    unwritten);
	pool_stop(); /* persistent handlers: EOF, SIGTERM, SIGKILL after kill_grace */
	if (w->db_up)
		reserve_release_lost(w);
	queue_lost_free(&w->lost);
	free(w->handoff_queues);
	free(w->handoff_taken);
	if (w->db_up && registry_unregister(w->db, w->id, err) != DB_OK)
		log_warn("unregister: %s", err);
	getrusage(RUSAGE_SELF, &ru);
	f[0] = LF_N("done", w->counts.done);
	f[1] = LF_N("retried", w->counts.retried);
	f[2] = LF_N("dead", w->counts.dead);
	f[3] = LF_N("max_rss_kb", ru.ru_maxrss);
	f[4] = LF_S("worker", w->id);
	log_fields(LOG_INFO, "worker stopped", f, 5);
}

/* The address of the worker's /metrics: --metrics-listen, else
 * [worker] metrics_listen; NULL for none (unset, or "off"). */
static const char *
metrics_wanted(const struct worker *w)
{
	const char *at = w->opts->metrics_listen ? w->opts->metrics_listen : w->conf->worker.metrics_listen;

	return at != NULL && strcmp(at, "off") != 0 ? at : NULL;
}

/* The collector the worker's spans go to: --otlp-endpoint, else
 * [worker] otlp_endpoint; NULL for none (unset, or "off"). */
static const char *
otlp_wanted(const struct worker *w)
{
	const char *url = w->opts->otlp_endpoint ? w->opts->otlp_endpoint : w->conf->worker.otlp_endpoint;

	return url != NULL && strcmp(url, "off") != 0 ? url : NULL;
}

/* Fills w for the options o and makes its arrays; -1 (err filled) when
 * the open-files limit does not allow the concurrency. */
static int
worker_init(struct worker *w, const struct conf *c, struct db *db, const struct worker_opts *o, char *err)
{
	memset(w, 0, sizeof *w);
	w->conf = c;
	w->opts = o;
	w->db = db;
	w->db_up = 1;
	w->conc = o->concurrency;
	/* running, reserved ahead, and outcomes held for a group */
	w->nslots = 2 * w->conc + reserve_ahead_most(c, w->conc) + WRITE_BATCH;
	w->avg_ms = -1;
	w->wait_ms = setup_wait_limit(c);
	if (setup_fd_budget(w->conc, (metrics_wanted(w) ? METRICS_HTTP_FDS : 0) + (otlp_wanted(w) ? OTLP_FDS : 0),
	        err) < 0)
		return -1;
	w->slots = xcalloc(w->nslots, sizeof *w->slots);
	w->pfd = xcalloc(3 + (size_t)(w->nslots + ALERTS_MAX) * RUNNER_MAX_FDS, sizeof *w->pfd);
	w->pfd_first = xcalloc(w->nslots + 1, sizeof *w->pfd_first);
	w->pfd_count = xcalloc(w->nslots + 1, sizeof *w->pfd_count);
	w->alerts = alerts_new();
	pool_init(w->conc); /* processes: one per handler running at once, not per held job */
	setup_identity(w);
	/* Before the first handler: if this worker is killed, its guard stops
	 * every handler group it left (guard.c). */
	if (guard_start(c->worker.reserve_ttl_ms, err) < 0)
		log_warn("%s: handlers would outlive this worker if it were killed", err);
	return 0;
}

/* The clocks of a worker that has started (the first heartbeat,
 * --max-time) and its wakeup socket. */
static void
worker_arm(struct worker *w)
{
	const struct conf *c = w->conf;
	char err[ERRSZ];

	w->next_heartbeat = mono_ms() + c->worker.heartbeat_ms;
	w->active_at = mono_ms();
	if ((w->wake = wakeup_open(c, err)) == NULL && err[0] != '\0')
		log_warn("no wakeups, polling every %lld ms at most: %s",
		    (long long)c->worker.poll_interval_ms, err);
	else if (w->wake != NULL)
		log_debug("wakeup socket %s", wakeup_path(w->wake));
	if (w->opts->max_time_ms > 0)
		w->max_time_at = mono_ms() + w->opts->max_time_ms;
	prune_arm(w);
}

/* With metrics_listen (or --metrics-listen) set, and not "off": the
 * registry of metrics.c, and its /metrics on a thread of its own
 * (metrics_http.c) that never calls into the loop.  -1 (err filled)
 * when the address cannot be had. */
static int
worker_metrics(struct worker *w, char *err)
{
	const char *at = metrics_wanted(w);
	char bound[300];

	if (at == NULL)
		return 0;
	metrics_init(w->conf, w->opts->queues);
	w->metrics = metrics_http_start(at, w->conf->serve.metrics_token, bound, sizeof bound, err);
	if (w->metrics == NULL) {
		metrics_free();
		return -1;
	}
	log_info("/metrics served on http://%s", bound);
	return 0;
}

/* With otlp_endpoint (or --otlp-endpoint) set, and not "off": the span
 * exporter and its thread (otlp.c), which never calls into the loop.
 * After worker_metrics, whose registry it counts into.  -1 (err
 * filled) when it cannot start. */
static int
worker_otlp(struct worker *w, char *err)
{
	const char *url = otlp_wanted(w);

	if (url == NULL)
		return 0;
	if ((w->otlp = otlp_start(url, w->id, err)) == NULL)
		return -1;
	log_info("spans exported to %s (OTLP/HTTP)", url);
	return 0;
}

/* Turns the loop until a stop condition holds. */
static void
worker_loop(struct worker *w)
{
	/* One turn of the loop: each step may wait on the database (within
	 * the wait limit); keep_time runs before each. */
	static void (*const steps[])(struct worker *, int64_t) = {
		conn_reconnect,              /* 2. */
		write_pending,               /* 3. */
		lease_heartbeat, cancel_poll, /* 4. */
		tick_schedule, prune_tick, sweep_tick, watch_tick, /* 5. */
		reserve_jobs,
	};
	size_t i;

	for (;;) {
		signal_read(w); /* 1. */
		for (i = 0; i < ARRAY_LEN(steps); i++) {
			keep_time(w);
			steps[i](w, mono_ms());
		}
		if (should_exit(w) || stop_gives_up(w, mono_ms()))
			break;
		poll_wait(w, mono_ms()); /* 6. */
	}
}

/* Called first by `jobq work`: a SIGTERM or SIGINT from here on waits
 * for the loop, which stops cleanly (see signal_hold). */
void
worker_hold_signals(void)
{
	signal_hold();
}

/* Runs the loop until a stop condition holds; returns the exit status. */
int
worker_run(const struct conf *c, struct db *db, const struct worker_opts *o)
{
	struct worker w;
	char err[ERRSZ];
	int rc;

	if (worker_init(&w, c, db, o, err) < 0) {
		log_error("cannot start: %s", err);
		worker_free_arrays(&w);
		return 78;
	}
	if (worker_metrics(&w, err) < 0) {
		log_error("cannot start: metrics_%s", err); /* "listen on ADDR: why" */
		worker_free_arrays(&w);
		return 1;
	}
	if (worker_otlp(&w, err) < 0) {
		log_error("cannot start: %s", err);
		worker_free_arrays(&w);
		return 1;
	}
	if ((rc = worker_start(&w, err)) < 0) {
		log_error("cannot start: %s", err);
		db_set_waiter(db, NULL, NULL);
		worker_free_arrays(&w);
		return rc == -2 ? 78 : 69;
	}
	worker_arm(&w);
	worker_loop(&w);
	worker_finish(&w);
	db_set_waiter(db, NULL, NULL); /* w is gone on return */
	wakeup_close(w.wake);
	signal_restore();
	worker_free_arrays(&w);
	return 0;
}
