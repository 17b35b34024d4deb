/* queue_reserve_int.h -- the reservation's steps, shared by its files only.
 *
 * From the top: queue_reserve.c (the driver) and queue_explain.c (jobq
 * check --explain) use queue_due.c (which priorities have due jobs) and
 * queue_limits.c (a queue's claims under its flow limits), which uses
 * one claim mode, queue_claim_skip.c (SKIP LOCKED) or
 * queue_claim_update.c (the conditional UPDATE), both over queue_claim.c
 * (the claim and its rows). */
#ifndef JOBQ_QUEUE_RESERVE_INT_H
#define JOBQ_QUEUE_RESERVE_INT_H

#include "queue.h"
#include "queue_states.h"

struct flow_gate;

/* When the job a claim takes fell due, as the row was before the claim
 * stamped it: its available_at, or, for a row whose lease ran out after
 * an attempt was charged (its worker died running it), when the lease
 * ran out.  A job's wait (expire_after, the wait metric, its run's
 * wait_ms) is measured from here: a dead worker's run costs the job
 * that attempt's time, as a retry does, not its place under
 * expire_after, which counts time due without starting.  A job held
 * ahead by a worker that died, never started, was charged nothing
 * (job.charged) and keeps its available_at, unless an earlier attempt
 * counts.  The row cannot tell a start from a hold then: such a job
 * gains the time it was held, erring toward running a job rather than
 * ending one that may have run.
 * Each stamp sets available_at to this, first in its SET so that it
 * reads the row unstamped, and a read after the stamp finds it there
 * (JOB_COLUMNS). */
#define FELL_DUE                                                                                       \
	"IF(attempts > 0 AND lease_expires_at IS NOT NULL, GREATEST(available_at, lease_expires_at), " \
	"available_at)"
/* FELL_DUE as a stamp writes it to available_at: a row another program
 * wrote with a zero date there reads as NULL in any expression under
 * the session's NO_ZERO_DATE, and the NOT NULL column would refuse the
 * whole claim, every poll, for that one row; it is due now instead. */
#define FELL_DUE_SET "COALESCE(" FELL_DUE ", UTC_TIMESTAMP(6))"

/* The columns of a claimed job as queue_claim_rows reads them, its wait
 * measured from the SQL expression due; the claim adds the reservation
 * time as the last one.  group_id is read here so that an outcome
 * appends its group's statements only for a job in a group (groups.c);
 * one column says both whether the job waited (job.waited, 1) and
 * whether it is early (job.early, 2). */
#define JOB_COLUMNS_DUE(due)                                                        \
	"id, queue, type, payload, priority, attempts, COALESCE(max_attempts, 0), " \
	"TIMESTAMPDIFF(MICROSECOND, created_at, UTC_TIMESTAMP(6)) DIV 1000, created_at, " \
	"TIMESTAMPDIFF(MICROSECOND, " due ", UTC_TIMESTAMP(6)) DIV 1000, " \
	"TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), expires_at) DIV 1000, " CANCEL_WHO ", checkpoint, traceparent, " \
	"has_waiters, (wait_until IS NOT NULL) + 2 * (waiting_on > 0 AND cancel_by IS NULL), group_id, "
/* ... of a row its claim (or hand-off) has stamped. */
#define JOB_COLUMNS JOB_COLUMNS_DUE("available_at")
/* ... of a row read before its claim stamps it. */
#define JOB_COLUMNS_UNSTAMPED JOB_COLUMNS_DUE(FELL_DUE)

/* The attempt counter's ceiling (attempts is INT UNSIGNED). */
#define ATTEMPTS_MAX 4294967295u

/* One claim: up to limit jobs of one queue's due priorities, stamped
 * with token; the jobs it took so far are jobs[0..n).  Under a gate it
 * may have a second part (rest_only), claimed after the gated one in the
 * same transaction: up to rest jobs more, and the slots the gate (or
 * other workers) left of the first part's limit, so that a type with a
 * limit and the types without one cost one claim. */
struct claim {
	const struct reserve_req *req;
	const char *queue;
	const char *priorities;
	unsigned limit;
	unsigned charge; /* jobs still to charge at claim (reserve_req.charge, counted down) */
	const char *only;             /* SQL: "AND type ..." of a flow-governed claim, or "" */
	const struct flow_gate *gate; /* max_running and rate (flow.c); NULL: none */
	const char *rest_only;        /* SQL: a second part, of types no gate governs, or NULL */
	const char *both_only;        /* SQL: the two parts together */
	unsigned rest;                /* its jobs, besides those the gated part fell short of limit */
	int held;                     /* the gate let fewer jobs be claimed than asked */
	char token[LEASE_TOKEN_LEN + 1];
	struct job **jobs;
	size_t n;
};

/* queue_lost.c: a claim whose answer may be lost */
void queue_lost_set(struct claim *cl, size_t ncharged);
void queue_lost_set_ids(const struct claim *cl, const uint64_t *charged, size_t n);
void queue_lost_settle(struct claim *cl, int rc);

/* queue_claim.c: the claim and its rows */
void queue_claim_drop(struct claim *cl);
int queue_claim_rows(struct claim *cl, struct db_res *r, int add_attempt);
int queue_claim_park(struct db *db, struct claim *cl, struct buf *parked, char *err);

/* queue_claim_skip.c: SKIP LOCKED */
void queue_claim_skip_sql(struct db *db, struct buf *sql, const struct claim *cl);
int queue_claim_skip(struct db *db, struct claim *cl, char *err);

/* queue_claim_update.c: the conditional UPDATE */
void queue_claim_update_sql(struct db *db, struct buf *sql, const struct claim *cl);
int queue_claim_update(struct db *db, struct claim *cl, char *err);

/* queue_limits.c: the claims of one queue under its flow limits */
int queue_limits_claim(struct db *db, struct claim *cl, struct job **jobs, size_t *n, char *err);
void queue_limits_order_sql(struct db *db, const struct claim *cl, struct buf *sql);
int queue_limits_order_groups(struct db *db, const struct claim *cl, uint64_t *groups, char *err);

/* queue_due.c: which priorities have due jobs */
#define DUE_SLACK 16 /* due rows the scan reads beyond the claim's limit */

/* The due priorities of one queue, ascending. */
struct due {
	int *prio;
	size_t n;
	unsigned rows; /* due index entries the scan returned */
	int lowest;    /* the queue's smallest priority, due or not */
	int bound;     /* the groups up to this one hold enough due rows */
};

void queue_due_free(struct due *d, size_t n);
void queue_due_list(const struct due *d, struct buf *list);
void queue_due_scan_sql(struct db *db, struct buf *sql, char *const *queues, unsigned scan);
int queue_due_scan(struct db *db, char *const *queues, unsigned limit, struct due **due, char *err);
void queue_due_walk_sql(struct db *db, struct buf *sql, const char *queue, const char *after);
int queue_due_walk(struct db *db, const char *queue, int bound, struct due *d, char *err);
int queue_due_needs_walk(const struct due *d, unsigned scan);
int queue_due_complete(struct db *db, const char *queue, unsigned scan, struct due *d, char *err);

#endif
