/* metrics.c -- the worker's own counters and histograms, for Prometheus.
 *
 * Counters only grow (the *_total series: rate() and increase() work
 * across scrapes, and Prometheus sums them across workers); histograms
 * have fixed buckets from 1 ms to 4 h, so histogram_quantile() can be
 * taken over any set of workers.  Labels come from the configuration
 * only: a queue is one of the [queue] sections (else "_other"), a type
 * one of the [handler] sections (else "_unknown"), never a payload, so
 * the number of series is bounded by the configuration.
 *
 * The registry is one per process (like pool.c's processes): the hooks
 * sit in files that have no worker at hand (pool.c, the reaper), and the
 * HTTP thread reads it.  The worker's thread writes with relaxed atomic
 * additions, the HTTP thread reads with relaxed loads: a scrape may see
 * one histogram's sum a little ahead of its buckets, never a bucket
 * ahead of its count (the count is the sum of the buckets as read). */
#include "config.h"

#include <stdlib.h>
#include <time.h>
#include <string.h>

#include "db.h"
#include "metrics.h"
#include "prom.h"

/* Upper bounds of the histogram buckets, in microseconds: about 2.5x
 * apart from 1 ms to a minute, then the steps of long jobs up to 4 h. */
static const int64_t bounds_us[] = { 1000, 2500, 5000, 10000, 25000, 50000, 100000, 250000, 500000,
	1000000, 2500000, 5000000, 10000000, 30000000, 60000000, 120000000, 300000000, 600000000,
	1800000000, 3600000000LL, 7200000000LL, 14400000000LL };
#define NBOUNDS (sizeof bounds_us / sizeof bounds_us[0])

struct hist {
	uint64_t n[NBOUNDS + 1]; /* per bucket, not cumulative; the last: above every bound */
	uint64_t sum_us;
};

/* One (queue, type) pair. */
struct cell {
	uint64_t runs[MO_COUNT];
	struct hist run, wait;
	int shown; /* its series are on /metrics (set once, never cleared) */
};

struct metrics {
	const struct conf *conf;
	size_t nq, nt;      /* whitelist sizes; index nq is "_other", nt "_unknown" */
	struct cell *cells; /* (nq + 1) * (nt + 1), queue-major */
	uint64_t *handler;  /* (nt + 1) * MH_COUNT */
	uint64_t *restarts; /* (nt + 1) * MR_COUNT */
	uint64_t *follow;   /* nt + 1 */
	uint64_t outcomes[MO_COUNT];
	uint64_t claims[MC_COUNT], claimed, handed;
	uint64_t db_errors[4];
	uint64_t alerts[MA_COUNT];
	uint64_t spans[MS_COUNT];
	struct hist claim, write;
};

static struct metrics *m;

static const char *const outcome_names[MO_COUNT] = { "done", "retry", "dead", "cancelled", "expired",
	"given_back", "lost", "refused", "given_up" };
static const char *const claim_names[MC_COUNT] = { "jobs", "empty", "conflict", "error" };
static const char *const restart_names[MR_COUNT] = { "died", "protocol", "recycled", "stopped" };
static const char *const alert_names[MA_COUNT] = { "on_dead", "watchdog" };
/* jobq_spans_dropped_total's reasons: MS_DROPPED_FULL..MS_DROPPED_STOP */
static const char *const span_drop_names[3] = { "queue_full", "export_failed", "shutdown" };
/* DB_EGONE, DB_ERETRY, DB_EFAIL, DB_EWAIT in the order of db.h (-1..-4) */
static const char *const db_error_names[4] = { "connection", "deadlock", "statement", "wait_limit" };

static void
add(uint64_t *x, uint64_t n)
{
	__atomic_fetch_add(x, n, __ATOMIC_RELAXED);
}

static uint64_t
get(const uint64_t *x)
{
	return __atomic_load_n(x, __ATOMIC_RELAXED);
}

static void
observe(struct hist *h, int64_t us)
{
	size_t i = 0;

	if (us < 0)
		us = 0;
	while (i < NBOUNDS && us > bounds_us[i])
		i++;
	add(&h->n[i], 1);
	add(&h->sum_us, (uint64_t)us);
}

static size_t
queue_index(const char *q)
{
	size_t i;

	for (i = 0; i < m->nq; i++)
		if (strcmp(m->conf->queues[i], q) == 0)
			return i;
	return m->nq;
}

static size_t
type_index(const char *t)
{
	size_t i;

	for (i = 0; i < m->nt; i++)
		if (strcmp(m->conf->handlers[i]->type, t) == 0)
			return i;
	return m->nt;
}

