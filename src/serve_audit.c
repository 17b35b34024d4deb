/* serve_audit.c -- the audit trail of the dashboard, below the page
 * handlers that take admin actions (serve_jobs.c, serve_failed.c,
 * serve_enqueue.c, serve_queues.c, serve_schedules.c).  Each endpoint is
 * a thin layer over the same queue_*, failed_*, registry_* and runs_*
 * functions the CLI calls: what a button does and what `jobq failed
 * retry` does cannot drift apart.  Every admin action is written to the
 * audit table in the transaction that makes the change (jobq(1): "every
 * action is written to the audit table"): whatever happens to the
 * connection, the change and its row are there together or not at
 * all. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"
#include "log.h"
#include "serve_audit.h"

/* The audit row of an action r's user takes, on count jobs (0: on the
 * row's one job, or none).  It points into r and detail. */
struct audit_entry
serve_audit_entry(struct req *r, const char *action, uint64_t count, const char *detail)
{
	struct audit_entry e = { r->user->name, r->addr, action, count, detail };

	return e;
}

/* Runs act and the audit row of r's user's action on job_id (0: none)
 * in one transaction (audit_tx): both or neither. */
int
serve_audited(struct req *r, const char *action, uint64_t job_id, const char *detail, audit_act_fn *act,
    void *arg, char *err)
{
	struct audit_entry e = serve_audit_entry(r, action, 0, detail);

	return audit_tx(r->db, &e, job_id, act, arg, err);
}

/* Records an admin action on job_id (0: on none, or on many) that was
 * on count jobs in all (0: only job_id, or none), in a transaction of
 * its own: for what has no change of its own to go with (a summary row
 * of a bulk action whose jobs each carry theirs).  A failure is logged
 * (the action itself is done and must be reported as done). */
void
serve_audit_count(struct req *r, const char *action, uint64_t job_id, uint64_t count, const char *detail)
{
	struct audit_entry e = serve_audit_entry(r, action, count, detail);
	char err[ERRSZ];

	if (audit_add_entry(r->db, &e, job_id, err) != DB_OK)
		log_error("serve: audit %s by %s: %s", action, r->user->name, err);
}

/* Records that the server stopped a long action of r's user part way
 * (its session ended, or its admin role was taken away, as it ran): in
 * the server's name (SERVE_AUDIT_SERVER), not the user's, who no longer
 * had the right to act when it was written.  The row's count is s->done;
 * its detail names the user, says what the run did and left, and why it
 * stopped (why up to its "; the jobs after it ..."), the filter (what)
 * last: "50 jobs, 0 refused, then the server stopped the run of ada (170
 * left): WHY: WHAT".  Every action that stops this way writes its row
 * here, so they read alike.  A failure is logged, as serve_audit_count. */
void
serve_audit_stopped(struct req *r, const char *action, const struct serve_stop *s, const char *why,
    const char *what)
{
	struct audit_entry e = { SERVE_AUDIT_SERVER, r->addr, action, s->done, NULL };
	char left[48] = "", err[ERRSZ], *detail;

	if (s->left >= 0)
		snprintf(left, sizeof left, " (%lld left)", (long long)s->left);
	detail = xasprintf("%llu jobs, %llu refused%s, then the server stopped the run of %s%s: %.*s: %s",
	    (unsigned long long)s->done, (unsigned long long)s->refused, s->also != NULL ? s->also : "",
	    r->user->name, left, (int)strcspn(why, ";"), why, what);
	e.detail = detail;
	if (audit_add_entry(r->db, &e, 0, err) != DB_OK)
		log_error("serve: audit the stop of %s by %s: %s", action, r->user->name, err);
	free(detail);
}
