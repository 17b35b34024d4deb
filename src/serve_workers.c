/* serve_workers.c -- GET /api/workers: the registry, dead workers marked. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "registry.h"
#include "serve_http.h"
#include "serve_workers.h"

/* GET /api/workers: the registry, dead workers marked. */
MHD_RESULT
api_workers(struct req *r)
{
	struct worker_row *w;
	size_t n, i;
	char err[ERRSZ];
	cJSON *doc, *a;

	if (registry_list(r->db, &w, &n, err) != DB_OK)
		return serve_db_error(r, "list workers", err);
	doc = cJSON_CreateObject();
	a = cJSON_AddArrayToObject(doc, "workers");
	for (i = 0; i < n; i++) {
		cJSON *o = cJSON_CreateObject();

		cJSON_AddStringToObject(o, "id", w[i].id);
		cJSON_AddStringToObject(o, "host", w[i].host);
		ADD_NUM(o, "pid", w[i].pid);
		cJSON_AddStringToObject(o, "queues", w[i].queues);
		ADD_NUM(o, "concurrency", w[i].concurrency);
		cJSON_AddStringToObject(o, "started_at", w[i].started_at);
		cJSON_AddStringToObject(o, "last_seen_at", w[i].last_seen_at);
		ADD_NUM(o, "seen_ago_ms", w[i].seen_ago_ms);
		ADD_NUM(o, "done", w[i].done);
		ADD_NUM(o, "retried", w[i].retried);
		ADD_NUM(o, "dead", w[i].dead);
		cJSON_AddStringToObject(o, "current_jobs", w[i].current_jobs);
		cJSON_AddBoolToObject(o, "alive", w[i].alive);
		cJSON_AddItemToArray(a, o);
	}
	registry_rows_free(w, n);
	return serve_json(r, 200, doc);
}