/* The cell of (queue, type), shown from now on. */
static struct cell *
cell(const char *queue, const char *type)
{
	struct cell *c = &m->cells[queue_index(queue) * (m->nt + 1) + type_index(type)];

	if (!__atomic_load_n(&c->shown, __ATOMIC_RELAXED))
		__atomic_store_n(&c->shown, 1, __ATOMIC_RELAXED);
	return c;
}

/* Makes the registry for configuration c (which must outlive it).  The
 * series of each served queue and the types whose handler names it as
 * their queue are shown at 0 from the start, so that rate() counts a
 * worker's first jobs; other pairs appear with their first job. */
void
metrics_init(const struct conf *c, char *const *served)
{
	size_t i, q;

	m = xcalloc(1, sizeof *m);
	m->conf = c;
	m->nq = strv_len(c->queues);
	m->nt = c->nhandlers;
	m->cells = xcalloc((m->nq + 1) * (m->nt + 1), sizeof *m->cells);
	m->handler = xcalloc((m->nt + 1) * MH_COUNT, sizeof *m->handler);
	m->restarts = xcalloc((m->nt + 1) * MR_COUNT, sizeof *m->restarts);
	m->follow = xcalloc(m->nt + 1, sizeof *m->follow);
	for (; served != NULL && *served != NULL; served++)
		for (q = queue_index(*served), i = 0; i < m->nt && q < m->nq; i++)
			if (c->handlers[i]->queue != NULL && strcmp(c->handlers[i]->queue, *served) == 0)
				m->cells[q * (m->nt + 1) + i].shown = 1;
}

/* Frees the registry; the HTTP thread must be stopped first. */
void
metrics_free(void)
{
	if (m == NULL)
		return;
	free(m->cells);
	free(m->handler);
	free(m->restarts);
	free(m->follow);
	free(m);
	m = NULL;
}

/* Whether metrics_init was called. */
int
metrics_enabled(void)
{
	return m != NULL;
}

/* A handler run of (queue, type) ended with outcome o after duration_ms. */
void
metrics_run(const char *queue, const char *type, enum metrics_outcome o, int64_t duration_ms)
{
	struct cell *c;

	if (m == NULL)
		return;
	c = cell(queue, type);
	add(&c->runs[o], 1);
	observe(&c->run, duration_ms * 1000);
}

/* A job of (queue, type) started wait_ms after it was due. */
void
metrics_wait(const char *queue, const char *type, int64_t wait_ms)
{
	if (m != NULL && wait_ms >= 0)
		observe(&cell(queue, type)->wait, wait_ms * 1000);
}

/* One job's outcome was settled by the database (or given up). */
void
metrics_outcome(enum metrics_outcome o)
{
	metrics_outcomes(o, 1);
}

/* n outcomes o at once (the expiry sweep's). */
void
metrics_outcomes(enum metrics_outcome o, uint64_t n)
{
	if (m != NULL && n > 0)
		add(&m->outcomes[o], n);
}

/* A claim returned rc (db.h) with jobs jobs after us microseconds. */
void
metrics_claim(int rc, unsigned jobs, int64_t us)
{
	if (m == NULL)
		return;
	add(&m->claims[rc == DB_OK ? (jobs > 0 ? MC_JOBS : MC_EMPTY) : rc == DB_ERETRY ? MC_CONFLICT : MC_ERROR], 1);
	add(&m->claimed, jobs);
	observe(&m->claim, us);
}

/* jobs jobs were handed to this worker by its own outcomes (queue.h:
 * struct handoff), reserved without a claim. */
void
metrics_handoff(unsigned jobs)
{
	if (m != NULL)
		add(&m->handed, jobs);
}

/* One outcome transaction (or group of them) took us microseconds. */
void
metrics_write(int64_t us)
{
	if (m != NULL)
		observe(&m->write, us);
}

/* A database call failed with rc (db.h). */
void
metrics_db_error(int rc)
{
	if (m != NULL && rc <= DB_EGONE && rc >= DB_EWAIT)
		add(&m->db_errors[-rc - 1], 1);
}

/* A handler of type had event e. */
void
metrics_handler(const char *type, enum metrics_handler e)
{
	if (m != NULL)
		add(&m->handler[type_index(type) * MH_COUNT + e], 1);
}

/* A persistent handler's process of type had to be replaced, for r. */
void
metrics_restart(const char *type, enum metrics_restart r)
{
	if (m != NULL)
		add(&m->restarts[type_index(type) * MR_COUNT + r], 1);
}

/* A done job of type enqueued n follow-up jobs. */
void
metrics_followups(const char *type, unsigned n)
{
	if (m != NULL && n > 0)
		add(&m->follow[type_index(type)], n);
}

