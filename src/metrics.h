/* metrics.h -- the worker's own Prometheus counters and histograms.
 *
 * One registry per process, made by metrics_init; until then (and with
 * metrics_listen unset) every metrics_* call is a no-op, so the hooks in
 * the worker cost one test of a pointer.  The worker's thread updates
 * the numbers with relaxed atomic additions and the HTTP thread
 * (metrics_http.c) reads them: no lock, no database. */
#ifndef JOBQ_METRICS_H
#define JOBQ_METRICS_H

#include <stdint.h>

#include "conf.h"
#include "util.h"

/* What became of one job's outcome, as jobq_runs_total and
 * jobq_outcome_writes_total label it. */
enum metrics_outcome {
	MO_DONE,
	MO_RETRY,
	MO_DEAD,
	MO_CANCELLED,
	MO_EXPIRED,
	MO_GIVEN_BACK,
	MO_LOST,     /* the lease was gone: the fence dropped it */
	MO_REFUSED,  /* the server refused every form of it */
	MO_GIVEN_UP, /* its write lost the connection too often */
	MO_COUNT
};

/* A claim's result (jobq_claims_total). */
enum metrics_claim { MC_JOBS, MC_EMPTY, MC_CONFLICT, MC_ERROR, MC_COUNT };

/* A handler's event (jobq_handler_*_total). */
enum metrics_handler { MH_START, MH_START_FAILED, MH_CRASH, MH_TIMEOUT, MH_COUNT };

/* Why a persistent handler's process had to be replaced
 * (jobq_persistent_restarts_total). */
enum metrics_restart { MR_DIED, MR_PROTOCOL, MR_RECYCLED, MR_STOPPED, MR_COUNT };

/* What raised an alert (jobq_alerts_total). */
enum metrics_alert { MA_ON_DEAD, MA_WATCHDOG, MA_COUNT };

/* What became of spans of the OpenTelemetry exporter (otlp.c):
 * exported, dropped (queue full, export failed, left at stop), and
 * export requests that failed. */
enum metrics_span { MS_EXPORTED, MS_DROPPED_FULL, MS_DROPPED_FAILED, MS_DROPPED_STOP, MS_POST_FAILED, MS_COUNT };

void metrics_init(const struct conf *c, char *const *served);
void metrics_free(void);
int metrics_enabled(void);

void metrics_run(const char *queue, const char *type, enum metrics_outcome o, int64_t duration_ms);
void metrics_wait(const char *queue, const char *type, int64_t wait_ms);
void metrics_outcome(enum metrics_outcome o);
void metrics_outcomes(enum metrics_outcome o, uint64_t n);
void metrics_claim(int rc, unsigned jobs, int64_t us);
void metrics_handoff(unsigned jobs);
void metrics_write(int64_t us);
void metrics_db_error(int rc);
void metrics_handler(const char *type, enum metrics_handler e);
void metrics_restart(const char *type, enum metrics_restart r);
void metrics_followups(const char *type, unsigned n);
void metrics_alert(enum metrics_alert a);
void metrics_spans(enum metrics_span e, unsigned n);

void metrics_render(struct buf *b);

#endif
