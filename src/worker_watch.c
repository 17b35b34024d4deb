/* worker_watch.c -- part of step 5 of the worker's loop: the watchdogs
 * (watchdog.c) run every WATCH_MS, plus up to a second so that the
 * workers of a host do not run them in step.  Each incident this worker
 * raised or cleared goes to the [worker] on_alert program, run beside
 * the on_dead ones (alert.c), so a slow alert never holds up jobs or
 * leases.  Every worker runs them, serving which queues it may: one
 * worker left alive is enough to notice the others are gone. */
#include "config.h"

#include <stdlib.h>

#include "alert.h"
#include "log.h"
#include "metrics.h"
#include "watchdog.h"
#include "worker_int.h"

#define WATCH_MS 3000

/* watchdog_deliver: logs the incident, and runs on_alert when there is
 * one. */
static void
deliver(void *arg, const struct incident *x, const char *event)
{
	struct worker *w = arg;

	if (x->open)
		metrics_alert(MA_WATCHDOG);
	if (x->open)
		log_warn("alert raised: %s %s: %s", x->kind, x->name, x->reason);
	else
		log_info("alert cleared: %s %s (%s)", x->kind, x->name, x->reason);
	if (w->conf->worker.on_alert_argv != NULL)
		alerts_add_incident(w->alerts, w->conf->worker.on_alert_argv, w->conf->worker.env, x->id, x->kind,
		    x->name, incident_json(x, event));
}

/* Step 5: the watchdogs, when due. */
void
watch_tick(struct worker *w, int64_t now)
{
	char err[ERRSZ];
	int rc;

	if (!w->db_up || w->stopping || now < w->next_watch)
		return;
	rc = watchdog_run(w->conf, w->db, w->id, &w->watch_unsure, deliver, w, err);
	if (rc == DB_EGONE)
		conn_failed(w, rc, "running the watchdogs", err);
	else if (rc != DB_OK)
		log_debug("watchdogs: %s", err);
	w->next_watch = mono_ms() + WATCH_MS + rand() % 1000;
}