/* An alert was raised (an on_dead program queued, a watchdog incident
 * opened by this worker). */
void
metrics_alert(enum metrics_alert a)
{
	if (m != NULL)
		add(&m->alerts[a], 1);
}

/* n spans of the exporter (otlp.c, on its own thread) had fate e. */
void
metrics_spans(enum metrics_span e, unsigned n)
{
	if (m != NULL && n > 0)
		add(&m->spans[e], n);
}

static const char *
queue_name(size_t q)
{
	return q < m->nq ? m->conf->queues[q] : "_other";
}

static const char *
type_name(size_t t)
{
	return t < m->nt ? m->conf->handlers[t]->type : "_unknown";
}

/* One histogram's lines: the cumulative buckets, +Inf, sum and count;
 * labels ("" or 'queue="q",type="t"') go before le. */
static void
hist_lines(struct buf *b, const char *name, const char *labels, const struct hist *h)
{
	uint64_t cum = 0;
	size_t i;

	for (i = 0; i < NBOUNDS; i++) {
		cum += get(&h->n[i]);
		buf_printf(b, "%s_bucket{%s%sle=\"%g\"} %llu\n", name, labels, *labels ? "," : "",
		    (double)bounds_us[i] / 1e6, (unsigned long long)cum);
	}
	cum += get(&h->n[NBOUNDS]);
	buf_printf(b, "%s_bucket{%s%sle=\"+Inf\"} %llu\n", name, labels, *labels ? "," : "", (unsigned long long)cum);
	buf_printf(b, "%s_sum%s%s%s %.6f\n", name, *labels ? "{" : "", labels, *labels ? "}" : "",
	    (double)get(&h->sum_us) / 1e6);
	buf_printf(b, "%s_count%s%s%s %llu\n", name, *labels ? "{" : "", labels, *labels ? "}" : "",
	    (unsigned long long)cum);
}

/* 'queue="q",type="t"' of cell (q, t) into l. */
static void
pair_labels(struct buf *l, size_t q, size_t t)
{
	buf_reset(l);
	buf_adds(l, "queue=\"");
	prom_label(l, queue_name(q));
	buf_adds(l, "\",type=\"");
	prom_label(l, type_name(t));
	buf_adds(l, "\"");
}

/* Whether cell i's series are on /metrics. */
static int
shown(size_t i)
{
	return __atomic_load_n(&m->cells[i].shown, __ATOMIC_RELAXED);
}

/* The series of the (queue, type) cells that are shown: runs by
 * outcome (a run never ends expired), run time and wait. */
static void
render_cells(struct buf *b)
{
	static const char *const hist[2][2] = {
		{ "jobq_run_duration_seconds", "How long handler runs took, by queue and type." },
		{ "jobq_wait_seconds", "How long jobs waited from due to their handler's start, by queue and type." },
	};
	size_t i, o, k, nt = m->nt + 1, ncells = (m->nq + 1) * nt;
	struct buf l;

	buf_init(&l);
	prom_head(b, "jobq_runs_total", "counter", "Handler runs that ended, by queue, type and outcome.");
	for (i = 0; i < ncells; i++) {
		if (!shown(i))
			continue;
		pair_labels(&l, i / nt, i % nt);
		for (o = 0; o < MO_COUNT; o++)
			if (o != MO_EXPIRED)
				buf_printf(b, "jobq_runs_total{%s,outcome=\"%s\"} %llu\n", l.data, outcome_names[o],
				    (unsigned long long)get(&m->cells[i].runs[o]));
	}
	for (k = 0; k < 2; k++) {
		prom_head(b, hist[k][0], "histogram", hist[k][1]);
		for (i = 0; i < ncells; i++)
			if (shown(i)) {
				pair_labels(&l, i / nt, i % nt);
				hist_lines(b, hist[k][0], l.data, k == 0 ? &m->cells[i].run : &m->cells[i].wait);
			}
	}
	buf_free(&l);
}

/* A counter by type with one more label: n values per type, each under
 * label=names[k]; every type of the whitelist is shown (and "_unknown"
 * once it counted something). */
static void
render_by_type(struct buf *b, const char *name, const char *help, const uint64_t *v, size_t n,
    const char *label, const char *const *names)
{
	size_t t, k;

	prom_head(b, name, "counter", help);
	for (t = 0; t < m->nt + 1; t++) {
		uint64_t any = 0;

		for (k = 0; k < n; k++)
			any += get(&v[t * n + k]);
		if (t == m->nt && any == 0)
			continue;
		for (k = 0; k < n; k++) {
			buf_printf(b, "%s{type=\"", name);
			prom_label(b, type_name(t));
			buf_adds(b, "\"");
			if (label != NULL)
				buf_printf(b, ",%s=\"%s\"", label, names[k]);
			buf_printf(b, "} %llu\n", (unsigned long long)get(&v[t * n + k]));
		}
	}
}

