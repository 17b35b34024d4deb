/* otlp.h -- a worker's OpenTelemetry spans, exported over OTLP/HTTP
 * (JSON) to the collector at [worker] otlp_endpoint.
 *
 * The worker's loop hands each span to otlp_add, which copies it into a
 * bounded queue and returns at once (a full queue drops the span and
 * counts it); one background thread drains the queue in batches and
 * POSTs them with libcurl under short timeouts, backing off while the
 * collector does not answer.  So a collector that is slow, down or
 * unreachable costs the worker nothing but the spans. */
#ifndef JOBQ_OTLP_H
#define JOBQ_OTLP_H

#include <stdint.h>

#include "trace.h"

/* The queue's size, a batch's most spans, how long a span waits for
 * a batch to fill, and the most a stopping worker waits for the queue
 * to be sent. */
#define OTLP_QUEUE 2048
#define OTLP_BATCH 512
#define OTLP_FLUSH_MS 1000
#define OTLP_STOP_MS 2000
/* The most descriptors the exporter holds (its connection, and one
 * libcurl may open while resolving or reconnecting). */
#define OTLP_FDS 4

enum otlp_kind { OTLP_RUN, OTLP_CLAIM };
/* OTLP's status codes: unset, ok, error. */
enum otlp_status { OTLP_UNSET = 0, OTLP_OK = 1, OTLP_ERROR = 2 };

/* One span, self-contained (no pointers), so that otlp_add can copy it.
 * Strings too long for their field are cut. */
struct otlp_span {
	enum otlp_kind kind;
	char trace_id[TRACE_ID_LEN + 1];
	char span_id[SPAN_ID_LEN + 1];
	char parent_id[SPAN_ID_LEN + 1]; /* "": a root span */
	int64_t start_ns, end_ns;        /* Unix time, nanoseconds */
	enum otlp_status status;
	char message[256]; /* the status's message: why a run failed */
	/* OTLP_RUN */
	uint64_t job_id;
	char type[65], queue[65];
	unsigned attempt;
	char outcome[16];
	char unwritten[16]; /* "": written; else the outcome asked for, not written */
	/* OTLP_CLAIM: jobs the claim reserved */
	unsigned count;
};

struct otlp;

int otlp_endpoint_check(const char *url, char *err);
struct otlp *otlp_start(const char *endpoint, const char *instance, char *err);
void otlp_add(struct otlp *o, const struct otlp_span *sp);
void otlp_stop(struct otlp *o);
int64_t otlp_now_ns(void);

#endif
