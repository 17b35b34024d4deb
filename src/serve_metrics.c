/* serve_metrics.c -- GET /metrics in the Prometheus text format, from
 * the same queue_status, registry and run-history functions the
 * dashboard and `jobq status` use. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "incidents.h"
#include "prom.h"
#include "queue.h"
#include "queue_states.h"
#include "registry.h"
#include "schedule_view.h"
#include "schedules.h"
#include "runs_recent.h"
#include "serve_http.h"
#include "serve_metrics.h"

static void
queue_metrics(struct buf *b, const struct queue_counts *q, size_t n)
{
	static const char *const st[] = QUEUED_STATES;
	size_t i, k;

	prom_head(b, "jobq_jobs", "gauge", "Jobs in the queue table by queue and state.");
	for (i = 0; i < n; i++)
		for (k = 0; k < ARRAY_LEN(st); k++) {
			const uint64_t v[] = { q[i].ready, q[i].delayed, q[i].waiting, q[i].reserved, q[i].stale };

			buf_adds(b, "jobq_jobs{queue=\"");
			prom_label(b, q[i].queue);
			buf_printf(b, "\",state=\"%s\"} %llu\n", st[k], (unsigned long long)v[k]);
		}
	prom_head(b, "jobq_failed_jobs", "gauge", "Dead-lettered jobs by queue.");
	for (i = 0; i < n; i++) {
		buf_adds(b, "jobq_failed_jobs{queue=\"");
		prom_label(b, q[i].queue);
		buf_printf(b, "\"} %llu\n", (unsigned long long)q[i].failed);
	}
	prom_head(b, "jobq_oldest_ready_seconds", "gauge",
	    "How long the oldest ready job has waited (0: none): how far behind the queue is.");
	for (i = 0; i < n; i++) {
		buf_adds(b, "jobq_oldest_ready_seconds{queue=\"");
		prom_label(b, q[i].queue);
		buf_printf(b, "\"} %lld\n", (long long)(q[i].oldest_ready_s > 0 ? q[i].oldest_ready_s : 0));
	}
	/* What `jobq status` and the overview mark: a paused queue's ready
	 * jobs grow old on purpose, and an alert on their age must be able
	 * to tell. */
	prom_head(b, "jobq_queue_paused", "gauge", "1 while `jobq pause` holds the queue, else 0.");
	for (i = 0; i < n; i++) {
		buf_adds(b, "jobq_queue_paused{queue=\"");
		prom_label(b, q[i].queue);
		buf_printf(b, "\"} %d\n", q[i].paused != 0);
	}
}

/* jobq_workers, and jobq_worker_jobs_total of the live workers only: a
 * worker that died without unregistering (killed, out of memory, its
 * host down) keeps its row until `jobq prune` forgets it, and its counts
 * no longer move, so its series would only add to the page, one more
 * set for each such worker, without end. */
static void
worker_metrics(struct buf *b, const struct worker_row *w, size_t n)
{
	static const char *const out[] = { "done", "retry", "dead" };
	size_t i, k, alive = 0;

	for (i = 0; i < n; i++)
		alive += w[i].alive != 0;
	prom_head(b, "jobq_workers", "gauge", "Workers whose heartbeat is current.");
	buf_printf(b, "jobq_workers %zu\n", alive);
	prom_head(b, "jobq_worker_jobs_total", "counter", "Jobs each live worker finished, by outcome.");
	for (i = 0; i < n; i++)
		for (k = 0; w[i].alive && k < ARRAY_LEN(out); k++) {
			const uint64_t v[] = { w[i].done, w[i].retried, w[i].dead };

			buf_adds(b, "jobq_worker_jobs_total{worker=\"");
			prom_label(b, w[i].id);
			buf_printf(b, "\",outcome=\"%s\"} %llu\n", out[k], (unsigned long long)v[k]);
		}
}

static void
run_metrics(struct buf *b, const struct runs_count *c, size_t n)
{
	size_t i;

	prom_head(
	    b, "jobq_runs_last_hour", "gauge", "Handler runs started in the last hour, by type and outcome.");
	for (i = 0; i < n; i++) {
		buf_adds(b, "jobq_runs_last_hour{type=\"");
		prom_label(b, c[i].key);
		buf_adds(b, "\",outcome=\"");
		prom_label(b, c[i].outcome);
		buf_printf(b, "\"} %llu\n", (unsigned long long)c[i].n);
	}
}

/* Live workers serving each queue of the whitelist (jobq_queue_workers):
 * 0 beside ready jobs means nothing will run them. */