/* A counter with one label taking n values. */
static void
render_labelled(struct buf *b, const char *name, const char *help, const uint64_t *v, size_t n,
    const char *label, const char *const *names)
{
	size_t k;

	prom_head(b, name, "counter", help);
	for (k = 0; k < n; k++)
		buf_printf(b, "%s{%s=\"%s\"} %llu\n", name, label, names[k], (unsigned long long)get(&v[k]));
}

/* The handler events by type: one counter each (starts, start failures,
 * crashes, timeouts), from the MH_COUNT-wide rows of m->handler. */
static void
render_handlers(struct buf *b)
{
	static const char *const names[MH_COUNT][2] = {
		{ "jobq_handler_starts_total", "Handler runs started, by type." },
		{ "jobq_handler_start_failures_total", "Handlers that could not be started (fork, exec), by type." },
		{ "jobq_handler_crashes_total", "Handler runs killed by a signal the worker did not send, by type." },
		{ "jobq_handler_timeouts_total", "Handler runs stopped at their timeout, by type." },
	};
	uint64_t *col = xcalloc(m->nt + 1, sizeof *col);
	size_t e, t;

	for (e = 0; e < MH_COUNT; e++) {
		for (t = 0; t < m->nt + 1; t++)
			col[t] = get(&m->handler[t * MH_COUNT + e]);
		render_by_type(b, names[e][0], names[e][1], col, 1, NULL, NULL);
	}
	free(col);
}

/* The OpenTelemetry exporter's counters (all 0 without otlp_endpoint). */
static void
render_spans(struct buf *b)
{
	prom_head(b, "jobq_spans_exported_total", "counter", "OpenTelemetry spans the collector accepted.");
	buf_printf(b, "jobq_spans_exported_total %llu\n", (unsigned long long)get(&m->spans[MS_EXPORTED]));
	render_labelled(b, "jobq_spans_dropped_total", "OpenTelemetry spans dropped, by reason.",
	    &m->spans[MS_DROPPED_FULL], 3, "reason", span_drop_names);
	prom_head(b, "jobq_span_export_failures_total", "counter",
	    "OpenTelemetry export requests that failed (no answer, or not 2xx).");
	buf_printf(b, "jobq_span_export_failures_total %llu\n", (unsigned long long)get(&m->spans[MS_POST_FAILED]));
}

/* Appends every series of the registry (nothing when there is none). */
void
metrics_render(struct buf *b)
{
	if (m == NULL)
		return;
	render_cells(b);
	render_labelled(b, "jobq_outcome_writes_total", "Job outcomes settled by the database, by outcome.",
	    m->outcomes, MO_COUNT, "outcome", outcome_names);
	render_labelled(b, "jobq_claims_total", "Claims (reservation transactions), by result.", m->claims,
	    MC_COUNT, "result", claim_names);
	prom_head(b, "jobq_claimed_jobs_total", "counter", "Jobs reserved by claims.");
	buf_printf(b, "jobq_claimed_jobs_total %llu\n", (unsigned long long)get(&m->claimed));
	prom_head(b, "jobq_handed_off_jobs_total", "counter",
	    "Jobs an outcome of this worker released and reserved for it in the same transaction.");
	buf_printf(b, "jobq_handed_off_jobs_total %llu\n", (unsigned long long)get(&m->handed));
	prom_head(b, "jobq_claim_duration_seconds", "histogram", "How long claims took.");
	hist_lines(b, "jobq_claim_duration_seconds", "", &m->claim);
	prom_head(b, "jobq_outcome_write_duration_seconds", "histogram",
	    "How long outcome transactions took (several outcomes may share one).");
	hist_lines(b, "jobq_outcome_write_duration_seconds", "", &m->write);
	render_labelled(b, "jobq_db_errors_total", "Failed database calls, by kind.", m->db_errors, 4, "kind",
	    db_error_names);
	render_handlers(b);
	render_by_type(b, "jobq_persistent_restarts_total",
	    "Persistent handler processes replaced, by type and reason.", m->restarts, MR_COUNT, "reason",
	    restart_names);
	render_by_type(b, "jobq_followups_total", "Follow-up jobs enqueued by done jobs, by the done job's type.",
	    m->follow, 1, NULL, NULL);
	render_labelled(b, "jobq_alerts_raised_total", "Alerts raised by this worker, by source.", m->alerts, MA_COUNT, "source",
	    alert_names);
	render_spans(b);
}
