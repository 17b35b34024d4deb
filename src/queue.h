/* queue.h -- every SQL statement that moves a job lives behind these. */
#ifndef JOBQ_QUEUE_H
#define JOBQ_QUEUE_H

#include <stddef.h>
#include <stdint.h>

#include "conf.h"
#include "db.h"

/* Returned when the job id does not exist where it was looked for. */
#define QUEUE_NOT_FOUND 2

#define LEASE_TOKEN_LEN 32

/* A reserved job, as the worker holds it. */
struct job {
	uint64_t id;
	char *queue;
	char *type;
	char *payload;
	size_t payload_len;
	int priority;
	unsigned attempt;      /* this attempt, 1-based */
	/* Whether the row's attempts counts this attempt yet.  A job is
	 * charged when its handler starts: by the claim for the jobs that
	 * start at once, by the next outcome transaction for a job reserved
	 * ahead (queue_write's charges), so that jobs a crashed worker held
	 * unstarted come back with nothing charged. */
	int charged;
	unsigned max_attempts; /* the job's own limit; 0: the handler's */
	int64_t age_ms;        /* since it was enqueued, by the database's clock */
	char created_at[32];   /* ISO 8601, UTC */
	char reserved_at[32];  /* the database's time when it was reserved */
	int64_t wait_ms;       /* how long it had been due when claimed; -1: unknown */
	/* Its lifecycle (sql/019): expires_ms is the time left, at the claim,
	 * before it must not start (<= 0: expired; INT64_MAX: never);
	 * cancel_by, who asked for it to be cancelled and when (CANCEL_WHO;
	 * "" when nobody did);
	 * checkpoint, the JSON an earlier attempt saved (NULL: none);
	 * traceparent, its W3C trace context ("" when none). */
	int64_t expires_ms;
	char cancel_by[600];
	char *checkpoint;
	char traceparent[56];
	/* Its dependencies (sql/021, 022), as the claim read them: waiters,
	 * that jobs wait for it (set for good: one may still be added while
	 * it runs, which the outcome's fence catches); waited, that it was
	 * enqueued waiting for others (fixed at enqueue).  Its outcome
	 * leaves out the statements for either while it is 0.  waiters is
	 * has_waiters itself (queue_states.h: WAITERS_SOLE). */
	int waiters, waited;
	/* Written waiting for other jobs (waiting_on > 0, no cancel asked)
	 * yet due: plain SQL that left out available_at's waiting marker
	 * (jobq(1)).  The claim puts it back to wait (queue_claim_park). */
	int early;
	uint64_t group_id; /* its group (groups.h); 0: none */
	char token[LEASE_TOKEN_LEN + 1];
	/* Progress the handler reported, written with the next lease
	 * extension when progress_new is set (queue_extend clears it). */
	int progress_new, progress_known;
	int progress; /* -1: none (written as NULL) */
	char progress_note[256];
	/* The newest checkpoint the handler wrote (compact JSON), written
	 * with the next lease extension when checkpoint_new is set
	 * (queue_extend clears it), so that a job whose worker dies keeps
	 * the last one that reached the worker. */
	char *checkpoint_save;
	int checkpoint_new;
	/* The TRACEPARENT this attempt's handler got: the job's trace id
	 * under the run's own span id (trace_for_run); "" until it starts. */
	char run_trace[56];
};

/* A claim whose answer never came: the connection dropped with its
 * stamping statement sent, so the rows may carry token, and those of
 * them whose ids are in charged were charged an attempt.
 * queue_release_lost gives them back.  token "": none. */
struct claim_lost {
	char token[LEASE_TOKEN_LEN + 1];
	uint64_t *charged;
	size_t ncharged;
};

struct reserve_req {
	char *const *queues; /* in the order they are drained */
	unsigned limit;      /* at most this many jobs */
	unsigned charge;     /* the first this many are charged an attempt now, the rest when they start */
	int64_t ttl_ms;      /* lease length */
	const char *worker;  /* reserved_by */
	enum reserve_mode mode;
	const struct conf *flow; /* max_running and rate limits; NULL: none */
	int *held;               /* out, if not NULL: set to 1 when a limit left due jobs */
	struct claim_lost *lost; /* out, if not NULL: a claim whose answer was lost */
	struct buf *parked;      /* out, if not NULL: the ids of early jobs it put back to wait (job.early) */
};

