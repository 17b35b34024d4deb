/* worker_span.c -- the worker's OpenTelemetry spans, handed to the
 * exporter (otlp.c) when otlp_endpoint is set: one per handler run, in
 * the job's trace under the span id its handler got in TRACEPARENT, and
 * one per claim that reserved jobs, in a trace of its own.  Claims that
 * found nothing make no span: an idle worker polls several times a
 * second, and those spans would say nothing. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "otlp.h"
#include "queue.h"
#include "trace.h"
#include "worker_int.h"

/* The status of a run that ended as s->write: done is ok, retry and
 * dead are errors (with why), the rest (interrupted, cancelled) unset.
 * An outcome that was not written (unwritten) is an error whatever the
 * handler did, with why: its job runs again. */
static void
run_status(const struct slot *s, const char *unwritten, const char *why, struct otlp_span *sp)
{
	if (unwritten != NULL) {
		sp->status = OTLP_ERROR;
		snprintf(sp->message, sizeof sp->message, "%s", why);
	} else if (s->write == OUT_DONE)
		sp->status = OTLP_OK;
	else if (s->write == OUT_RETRY || s->write == OUT_DEAD) {
		sp->status = OTLP_ERROR;
		snprintf(sp->message, sizeof sp->message, "%s", s->reason[0] != '\0' ? s->reason : s->words);
	}
}

/* The span of s's handler run, once its outcome is settled: written
 * (unwritten NULL), or not, and then unwritten is what became of it as
 * jobq_runs_total names it ("lost": the lease was gone; "refused": the
 * server refused every form of it; "given_up": its write lost the
 * connection too often), why says so, and jobq.outcome.unwritten keeps
 * the outcome the handler's run had asked for.  Every run that counts in
 * jobq_runs_total has its span.  Its parent is the span that enqueued
 * the job (the job's traceparent); a job enqueued without one got a
 * trace of its own for the run (trace_for_run), and its span is that
 * trace's root.  Jobs that ended without a handler (cancelled or expired
 * unstarted, unknown type) have no run span. */
void
span_run(struct worker *w, const struct slot *s, const char *unwritten, const char *why)
{
	struct otlp_span sp;
	char job_trace[TRACE_ID_LEN + 1];

	if (w->otlp == NULL || !s->has_run || s->job->run_trace[0] == '\0')
		return;
	memset(&sp, 0, sizeof sp);
	sp.kind = OTLP_RUN;
	trace_ids(s->job->run_trace, sp.trace_id, sp.span_id);
	trace_ids(s->job->traceparent, job_trace, sp.parent_id);
	if (strcmp(job_trace, sp.trace_id) != 0)
		sp.parent_id[0] = '\0';
	sp.start_ns = s->started_ns;
	sp.end_ns = s->started_ns + s->duration_ms * 1000000;
	sp.job_id = s->job->id;
	snprintf(sp.type, sizeof sp.type, "%s", s->job->type);
	snprintf(sp.queue, sizeof sp.queue, "%s", s->job->queue);
	sp.attempt = s->job->attempt;
	snprintf(sp.outcome, sizeof sp.outcome, "%s",
	    unwritten != NULL ? unwritten : queue_outcome_name(s->write));
	if (unwritten != NULL)
		snprintf(sp.unwritten, sizeof sp.unwritten, "%s", queue_outcome_name(s->write));
	run_status(s, unwritten, why, &sp);
	otlp_add(w->otlp, &sp);
}

/* The span of a claim that reserved n jobs (n > 0) and took us
 * microseconds, ending now. */
void
span_claim(struct worker *w, size_t n, int64_t us)
{
	struct otlp_span sp;
	char tp[TRACEPARENT_LEN + 1];

	if (w->otlp == NULL || n == 0)
		return;
	memset(&sp, 0, sizeof sp);
	sp.kind = OTLP_CLAIM;
	trace_for_run(NULL, tp, sizeof tp); /* a new trace and span id */
	trace_ids(tp, sp.trace_id, sp.span_id);
	sp.end_ns = otlp_now_ns();
	sp.start_ns = sp.end_ns - us * 1000;
	sp.status = OTLP_OK;
	sp.count = (unsigned)n;
	otlp_add(w->otlp, &sp);
}
