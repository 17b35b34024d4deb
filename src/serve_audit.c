/* serve_audit.c -- the audit trail of the dashboard, below the page
 * handlers that take admin actions (serve_jobs.c, serve_failed.c,
 * serve_enqueue.c, serve_queues.c, serve_schedules.c).  Each endpoint is
 * a thin layer over the same queue_*, failed_*, registry_* and runs_*
 * functions the CLI calls: what a button does and what `jobq failed
 * retry` does cannot drift apart.  Every admin action is written to the
 * audit table (serve_audit). */
#include "config.h"

#include "audit.h"
#include "log.h"
#include "serve_audit.h"

/* Records an admin action on job_id (0: on none, or on many) that was
 * on count jobs in all (0: only job_id, or none); a failure is logged
 * (the action itself is done and must be reported as done). */
void
serve_audit_count(struct req *r, const char *action, uint64_t job_id, uint64_t count, const char *detail)
{
	struct audit_entry e = { r->user->name, r->addr, action, count, detail };
	char err[ERRSZ];

	if (audit_add_entry(r->db, &e, job_id, err) != DB_OK)
		log_error("serve: audit %s by %s: %s", action, r->user->name, err);
}

/* Records an admin action on one job (job_id) or on none (0). */
void
serve_audit(struct req *r, const char *action, uint64_t job_id, const char *detail)
{
	serve_audit_count(r, action, job_id, 0, detail);
}
