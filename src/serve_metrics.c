/* serve_metrics.c -- GET /metrics in the Prometheus text format, from
 * the same queue_status, registry and run-history functions the
 * dashboard and `jobq status` use. */
#include "config.h"

#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "incidents.h"
#include "queue.h"
#include "registry.h"
#include "runs_recent.h"
#include "serve_http.h"
#include "serve_metrics.h"

/* A label value: backslash, quote and newline escaped. */
static void
label(struct buf *b, const char *v)
{
	for (; *v != '\0'; v++)
		if (*v == '\\' || *v == '"')
			buf_addc(b, '\\'), buf_addc(b, *v);
		else if (*v == '\n')
			buf_adds(b, "\\n");
		else
			buf_addc(b, *v);
}

static void
head(struct buf *b, const char *name, const char *type, const char *help)
{
	buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void
queue_metrics(struct buf *b, const struct queue_counts *q, size_t n)
{
	static const char *const st[] = { "ready", "delayed", "waiting", "reserved", "stale" };
	size_t i, k;

	head(b, "jobq_jobs", "gauge", "Jobs in the queue table by queue and state.");
	for (i = 0; i < n; i++)
		for (k = 0; k < ARRAY_LEN(st); k++) {
			const uint64_t v[] = { q[i].ready, q[i].delayed, q[i].waiting, q[i].reserved, q[i].stale };

			buf_adds(b, "jobq_jobs{queue=\"");
			label(b, q[i].queue);
			buf_printf(b, "\",state=\"%s\"} %llu\n", st[k], (unsigned long long)v[k]);
		}
	head(b, "jobq_failed_jobs", "gauge", "Dead-lettered jobs by queue.");
	for (i = 0; i < n; i++) {
		buf_adds(b, "jobq_failed_jobs{queue=\"");
		label(b, q[i].queue);
		buf_printf(b, "\"} %llu\n", (unsigned long long)q[i].failed);
	}
	head(b, "jobq_oldest_ready_seconds", "gauge",
	    "How long the oldest ready job has waited (0: none): how far behind the queue is.");
	for (i = 0; i < n; i++) {
		buf_adds(b, "jobq_oldest_ready_seconds{queue=\"");
		label(b, q[i].queue);
		buf_printf(b, "\"} %lld\n", (long long)(q[i].oldest_ready_s > 0 ? q[i].oldest_ready_s : 0));
	}
}

static void
worker_metrics(struct buf *b, const struct worker_row *w, size_t n)
{
	static const char *const out[] = { "done", "retry", "dead" };
	size_t i, k, alive = 0;

	for (i = 0; i < n; i++)
		alive += w[i].alive != 0;
	head(b, "jobq_workers", "gauge", "Workers whose heartbeat is current.");
	buf_printf(b, "jobq_workers %zu\n", alive);
	head(b, "jobq_worker_jobs_total", "counter", "Jobs each running worker finished, by outcome.");
	for (i = 0; i < n; i++)
		for (k = 0; k < ARRAY_LEN(out); k++) {
			const uint64_t v[] = { w[i].done, w[i].retried, w[i].dead };

			buf_adds(b, "jobq_worker_jobs_total{worker=\"");
			label(b, w[i].id);
			buf_printf(b, "\",outcome=\"%s\"} %llu\n", out[k], (unsigned long long)v[k]);
		}
}

static void
run_metrics(struct buf *b, const struct runs_count *c, size_t n)
{
	size_t i;

	head(
	    b, "jobq_runs_last_hour", "gauge", "Handler runs started in the last hour, by type and outcome.");
	for (i = 0; i < n; i++) {
		buf_adds(b, "jobq_runs_last_hour{type=\"");
		label(b, c[i].key);
		buf_adds(b, "\",outcome=\"");
		label(b, c[i].outcome);
		buf_printf(b, "\"} %llu\n", (unsigned long long)c[i].n);
	}
}

/* The watchdogs' open incidents (jobq_alerts), one series each. */
static void
alert_metrics(struct buf *b, const struct incident *x, size_t n)
{
	size_t i;

	head(b, "jobq_alerts", "gauge", "Open watchdog incidents (1 each), by kind and name.");
	for (i = 0; i < n; i++) {
		buf_adds(b, "jobq_alerts{kind=\"");
		label(b, x[i].kind);
		buf_adds(b, "\",name=\"");
		label(b, x[i].name);
		buf_adds(b, "\"} 1\n");
	}
}

/* With metrics_token set, the request must carry "Authorization:
 * Bearer TOKEN" (compared in constant time). */
static int
authorized(struct req *r)
{
	const char *want = r->srv->conf->serve.metrics_token;
	const char *got = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Authorization");

	if (want == NULL)
		return 1;
	if (got == NULL || strncmp(got, "Bearer ", 7) != 0 || strlen(got + 7) != strlen(want))
		return 0;
	return sodium_memcmp(got + 7, want, strlen(want)) == 0;
}

/* GET /metrics */
MHD_RESULT
serve_metrics(struct req *r)
{
	struct queue_counts *q = NULL;
	struct worker_row *w = NULL;
	struct runs_count *c = NULL;
	struct incident *x = NULL;
	size_t nq = 0, nw = 0, nc = 0, nx = 0;
	char err[ERRSZ];
	struct buf b;
	MHD_RESULT ret;

	if (!authorized(r))
		return serve_error(r, 401, "/metrics needs Authorization: Bearer <metrics_token>");
	if (queue_status(r->db, r->srv->conf, NULL, &q, &nq, err) != DB_OK ||
	    registry_list(r->db, &w, &nw, err) != DB_OK ||
	    runs_recent_counts(r->db, "type", &c, &nc, err) != DB_OK ||
	    incidents_list(r->db, 0, &x, &nx, err) != DB_OK) {
		queue_counts_free(q, nq);
		registry_rows_free(w, nw);
		runs_counts_free(c, nc);
		return serve_db_error(r, "metrics", err);
	}
	buf_init(&b);
	queue_metrics(&b, q, nq);
	worker_metrics(&b, w, nw);
	run_metrics(&b, c, nc);
	alert_metrics(&b, x, nx);
	ret = serve_respond(r, 200, "text/plain; version=0.0.4; charset=utf-8", b.data, b.len, NULL);
	buf_free(&b);
	queue_counts_free(q, nq);
	registry_rows_free(w, nw);
	runs_counts_free(c, nc);
	incidents_free(x, nx);
	return ret;
}