static void
queue_worker_metrics(struct buf *b, const struct conf *conf, const struct worker_row *w, size_t n)
{
	char **lists = xcalloc(n + 1, sizeof *lists);
	size_t i, k = 0;

	for (i = 0; i < n; i++)
		if (w[i].alive)
			lists[k++] = w[i].queues != NULL ? w[i].queues : "";
	prom_head(b, "jobq_queue_workers", "gauge", "Live workers that serve each queue.");
	for (i = 0; conf->queues != NULL && conf->queues[i] != NULL; i++) {
		buf_adds(b, "jobq_queue_workers{queue=\"");
		prom_label(b, conf->queues[i]);
		buf_printf(b, "\"} %llu\n", (unsigned long long)registry_serving(lists, k, conf->queues[i]));
	}
	free(lists);
}

/* The schedules' series, a family at a time (v: n schedules, st their
 * statuses): the last fire; the fire each owes (the first after its
 * last one, or after now when it never fired: in the past when a fire
 * is late; none when disabled); the fires recorded missed in the last
 * day. */
static void
schedule_lines(struct buf *b, struct schedule *const *v, const struct schedule_status *st, size_t n, int64_t now)
{
	size_t i;

	prom_head(b, "jobq_schedule_last_fire_timestamp_seconds", "gauge",
	    "When each schedule last fired (0: never).");
	for (i = 0; i < n; i++) {
		buf_adds(b, "jobq_schedule_last_fire_timestamp_seconds{schedule=\"");
		prom_label(b, v[i]->name);
		buf_printf(b, "\"} %lld\n", (long long)st[i].last_fire_t);
	}
	prom_head(b, "jobq_schedule_next_fire_timestamp_seconds", "gauge",
	    "The fire each enabled schedule owes: the first after its last one (in the past: a fire is late).");
	for (i = 0; i < n; i++) {
		int64_t owed = schedule_view_next_after(v[i], st[i].last_fire_t > 0 ? st[i].last_fire_t : now);

		if (owed <= 0)
			continue;
		buf_adds(b, "jobq_schedule_next_fire_timestamp_seconds{schedule=\"");
		prom_label(b, v[i]->name);
		buf_printf(b, "\"} %lld\n", (long long)owed);
	}
	prom_head(b, "jobq_schedule_missed_fires", "gauge", "Fires each schedule missed in the last 24 hours.");
	for (i = 0; i < n; i++) {
		buf_adds(b, "jobq_schedule_missed_fires{schedule=\"");
		prom_label(b, v[i]->name);
		buf_printf(b, "\"} %llu\n", (unsigned long long)st[i].missed);
	}
}

/* Every schedule's series (the INI's and the database's): see
 * schedule_lines.  Returns DB_OK, or the database's error (err). */
static int
schedule_metrics(struct buf *b, struct db *db, const struct conf *conf, char *err)
{
	struct schedule **v = NULL;
	struct schedule_status *st;
	int64_t now;
	size_t i, n = 0;
	int rc;

	if ((rc = schedules_now(db, &now, err)) != DB_OK || (rc = schedules_load(conf, db, &v, &n, err)) != DB_OK)
		return rc;
	st = xcalloc(n + 1, sizeof *st);
	for (i = 0; i < n && rc == DB_OK; i++)
		rc = schedule_view_status(db, v[i], now, 86400, &st[i], err);
	if (rc == DB_OK)
		schedule_lines(b, v, st, n, now);
	free(st);
	schedules_free(v, n);
	return rc;
}

/* The watchdogs' open incidents (jobq_alerts), one series each. */
static void
alert_metrics(struct buf *b, const struct incident *x, size_t n)
{
	size_t i;

	prom_head(b, "jobq_alerts", "gauge", "Open watchdog incidents (1 each), by kind and name.");
	for (i = 0; i < n; i++) {
		buf_adds(b, "jobq_alerts{kind=\"");
		prom_label(b, x[i].kind);
		buf_adds(b, "\",name=\"");
		prom_label(b, x[i].name);
		buf_adds(b, "\"} 1\n");
	}
}

/* With metrics_token set, the request must carry "Authorization:
 * Bearer TOKEN". */
static int
authorized(struct req *r)
{
	return prom_token_ok(r->srv->conf->serve.metrics_token,
	    MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Authorization"));
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
	if (schedule_metrics(&b, r->db, r->srv->conf, err) != DB_OK) {
		buf_free(&b);
		queue_counts_free(q, nq);
		registry_rows_free(w, nw);
		runs_counts_free(c, nc);
		incidents_free(x, nx);
		return serve_db_error(r, "metrics", err);
	}
	queue_metrics(&b, q, nq);
	worker_metrics(&b, w, nw);
	queue_worker_metrics(&b, r->srv->conf, w, nw);
	run_metrics(&b, c, nc);
	alert_metrics(&b, x, nx);
	prom_process(&b); /* this jobq serve's own process */
	ret = serve_respond(r, 200, PROM_CONTENT_TYPE, b.data, b.len, NULL);
	buf_free(&b);
	queue_counts_free(q, nq);
	registry_rows_free(w, nw);
	runs_counts_free(c, nc);
	incidents_free(x, nx);
	return ret;
}