/* One execution of a handler, for the run history. */
struct run_record {
	const char *worker;
	int64_t duration_ms;
	const char *exit_status;
	const char *output;
	const char *error;
	const char *result; /* the handler's {"result": ...} JSON, or NULL */
	int unstarted;      /* the handler never ran: a row of no time (cancelled or expired unstarted) */
};

/* OUT_CANCEL and OUT_EXPIRE are final like OUT_DONE, without follow-ups:
 * the job was cancelled (its handler stopped, or never started), or its
 * expiry passed before it started. */
enum outcome_write { OUT_DONE, OUT_RETRY, OUT_DEAD, OUT_GIVEBACK, OUT_CANCEL, OUT_EXPIRE };

/* What became of one outcome in queue_write. */
enum outcome_state {
	OUTS_PENDING, /* not tried: an earlier transaction failed first */
	OUTS_FAILED,  /* its transaction failed (rc says how): try again */
	OUTS_WRITTEN, /* written */
	OUTS_LOST,    /* the lease was no longer ours: only its run row was written */
	OUTS_REFUSED, /* the server refused every form of it: nothing was written */
};

/* The hand-off (queue_write): an outcome that releases a waiting job
 * (sql/021) reserves it for the same worker in its own transaction, so
 * that the next link of a chain starts without a claim of its own (a
 * second commit).  Only the first job waiting for the one that ended,
 * when it is due now, in one of the worker's queues (queues: the SQL
 * list "'a','b'") and that queue is not paused; the jobs are read back
 * by token in the same transaction (jobs, njobs).  A worker under flow limits
 * hands nothing off: its claims keep the limits. */
struct handoff {
	const char *worker;
	const char *queues;
	int64_t ttl_ms;
	char token[LEASE_TOKEN_LEN + 1];
	/* out: the jobs handed off, read back inside the outcomes'
	 * transaction (queue_handoff_sql): the caller takes them (and frees
	 * the array) before its next queue_write */
	struct job **jobs;
	size_t njobs;
};

/* One outcome to write for a reserved job. */
struct outcome {
	const struct job *job;
	enum outcome_write kind;
	int64_t delay_ms;             /* retry: due again after this */
	const char *last_error;       /* retry */
	const char *exception;        /* dead: the error text */
	const char *exit_status;      /* dead: "exit 65" */
	const char *reason;           /* dead: why */
	const struct run_record *run; /* NULL: the handler never ran */
	int alone;                    /* in: in a transaction of its own */
	int minimal;                  /* in: without the handler's texts */
	int unsure;                   /* in: an earlier try's answer never came (applied or not) */
	enum outcome_state state;     /* out */
	int gained_waiter;            /* queue_write's own: a job waits for it since the claim */
	int cut;                      /* out: texts were cut to fit max_allowed_packet */
	char note[400];               /* out: what else happened to it, for the log */
	/* in, done only: follow-up jobs inserted in the same transaction
	 * as the done outcome, and only when its fence held */
	const struct enqueue_item *follow;
	size_t nfollow;
	/* in, retry, dead and give-back: the newest checkpoint the run wrote
	 * (compact JSON), stored with the job; NULL: the job keeps the one
	 * it has */
	const char *checkpoint;
	struct handoff *handoff; /* in: NULL, or the hand-off to try (ended jobs with waiters); out: its jobs */
	/* in, dead: the claim's attempt was never made (the attempts were
	 * used up before it): the dead-letter row counts the attempts made,
	 * job->attempt - 1, so that it never shows more than max_attempts
	 * for a job jobq stopped itself */
	int attempt_unmade;
	const char *worker; /* in: the worker writing it, which ends what its end cancels (final_cascade) */
	/* out: the jobs waiting for it that its end cancelled, ended in its
	 * transaction down the graph: [0] expired, [1] cancelled */
	uint64_t cascaded[2];
};

/* The attempt o's run row names: the claim counted one, which a job
 * ended unstarted never used, so its row names the attempts made, as
 * the expiry sweep's row of a job no worker held does (final.c). */
