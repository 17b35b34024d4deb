/* watchdog.h -- the checks behind the alerts: missed or unfinished
 * schedules, queues falling behind, stale leases, dead-letter growth
 * (watchdog.c); the incidents they open and clear are incidents.c's. */
#ifndef JOBQ_WATCHDOG_H
#define JOBQ_WATCHDOG_H

#include "conf.h"
#include "db.h"
#include "incidents.h"

/* Called for each incident this process opened ("raised") or cleared
 * ("cleared"): it, and no other process, delivers the alert. */
typedef void watchdog_deliver(void *arg, const struct incident *x, const char *event);

/* The writes of incidents whose answers were lost (a lost answer ends
 * the run: the connection is gone), kept by the caller from one run to
 * the next, which asks about them after the reconnect; zeroed to start. */
struct unsure;
struct watchdog_unsure {
	struct unsure *list;
	size_t n;
};

int watchdog_run(const struct conf *c, struct db *db, const char *by, struct watchdog_unsure *u,
    watchdog_deliver *fn, void *arg, char *err);
void watchdog_unsure_free(struct watchdog_unsure *u);

#endif
