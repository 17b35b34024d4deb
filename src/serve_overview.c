/* serve_overview.c -- GET /api/overview: counters per queue (queue_status)
 * with how many live workers serve each, runs per minute over the last
 * hour and workers alive.
 *
 * Counting costs the database time that grows with the tables (queue_status
 * reads the reserved and stale jobs one by one, and every delayed one of a
 * queue with more than 10,000 due and due later; the chart groups every
 * run of the last hour), and every open page asks every two seconds.
 * So the answer is a snapshot shared by every client and computed at
 * most once per [serve] overview_cache: a request that finds
 * the snapshot older than that gets it at once and wakes the one
 * refresher thread, which computes the next (stale while revalidating).
 * A request waits for the next snapshot instead when the last one took
 * at most WAIT_MS to compute (small tables: the numbers are then always
 * current and still cost one computation per overview_cache), when there
 * is none, or when it is more than STALE_MAX_MS past its time (after a
 * quiet spell), so nobody is shown numbers from long ago.
 * overview_cache = 0 computes every answer in the request, as the other
 * pages do. */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "queue.h"
#include "registry.h"
#include "runs_recent.h"
#include "serve_http.h"
#include "serve_overview.h"
#include "serve_thread.h"

#define STALE_MAX_MS 10000
#define WAIT_MS 50

static cJSON *
minutes_json(const uint64_t *v)
{
	cJSON *a = cJSON_CreateArray();
	int i;

	for (i = 0; i < RUNS_MINUTES; i++)
		cJSON_AddItemToArray(a, cJSON_CreateNumber((double)v[i]));
	return a;
}

static uint64_t
done_in(const struct runs_count *c, size_t n, const char *queue)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(c[i].key, queue) == 0 && strcmp(c[i].outcome, "done") == 0)
			return c[i].n;
	return 0;
}

struct alive {
	char **queues; /* each live worker's queue list */
	size_t n;
};

static cJSON *
queues_json(const struct conf *conf, const struct queue_counts *q, size_t nq, const struct runs_count *c,
    size_t nc, const struct alive *w)
{
	cJSON *a = cJSON_CreateArray();
	size_t i;

	for (i = 0; i < nq; i++) {
		cJSON *o = cJSON_CreateObject();

		cJSON_AddStringToObject(o, "queue", q[i].queue);
		serve_add_str_or_null(o, "description", conf_queue_description(conf, q[i].queue));
		ADD_NUM(o, "ready", q[i].ready);
		ADD_NUM(o, "delayed", q[i].delayed);
		ADD_NUM(o, "waiting", q[i].waiting);
		ADD_NUM(o, "reserved", q[i].reserved);
		ADD_NUM(o, "stale", q[i].stale);
		ADD_NUM(o, "failed", q[i].failed);
		cJSON_AddBoolToObject(o, "paused", q[i].paused);
		ADD_NUM(o, "done_last_hour", done_in(c, nc, q[i].queue));
		ADD_NUM(o, "workers", registry_serving(w->queues, w->n, q[i].queue));
		if (q[i].oldest_ready_s >= 0)
			ADD_NUM(o, "oldest_ready_s", q[i].oldest_ready_s);
		else
			cJSON_AddNullToObject(o, "oldest_ready_s");
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

/* Computes the overview: counters per queue with the live workers
 * serving each, runs per minute over the last hour by outcome, workers
 * alive.  NULL with err set when the database failed. */
static cJSON *
overview_compute(struct db *db, const struct conf *conf, char *err)
{
	struct queue_counts *q = NULL;
	struct runs_count *c = NULL;
	struct runs_minutes m;
	struct alive w = { NULL, 0 };
	size_t nq = 0, nc = 0;
	cJSON *doc = NULL, *chart;

	if (queue_status(db, conf, NULL, &q, &nq, err) != DB_OK ||
	    runs_recent_minutes(db, &m, &c, &nc, err) != DB_OK ||
	    registry_alive_queues(db, &w.queues, &w.n, err) != DB_OK)
		goto out;
	doc = cJSON_CreateObject();
	cJSON_AddItemToObject(doc, "queues", queues_json(conf, q, nq, c, nc, &w));
	chart = cJSON_AddObjectToObject(doc, "runs_per_minute");
	cJSON_AddItemToObject(chart, "done", minutes_json(m.done));
	cJSON_AddItemToObject(chart, "retry", minutes_json(m.retry));
	cJSON_AddItemToObject(chart, "dead", minutes_json(m.dead));
	ADD_NUM(doc, "workers_alive", w.n);
out:
	registry_queues_free(w.queues, w.n);
	queue_counts_free(q, nq);
	runs_counts_free(c, nc);
	return doc;
}

/* The shared snapshot and its refresher thread. */
static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv; /* a refresh was asked for, or one finished */
	pthread_t thread;
	int started, stop;
	struct serve *srv;
	cJSON *doc;         /* the last snapshot; NULL: none (or it failed) */
	int64_t at_ms;      /* when it was computed (mono_ms) */
	int64_t compute_ms; /* how long that took */
	uint64_t starts;    /* computations started */
	uint64_t gen;       /* computations finished, good or bad */
	int want, busy;     /* a refresh was asked for; one is running */
} ov = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

/* The refresher: computes a snapshot each time one is asked for, with
 * a database connection of its own. */
static void *
refresher(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&ov.mu);
	for (;;) {
		struct db *db;
		cJSON *doc = NULL;
		char err[ERRSZ];
		int64_t t0;

		while (!ov.stop && !ov.want)
			pthread_cond_wait(&ov.cv, &ov.mu);
		if (ov.stop)
			break;
		ov.want = 0;
		ov.busy = 1;
		ov.starts++;
		pthread_mutex_unlock(&ov.mu);
		t0 = mono_ms();
		/* serve_thread_db logs why it has no connection. */
		if ((db = serve_thread_db(ov.srv)) != NULL &&
		    (doc = overview_compute(db, ov.srv->conf, err)) == NULL)
			log_error("serve: overview: %s", err);
		pthread_mutex_lock(&ov.mu);
		cJSON_Delete(ov.doc);
		ov.doc = doc;
		ov.at_ms = mono_ms();
		ov.compute_ms = ov.at_ms - t0;
		ov.busy = 0;
		ov.gen++;
		pthread_cond_broadcast(&ov.cv);
	}
	pthread_mutex_unlock(&ov.mu);
	return NULL;
}

