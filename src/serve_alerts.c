/* serve_alerts.c -- GET /api/alerts: the watchdogs' incidents, open ones
 * first (oldest first), then those cleared in the last day (newest
 * first), each as on_alert reads it (incident_json) without the event. */
#include "config.h"

#include <stdlib.h>

#include "incidents.h"
#include "serve_alerts.h"
#include "serve_http.h"

#define CLEARED_HOURS 24

/* GET /api/alerts: {"alerts": [{id, kind, name, reason, raised_at,
 * cleared_at, open}, ...], "open": N}. */
MHD_RESULT
api_alerts(struct req *r)
{
	struct incident *x;
	size_t n, i, open = 0;
	char err[ERRSZ];
	cJSON *doc, *a;

	if (incidents_list(r->db, CLEARED_HOURS, &x, &n, err) != DB_OK)
		return serve_db_error(r, "list alerts", err);
	doc = cJSON_CreateObject();
	a = cJSON_AddArrayToObject(doc, "alerts");
	for (i = 0; i < n; i++) {
		char *json = incident_json(&x[i], NULL);
		cJSON *o = cJSON_Parse(json);

		free(json);
		if (o == NULL)
			fatal("cJSON_Parse: out of memory");
		cJSON_AddItemToArray(a, o);
		open += x[i].open != 0;
	}
	cJSON_AddNumberToObject(doc, "open", (double)open);
	incidents_free(x, n);
	return serve_json(r, 200, doc);
}
