/* serve_overview.c -- GET /api/overview: counters per queue (queue_status),
 * runs per minute over the last hour and workers alive. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "queue.h"
#include "registry.h"
#include "runs_recent.h"
#include "serve.h"

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

static cJSON *
queues_json(const struct queue_counts *q, size_t nq, const struct runs_count *c, size_t nc)
{
	cJSON *a = cJSON_CreateArray();
	size_t i;

	for (i = 0; i < nq; i++) {
		cJSON *o = cJSON_CreateObject();

		cJSON_AddStringToObject(o, "queue", q[i].queue);
		ADD_NUM(o, "ready", q[i].ready);
		ADD_NUM(o, "delayed", q[i].delayed);
		ADD_NUM(o, "reserved", q[i].reserved);
		ADD_NUM(o, "stale", q[i].stale);
		ADD_NUM(o, "failed", q[i].failed);
		ADD_NUM(o, "done_last_hour", done_in(c, nc, q[i].queue));
		if (q[i].oldest_ready_s >= 0)
			ADD_NUM(o, "oldest_ready_s", q[i].oldest_ready_s);
		else
			cJSON_AddNullToObject(o, "oldest_ready_s");
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

/* GET /api/overview: counters per queue, runs per minute over the last
 * hour by outcome, workers alive. */
MHD_RESULT
api_overview(struct req *r)
{
	struct queue_counts *q = NULL;
	struct runs_count *c = NULL;
	struct runs_minutes m;
	size_t nq = 0, nc = 0;
	uint64_t alive = 0;
	char err[ERRSZ];
	cJSON *doc, *chart;

	if (queue_status(r->db, r->srv->conf, NULL, &q, &nq, err) != DB_OK ||
	    runs_recent_counts(r->db, "queue", &c, &nc, err) != DB_OK ||
	    runs_recent_minutes(r->db, &m, err) != DB_OK ||
	    registry_count_alive(r->db, &alive, err) != DB_OK) {
		queue_counts_free(q, nq);
		runs_counts_free(c, nc);
		return serve_db_error(r, "overview", err);
	}
	doc = cJSON_CreateObject();
	cJSON_AddItemToObject(doc, "queues", queues_json(q, nq, c, nc));
	chart = cJSON_AddObjectToObject(doc, "runs_per_minute");
	cJSON_AddItemToObject(chart, "done", minutes_json(m.done));
	cJSON_AddItemToObject(chart, "retry", minutes_json(m.retry));
	cJSON_AddItemToObject(chart, "dead", minutes_json(m.dead));
	ADD_NUM(doc, "workers_alive", alive);
	queue_counts_free(q, nq);
	runs_counts_free(c, nc);
	return serve_json(r, 200, doc);
}
