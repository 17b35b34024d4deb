/* trace.h -- W3C trace context (the traceparent header) for jobs and
 * their runs.
 *
 * A traceparent is "00-<trace id>-<parent id>-<flags>": version 00, 32
 * and 16 lowercase hex digits (neither all zeros) and 2 hex digits of
 * flags, 55 characters in all.  A job keeps the one it was enqueued with
 * (jobs.traceparent); each run of it gets the same trace id under a new
 * span id of its own, which is also the parent of the follow-ups it
 * enqueues. */
#ifndef JOBQ_TRACE_H
#define JOBQ_TRACE_H

#include <stddef.h>

#define TRACEPARENT_LEN 55
#define TRACE_ID_LEN 32
#define SPAN_ID_LEN 16

int trace_check(const char *s, char *err);
void trace_for_run(const char *job_tp, char *out, size_t outlen);
void trace_ids(const char *tp, char *trace_id, char *span_id);

#endif
