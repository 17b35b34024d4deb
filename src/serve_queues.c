/* serve_queues.c -- POST /api/queues/pause and /api/queues/resume: the
 * dashboard's buttons for `jobq pause|resume QUEUE`, over the same
 * flow_pause() (the state lives in the database, so every worker on
 * every host sees it within one poll). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "flow.h"
#include "serve_audit.h"
#include "serve_http.h"
#include "serve_overview.h"
#include "serve_queues.h"

/* What pause_change returns when the queue was as asked already: no
 * change, so no audit row (audit_tx rolls back and passes it on). */
#define UNCHANGED 1

struct pause {
	const char *queue;
	int pause;
};

static int
pause_change(struct db *db, void *arg, char *err)
{
	const struct pause *p = arg;
	int changed, rc = flow_pause(db, p->queue, p->pause, &changed, err);

	return rc == DB_OK && !changed ? UNCHANGED : rc;
}

/* The change and its audit row in one transaction; when its answer was
 * lost, once more after a reconnect: the switch is the same the second
 * time, so a first that took leaves it UNCHANGED (no second row) and
 * one that did not is made now.  *unsure says the first was lost. */
static int
pause_audited(struct req *r, struct pause *p, int *unsure, char *err)
{
	const char *action = p->pause ? "queue-pause" : "queue-resume";
	int rc = serve_audited(r, action, 0, p->queue, pause_change, p, err);

	if (serve_reconnect_unsure(r, rc, unsure))
		rc = serve_audited(r, action, 0, p->queue, pause_change, p, err);
	return rc;
}

/* Pauses or resumes a queue, the change and its audit row in one
 * transaction; 200 once the queue is as asked ("changed": whether this
 * request changed it, null when its first answer was lost). */
static MHD_RESULT
pause_queue(struct req *r, int pause)
{
	cJSON *in = serve_body_json(r), *doc;
	const char *queue = cJSON_GetStringValue(cJSON_GetObjectItem(in, "queue"));
	const char *what = pause ? "pause queue" : "resume queue";
	char err[ERRSZ];
	struct pause p = { queue, pause };
	MHD_RESULT ret;
	int rc, unsure = 0;

	if (queue == NULL || *queue == '\0')
		ret = serve_error(r, 400, "expected {\"queue\": \"QUEUE\"}");
	else if (!conf_valid_name(queue)) /* no queue has it: not worth a query */
		ret = serve_error(r, 400, "queue: a queue name is 1-64 letters, digits, '_', '.' or '-'");
	else if (pause && !conf_has_queue(r->srv->conf, queue))
		ret = serve_error(r, 404, "no such queue in the configuration");
	else if ((rc = pause_audited(r, &p, &unsure, err)) != DB_OK && rc != UNCHANGED)
		ret = unsure ? serve_db_unsure(r, what, err) : serve_db_error(r, what, err);
	else if (rc == UNCHANGED && !unsure && !conf_has_queue(r->srv->conf, queue))
		/* a queue the configuration dropped is resumed only if paused */
		ret = serve_error(r, 404, "no such queue in the configuration, and not paused");
	else {
		/* The overview snapshot would show the old state for up to
		 * overview_cache: the next request computes a fresh one. */
		serve_overview_invalidate();
		doc = cJSON_CreateObject();
		cJSON_AddStringToObject(doc, "queue", queue);
		cJSON_AddBoolToObject(doc, "paused", pause);
		if (unsure && rc == UNCHANGED)
			cJSON_AddNullToObject(doc, "changed");
		else
			cJSON_AddBoolToObject(doc, "changed", rc == DB_OK);
		ret = serve_json(r, 200, doc);
	}
	cJSON_Delete(in);
	return ret;
}

/* POST /api/queues/pause {"queue"} */
MHD_RESULT
api_queue_pause(struct req *r)
{
	return pause_queue(r, 1);
}

/* POST /api/queues/resume {"queue"} */
MHD_RESULT
api_queue_resume(struct req *r)
{
	return pause_queue(r, 0);
}