static inline unsigned
queue_run_attempt(const struct outcome *o)
{
	unsigned a = o->job->attempt;

	return o->run != NULL && o->run->unstarted && a > 0 ? a - 1 : a;
}

/* One new job. */
struct group_spec;

struct enqueue_item {
	const char *type;
	const char *queue;
	const char *payload;
	size_t payload_len;
	int priority;
	int64_t delay_ms;
	const char *at; /* "YYYY-MM-DD HH:MM:SS[.ffffff]" UTC, or NULL */
	unsigned max_attempts;
	const char *unique_key; /* NULL: none (see flow.h) */
	/* The job never starts after this (sql/019): expires_at, a UTC
	 * database time, or expires_in_ms after the insert; NULL and 0: never. */
	const char *expires_at;
	int64_t expires_in_ms;
	const char *traceparent; /* W3C trace context, or NULL */
	/* How many jobs it waits for that have not ended (deps.h): above 0
	 * it is inserted waiting, its due time kept in wait_until; after_any
	 * is its policy (sql/021). */
	unsigned waiting_on;
	int after_any;
	uint64_t group_id; /* the group it joins (groups.h); 0: none */
	/* A follow-up's group, joined (or made) by name in the outcome's
	 * transaction (groups_join_sql), or NULL. */
	const struct group_spec *group;
	/* A follow-up's "after": the jobs it waits for, by id, and the
	 * earlier follow-ups of the same run it waits for, by index; its
	 * parent's outcome transaction counts them (queue_follow.c). */
	const uint64_t *after;
	size_t nafter;
	const size_t *after_refs;
	size_t nafter_refs;
};

/* One `enqueue --batch` run as jobq_batches records it (queue_batch.c). */
struct batch_progress {
	char input_hash[17]; /* 64-bit hash of the input, in hex */
	uint64_t lines_total, jobs_total;
	uint64_t lines_done, jobs_done; /* committed: input lines 1..lines_done */
};

/* A queue whose trigger-kept count (jobq_counts) is not its number of
 * rows in jobs (queue_counts_drift). */
struct counts_drift {
	char *queue;
	int dead; /* the dead letter's count (failed_jobs), not the jobs' */
	int64_t kept, rows;
};

struct queue_counts {
	char *queue;
	uint64_t ready, delayed, reserved, stale, failed;
	uint64_t waiting;       /* for other jobs (deps.h); not in delayed */
	int64_t oldest_ready_s; /* -1: nothing ready */
	int paused;             /* `jobq pause` (flow.c) */
};

/* One job as `jobq show` prints it, from jobs or failed_jobs.  Times
 * are strings in the requested time zone; NULL when not applicable. */
struct job_view {
	uint64_t id;
	const char *state; /* ready, delayed, waiting, reserved, stale, failed */
	char *queue, *type, *payload;
	int priority;
	unsigned attempts, max_attempts; /* max_attempts 0: the handler's */
	char *created_at;
	char *available_at;
	char *not_before; /* a waiting job: its --delay/--at time, NULL when none is ahead */
	int64_t available_in_ms; /* negative: due since */
	char *reserved_by, *reserved_at, *lease_expires_at;
	int64_t lease_left_ms;
	char *last_error;
	char *failed_at, *exception, *exit_status, *reason;
	int progress; /* reserved: the handler's last progress; -1: none */
	char *progress_note;
	char *unique_key; /* enqueue --unique-key; NULL: none (dead letters: none) */
	char *checkpoint;  /* the JSON a handler saved for the next attempt; NULL: none */
	char *traceparent; /* the trace context it was enqueued with; NULL: none */
	char *expires_at;  /* it never starts after then (shown in tz); NULL: never */
	char *cancel_by;   /* a cancel was requested (its worker stops it) by...; NULL: none */
	char *cancel_at;   /* ... at (in tz) */
	uint64_t group_id; /* the group it is in (groups.h), while queued; 0: none */
	char *group_name;
};

/* What `jobq check --explain` reports about one reservation. */
struct explain_step {
	char query[16]; /* "due scan", "due groups" or "claim" */
	char type[32], key[64], rows[24], extra[256];
};

