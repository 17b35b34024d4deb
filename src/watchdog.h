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

int watchdog_run(const struct conf *c, struct db *db, const char *by, watchdog_deliver *fn, void *arg, char *err);

#endif
