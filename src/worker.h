/* worker.h -- `jobq work`: the loop that reserves jobs and runs them. */
#ifndef JOBQ_WORKER_H
#define JOBQ_WORKER_H

#include <stdint.h>

#include "conf.h"
#include "db.h"

struct worker_opts {
	char **queues;        /* drained in this order */
	unsigned concurrency; /* handlers at once */
	int once;             /* one reservation, then finish and exit */
	uint64_t max_jobs;    /* 0: no limit */
	int64_t max_time_ms;  /* 0: no limit */
	int stop_when_empty;  /* exit when nothing is due */
	int schedule;         /* also tick the scheduler, at most once a minute */
	const char *metrics_listen; /* --metrics-listen; NULL: [worker] metrics_listen */
	const char *otlp_endpoint;  /* --otlp-endpoint; NULL: [worker] otlp_endpoint */
};

void worker_hold_signals(void);
int worker_run(const struct conf *c, struct db *db, const struct worker_opts *o);

#endif