struct explain_report {
	struct explain_step steps[8];
	size_t nsteps;
	uint64_t due_groups, due_rows_read;
	char queue[NAME_MAX_LEN + 1];
	char priorities[256];
	uint64_t claimed, claim_rows_read;
	int nothing_due;
	int walked; /* the scan was cut short: priority groups were walked */
	int ordered; /* flow limits: the claim's groups were put in order */
	uint64_t order_groups, order_rows_read;
};

int queue_explain(struct db *db, const struct reserve_req *req, struct explain_report *x, char *err);
int queue_probe(struct db *db, enum reserve_mode *mode, char *err);
int queue_reserve(struct db *db, const struct reserve_req *req, struct job ***jobs, size_t *n, char *err);
void job_free(struct job *j);
const char *job_defect(const struct job *j, char *why, size_t whylen);
void queue_handoff_sql(struct db *db, struct buf *sql, const char *token);
int queue_handoff_read(struct db *db, struct handoff *h, char *err);
void queue_handoff_rows(struct db_res *rows, const char *token, struct job ***jobs, size_t *n);

int queue_outcome_applied(struct db *db, struct outcome *o, char *err);
int queue_release_lost(struct db *db, struct claim_lost *l, uint64_t *released, char *err);
void queue_lost_free(struct claim_lost *l);
int queue_write(struct db *db, struct outcome *o, size_t n, struct job *const *charge, size_t ncharge,
    char *err);
size_t queue_outcome_worst(size_t stdout_limit, size_t stderr_limit);
int queue_check_limits(const struct conf *c, size_t max_packet, char *err);
const char *queue_outcome_name(enum outcome_write k);
int queue_extend(struct db *db, struct job *const *jobs, size_t n, int64_t ttl_ms, int *lost, char *err);

void queue_enqueue_sql(struct db *db, struct buf *sql, const struct enqueue_item *items, size_t n, const char *cond);
int queue_enqueue(struct db *db, const struct enqueue_item *items, size_t n, uint64_t *first_id, char *err);
int queue_db_now(struct db *db, char *now, size_t len, char *err);
int enqueue_expiry_check(const struct enqueue_item *e, const char *now, char *err);
int queue_enqueue_uncounted(struct db *db, const struct enqueue_item *items, size_t n, char *err);
int queue_count_enqueued(struct db *db, const struct enqueue_item *items, size_t n, char *err);
int queue_batch_get(struct db *db, const char *key, struct batch_progress *p, int *found, char *err);
int queue_batch_open(struct db *db, const char *key, struct batch_progress *p, int *same, char *err);
int queue_batch_drop(struct db *db, const char *key, char *err);
/* Called by queue_batch_add between a chunk's rows and its progress:
 * DB_OK once the chunk before it has committed; DB_EWAIT when bounded is
 * set and it has not yet (the chunk is rolled back, and waits again
 * unbounded, holding nothing, before it is written whole); anything else
 * when it will not (the chunk is rolled back, err saying why). */
typedef int batch_turn(void *arg, int bounded, char *err);
int queue_batch_add(struct db *db, const char *key, struct batch_progress *p, uint64_t to_line,
    const struct enqueue_item *items, size_t n, uint64_t gid, batch_turn *turn, void *turn_arg, char *err);
int queue_status(struct db *db, const struct conf *c, const char *only_queue, struct queue_counts **out,
    size_t *n, char *err);
void queue_counts_free(struct queue_counts *q, size_t n);
int queue_counts_drift(struct db *db, struct counts_drift **out, size_t *n, char *err);
void queue_counts_drift_free(struct counts_drift *d, size_t n);
int queue_counts_repair(struct db *db, char *err);
int queue_show(struct db *db, uint64_t id, const char *tz, struct job_view *v, char *err);
int failed_show(struct db *db, uint64_t id, const char *tz, struct job_view *v, char *err);
void job_view_free(struct job_view *v);
struct conf;
int job_view_ended(const struct job_view *v);
void job_view_policy(const struct conf *c, const struct job_view *v, unsigned *max, int64_t *next_ms, unsigned *failing);
int queue_release_stale(struct db *db, uint64_t *released, char *err);

#endif
