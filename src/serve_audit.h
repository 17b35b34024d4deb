/* serve_audit.h -- the audit trail of the dashboard's admin actions. */
#ifndef JOBQ_SERVE_AUDIT_H
#define JOBQ_SERVE_AUDIT_H

#include <stdint.h>

#include "audit.h"
#include "serve_http.h"

/* The name the audit rows the server writes of itself go under: no
 * user can have it (a user's name has no space). */
#define SERVE_AUDIT_SERVER "jobq serve"

struct audit_entry serve_audit_entry(struct req *r, const char *action, uint64_t count, const char *detail);
int serve_audited(struct req *r, const char *action, uint64_t job_id, const char *detail, audit_act_fn *act,
    void *arg, char *err);
void serve_audit_count(
    struct req *r, const char *action, uint64_t job_id, uint64_t count, const char *detail);

/* What a long action of many jobs had done when the server stopped it. */
struct serve_stop {
	uint64_t done;    /* jobs acted on */
	uint64_t refused; /* jobs the server refused (a live lease, a key taken) */
	const char *also; /* more to say after the counts (", N of ... left"), or NULL */
	int64_t left;     /* jobs of the set it had not come to, still in it; -1: unknown */
};

void serve_audit_stopped(
    struct req *r, const char *action, const struct serve_stop *s, const char *why, const char *what);

#endif