/* Starts the refresher (when overview_cache is not 0).  0, or -1 when
 * the thread cannot be made. */
int
serve_overview_start(struct serve *s)
{
	if (s->conf->serve.overview_cache_ms == 0)
		return 0;
	ov.srv = s;
	if (pthread_create(&ov.thread, NULL, refresher, NULL) != 0)
		return -1;
	ov.started = 1;
	return 0;
}

/* Stops the refresher (after the computation in hand) and drops the
 * snapshot. */
void
serve_overview_stop(void)
{
	if (!ov.started)
		return;
	pthread_mutex_lock(&ov.mu);
	ov.stop = 1;
	pthread_cond_broadcast(&ov.cv);
	pthread_mutex_unlock(&ov.mu);
	pthread_join(ov.thread, NULL);
	ov.started = 0;
	cJSON_Delete(ov.doc);
	ov.doc = NULL;
}

/* Drops the snapshot, so that the next request waits for one computed
 * after this call: what an admin action that changes the overview
 * (pause, resume) uses so that its page shows the change at once. */
void
serve_overview_invalidate(void)
{
	pthread_mutex_lock(&ov.mu);
	cJSON_Delete(ov.doc);
	ov.doc = NULL;
	pthread_mutex_unlock(&ov.mu);
}

/* Sends doc with a Server-Timing header: how long it took to compute
 * and how old it is (contrib/bench-serve reads both). */
static MHD_RESULT
send_overview(struct req *r, cJSON *doc, int64_t compute_ms, int64_t age_ms)
{
	struct resp_extra x = { 0 };
	char timing[96];

	snprintf(timing, sizeof timing, "compute;dur=%lld, age;dur=%lld", (long long)compute_ms,
	    (long long)age_ms);
	x.server_timing = timing;
	return serve_json_x(r, 200, doc, &x);
}

/* The snapshot for a request: a copy of it, waking the refresher when
 * it is due; waiting for a new one when there is none fit to show. */
static MHD_RESULT
overview_cached(struct req *r, int64_t ttl)
{
	cJSON *doc;
	int64_t now = mono_ms(), compute_ms, age;
	int stale;

	pthread_mutex_lock(&ov.mu);
	stale = ov.doc != NULL && now - ov.at_ms >= ttl;
	if (ov.doc == NULL || now - ov.at_ms > ttl + STALE_MAX_MS || (stale && ov.compute_ms <= WAIT_MS)) {
		/* Computations start and finish in turn: the next to start
		 * is number starts + 1, and it is done when gen reaches it. */
		uint64_t target = ov.starts + 1;

		ov.want = 1;
		pthread_cond_broadcast(&ov.cv);
		while (ov.gen < target && !ov.stop)
			pthread_cond_wait(&ov.cv, &ov.mu);
	} else if (stale && !ov.busy && !ov.want) {
		ov.want = 1;
		pthread_cond_broadcast(&ov.cv);
	}
	doc = ov.doc != NULL ? cJSON_Duplicate(ov.doc, 1) : NULL;
	compute_ms = ov.compute_ms;
	age = mono_ms() - ov.at_ms;
	pthread_mutex_unlock(&ov.mu);
	if (doc == NULL && serve_db_down_since(r->srv) != 0)
		return serve_db_down(r);
	if (doc == NULL)
		return serve_error(r, 500, "internal error (the server log has the detail)");
	return send_overview(r, doc, compute_ms, age);
}

/* GET /api/overview */
MHD_RESULT
api_overview(struct req *r)
{
	int64_t ttl = r->srv->conf->serve.overview_cache_ms, t0 = mono_ms();
	char err[ERRSZ];
	cJSON *doc;

	if (ttl > 0)
		return overview_cached(r, ttl);
	if ((doc = overview_compute(r->db, r->srv->conf, err)) == NULL)
		return serve_db_error(r, "overview", err);
	return send_overview(r, doc, mono_ms() - t0, 0);
}
