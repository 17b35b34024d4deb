/* serve_api.c -- what the JSON endpoints (serve_overview.c, serve_jobs.c,
 * serve_failed.c, serve_workers.c, serve_enqueue.c) share.  Each endpoint
 * is a thin layer over the same queue_*, failed_*, registry_* and runs_*
 * functions the CLI calls: what a button does and what `jobq failed
 * retry` does cannot drift apart.  Every admin action is written to the
 * audit table (serve_audit). */
#include "config.h"

#include "audit.h"
#include "log.h"
#include "serve.h"

void
serve_add_str_or_null(cJSON *o, const char *k, const char *v)
{
	if (v != NULL)
		cJSON_AddStringToObject(o, k, v);
	else
		cJSON_AddNullToObject(o, k);
}

/* A whole number from the query string in [min, max]; def when absent;
 * -1 when malformed. */
int
serve_query_uint(struct req *r, const char *key, int64_t min, int64_t max, int64_t def, int64_t *out)
{
	const char *v = serve_query(r, key);

	*out = def;
	return v == NULL ? 0 : str_to_int64(v, min, max, out);
}

/* Records an admin action; a failure is logged (the action itself is
 * done and must be reported as done). */
void
serve_audit(struct req *r, const char *action, uint64_t job_id, const char *detail)
{
	char err[ERRSZ];

	if (audit_add(r->db, r->user->name, r->addr, action, job_id, detail, err) != DB_OK)
		log_error("serve: audit %s by %s: %s", action, r->user->name, err);
}
