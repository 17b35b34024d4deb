/* queue_states.h -- the SQL condition of each state of a row of jobs
 * (DESIGN 5b), for every statement that lists or counts by state. */
#ifndef JOBQ_QUEUE_STATES_H
#define JOBQ_QUEUE_STATES_H

#include <string.h>

/* The SQL condition of each state (DESIGN 5b), the same as
 * queue_status counts them, so the list and the counters agree on every
 * row, whatever another program wrote: a token without an expiry is no
 * live lease (stale); a row nobody holds is ready or delayed by due_at,
 * when the reservation takes it.  Each is never NULL. */
#define IS_READY "lease_token IS NULL AND due_at <= UTC_TIMESTAMP(6)"
#define IS_DELAYED                                                    \
	"lease_token IS NULL AND due_at > UTC_TIMESTAMP(6) AND NOT (" \
	"due_at >= '9999-12-31 23:59:59' AND waiting_on > 0)"
/* The available_at of a job that waits for other jobs (deps.h): after
 * every due row of the reservation index, so claims never read it. */
#define DEPS_NEVER "'9999-12-31 23:59:59'"

/* Waiting for other jobs (deps.h): due at DEPS_NEVER with jobs still to
 * end, so status counts it on the due index like the others (a row
 * another program put at that time with none to wait for is delayed). */
/* jobs.has_waiters (sql/022): 0, nothing waits for the job; 1, jobs
 * wait for it (what plain SQL sets); 2, jobs wait for it and each waits
 * for it alone; 3, one job waits for it, and for it alone.  Only jobq's
 * own enqueue sets 2 and 3, so that the job's end leaves out taking down
 * counts above 1, and with 3 the release too once its hand-off took
 * the one waiter (deps.c, queue_outcome_sql.c).  A second waiter of it
 * alone turns 3 into 2; a waiter that waits for several jobs sets 1 on
 * each of them, over a 2 or 3, for good. */
#define WAITERS_SOLE 2
#define WAITERS_ONE 3
/* The start of the statement that tells the jobs listed after it (ids,
 * closed by ")") that a job waits for them, a job that waits for n. */
#define WAITERS_SET(n)                                                                            \
	((n) == 1 ? "UPDATE jobs SET has_waiters = IF(has_waiters = 0, 3, 2) WHERE has_waiters IN (0, 3)" \
	            " AND id IN ("                                                                    \
	          : "UPDATE jobs SET has_waiters = 1 WHERE has_waiters <> 1 AND id IN (")

#define IS_WAITING "lease_token IS NULL AND due_at >= '9999-12-31 23:59:59' AND waiting_on > 0"
#define IS_RESERVED "lease_token IS NOT NULL AND COALESCE(lease_expires_at > UTC_TIMESTAMP(6), 0)"
#define IS_STALE "lease_token IS NOT NULL AND COALESCE(lease_expires_at <= UTC_TIMESTAMP(6), 1)"

/* Who asked for a job's cancel and when, as every run it ends says it
 * ("cancelled by " CANCEL_WHO): "alice at 2026-12-05 20:01:02 UTC".  A
 * row another program wrote with cancel_by alone still names who. */
#define CANCEL_WHO "CONCAT(cancel_by, COALESCE(CONCAT(' at ', LEFT(cancel_at, 19), ' UTC'), ''))"

/* The states of a job still in the queue, in the order every list and
 * count of them gives (status, metrics, group show). */
#define QUEUED_STATES                                              \
	{                                                          \
		"ready", "delayed", "waiting", "reserved", "stale" \
	}

/* The state of a row as one SQL expression. */
#define STATE_OF_ROW                                                             \
	"CASE WHEN " IS_READY " THEN 'ready' WHEN " IS_WAITING " THEN 'waiting'" \
	" WHEN " IS_DELAYED " THEN 'delayed'"                                    \
	" WHEN " IS_RESERVED " THEN 'reserved' ELSE 'stale' END"

/* The outcomes of a run that ends its job.  A job that left both tables
 * ended as its last such run says: a "lost" row (a worker whose lease
 * had passed, writing late) or a retry row never ends a job, and may
 * come after the run that did. */
#define RUN_ENDS_JOB "outcome IN ('done', 'dead', 'cancelled', 'expired')"

/* RUN_ENDS_JOB in C: the outcome word (a static string) when a run's
 * outcome ends its job, else NULL (also for NULL). */
static inline const char *
run_end_word(const char *outcome)
{
	static const char *const ends[] = { "done", "dead", "cancelled", "expired" };
	size_t i;

	for (i = 0; outcome != NULL && i < sizeof ends / sizeof ends[0]; i++)
		if (strcmp(outcome, ends[i]) == 0)
			return ends[i];
	return NULL;
}

/* A run row of a handler that ran: a job cancelled or expired before its
 * handler started has a row of no time (final.c, slot_end_unrun) that
 * says how it ended, and is no run in the counts of runs. */
#define RUN_HANDLER_RAN "NOT (outcome IN ('cancelled', 'expired') AND duration_ms = 0)"

/* The state of the job whose id is the SQL expression X (DESIGN 5b), or
 * how it ended: the dead letter, then its last run; 'gone' when neither
 * knows it (pruned). */
#define JOB_STATE_OF(X)                                                  \
	"COALESCE((SELECT " STATE_OF_ROW " FROM jobs WHERE id = " X ")," \
	" (SELECT 'failed' FROM failed_jobs WHERE id = " X "),"          \
	" (SELECT outcome FROM job_runs WHERE job_id = " X " AND " RUN_ENDS_JOB " ORDER BY id DESC LIMIT 1), 'gone')"

#endif
