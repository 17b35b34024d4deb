/* worker_int.h -- what the parts of `jobq work` share: the worker and its
 * slots, and the steps each file below worker.c offers the ones above it.
 * Private to worker*.c; the rest of jobq sees only worker.h.
 *
 * The files, in the order of the loop (worker.c's header comment):
 *   worker.c          the loop: set-up, the turn's steps, stop conditions
 *   worker_signal.c   1. signals read as events, children reaped, stopping
 *   worker_conn.c     2. the connection lost and restored
 *   worker_write.c    3. a handler's outcome, decided and written
 *   worker_lease.c    4. the heartbeat: lease extensions and progress
 *   worker_row.c         and the worker's row in the registry
 *   worker_cancel.c      and the cancel requests for the jobs it holds
 *   worker_watch.c    5. the watchdogs and their alerts
 *   worker_reserve.c     reserving jobs, and how many ahead
 *   worker_start.c       and starting their handlers
 *   worker_poll.c     6. sleeping in poll(), and the database waiter
 *   worker_keep.c     keep_time, between any two database calls
 *   worker_setup.c    process set-up: fd budget, identity, wait limit
 *   worker_slot.c     counting and clearing slots
 *   worker_span.c     the OpenTelemetry spans of runs and claims
 * Calls only go down, never back up: worker.c calls them all; poll calls
 * keep, reserve, signal and cancel; cancel calls conn and slot; lease calls keep and row; keep calls signal,
 * start and write; reserve and signal call start; and start, write,
 * conn, row, setup and slot call no other worker file but slot; watch
 * calls conn; write and reserve call span, which calls none. */
#ifndef JOBQ_WORKER_INT_H
#define JOBQ_WORKER_INT_H

#include <stdint.h>

#include "control.h"
#include "queue.h"
#include "registry.h"
#include "watchdog.h"
#include "util.h"
#include "worker.h" /* struct worker_opts: the options only, no call up */

struct pollfd;
struct alerts;
struct metrics_http;
struct otlp;
struct runner;
struct wakeup;

/* Group commit (hold_writes): a busy worker holds a new outcome up to
 * WRITE_HOLD_MS, or until WRITE_BATCH wait, so that they share one
 * transaction and one log flush. */
#define WRITE_HOLD_MS 25
#define WRITE_BATCH 32
/* A new checkpoint from a handler makes the heartbeat, which stores it,
 * due within this long: a worker killed after that loses none. */
#define CHECKPOINT_SAVE_MS 200

/* A slot: a reserved job from its claim until its outcome is written.
 * READY: reserved ahead, its handler not started yet (at most
 * `concurrency` handlers run; see want_jobs); RUNNING: its handler runs;
 * WRITING: its outcome waits to be written. */
enum slot_state { SLOT_FREE, SLOT_READY, SLOT_RUNNING, SLOT_WRITING };

struct slot {
	enum slot_state state;
	struct job *job;
	const struct handler *h;
	unsigned max_attempts;
	struct runner *run;
	int has_run;
	int64_t started_ns; /* when its handler started, Unix ns (its span's start) */
	/* the outcome waiting to be written */
	enum outcome_write write;
	int64_t delay_ms;
	int64_t duration_ms;
	char *output;
	char *error;
	char words[128];
	char reason[256];
	/* dead unrun with its attempts used up: the claim's attempt was
	 * never made, and the dead-letter row counts only those that were */
	int attempt_unmade;
	int lease_lost;
	/* The lease as we reckon it: it ends at lease_until (monotonic ms,
	 * counted from when the reservation or the last extension that went
	 * through was sent, so never later than the server's expiry). */
	int64_t lease_until;
	int64_t extend_tried;        /* when an extension was last sent */
	int extend_failed;           /* the last one did not go through */
	int extend_warned;           /* and that was logged */
	int lease_stop;              /* its handler was told to stop for the lease */
	int cancelling;              /* its handler was told to stop: the job was cancelled */
	int retaken;                 /* a process started for the job ended unread (start_again) */
	uint64_t seq;                /* order of reservation: READY jobs start in it */
	int64_t reserved_mono;       /* when it was reserved (monotonic ms) */
	int ahead;                   /* reserved while every handler slot was busy */
	int64_t written_by;          /* WRITING: its outcome is held for a group until then */
	unsigned write_tries;        /* writes of this outcome that lost the connection */
	int write_unsure;            /* one of them may have been applied (queue_write checks) */
	unsigned write_locked;       /* writes of this outcome that waited on a lock held elsewhere */
	struct control ctl;          /* what the handler said on its control channel */
	unsigned ckpt_heard;         /* checkpoint lines the poll loop has seen (worker_poll.c) */
	unsigned ckpt_noted;         /* and the heartbeat has taken (worker_lease.c) */
	struct enqueue_item *follow; /* done: its follow-ups, and on_success's job */
	size_t nfollow;
};

struct worker {
	const struct conf *conf;
	const struct worker_opts *opts;
	struct db *db;
	char id[160];
	char host[128];
	enum reserve_mode mode;
	struct slot *slots;
	unsigned nslots;       /* slots in the array: held jobs, at most */
	unsigned in_state[4];  /* slots in each enum slot_state but SLOT_FREE (slot_set) */
	unsigned conc;   /* handlers at once: --concurrency */
	uint64_t seq;    /* reservations so far, for slot.seq */
	int backlog;     /* the last reservation got all it asked for */
	int64_t avg_ms;  /* recent handlers' mean duration; -1: none yet */
	struct worker_counts counts;
	uint64_t started;  /* jobs taken */
	uint64_t finished; /* outcomes written or dropped */
	int stopping;      /* 1: finish running jobs; 2: terminate them */
	int64_t stopping_since;
	int empty; /* the last reservation found nothing */
	int reserved_once;
	unsigned claim_conflicts; /* reservations in a row that lost every rerun */
	/* serve_io's poll set (worker_poll.c), made once: the loop turns
	 * for every pipe read, and allocating on each turn only churns the
	 * heap. */
	struct pollfd *pfd;
	int *pfd_first, *pfd_count;
	int db_up;
	int64_t down_since, reconnect_at, reconnect_delay;
	int64_t next_poll, next_heartbeat, next_write, max_time_at;
	int64_t ckpt_due; /* when new checkpoints are saved (worker_lease.c), 0: none to */
	int64_t active_at;           /* when work was last found, or a wakeup came */
	struct wakeup *wake;         /* NULL: no wakeups, polling only */
	int64_t next_schedule;       /* --schedule: when to tick next */
	int64_t next_prune;          /* when finished jobs' runs are pruned next (worker_prune.c) */
	int64_t next_cancel;         /* when held jobs are next checked for cancel requests */
	int64_t next_sweep;          /* when expired jobs are next swept (worker_prune.c) */
	int64_t next_watch;          /* when the watchdogs run next (worker_watch.c) */
	struct watchdog_unsure watch_unsure; /* their writes whose answers were lost */
	int write_now;               /* an outcome is new: write without waiting */
	int charge_due;              /* a job reserved ahead started uncharged (job.charged) */
	int write_waited;            /* the last write waited on a lock held elsewhere */
	struct claim_lost lost;      /* a claim whose answer never came, to give back */
	struct handoff handoff;      /* its outcomes' hand-off (queue.h); worker.queues NULL: off */
	int handoff_unsure;          /* the last write failed: its hand-offs may stand under the token */
	uint64_t *handoff_taken;     /* the jobs taken under the token so far */
	size_t nhandoff_taken, handoff_taken_cap;
	char *handoff_queues;        /* handoff.queues's storage */
	int64_t write_delay;         /* between tries of a write that failed */
	int64_t write_failing_since; /* 0: the last write went through */
	int64_t wait_ms;             /* the database wait limit (db_set_wait_limit) */
	int64_t start_delay;         /* handler starts fail: pause reserving... */
	int64_t start_paused_until;  /* ...until then */
	char **paused;               /* the queues paused when last looked (worker_start.c)... */
	int64_t paused_looked;       /* ...then (monotonic ms) */
	char db_err[ERRSZ];
	char start_err[ERRSZ];
	struct alerts *alerts; /* on_dead programs running */
	struct metrics_http *metrics; /* its /metrics (metrics_listen); NULL: none */
	struct otlp *otlp;            /* its span exporter (otlp_endpoint); NULL: none */
};

static inline int64_t
min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

/* worker_signal.c */
void signal_hold(void);
int signal_setup(char *err);
void signal_restore(void);
int signal_fd(void);
void signal_read(struct worker *w);
void signal_stop(struct worker *w, int level, const char *why);

/* worker_conn.c */
void conn_failed(struct worker *w, int rc, const char *what, const char *err);
void conn_reconnect(struct worker *w, int64_t now);

/* worker_reserve.c (the rest of it is below) */
void reserve_place(struct worker *w, struct job **jobs, size_t n, int64_t got, int64_t now);

/* worker_write.c */
void write_conclude(struct worker *w, struct slot *s);
void write_pending(struct worker *w, int64_t now);
void write_abandon(struct worker *w, struct slot *s);

/* worker_lease.c */
void lease_heartbeat(struct worker *w, int64_t now);

/* worker_row.c */
char *row_queues(const struct worker *w);
int row_register(struct worker *w, char *err);
char *row_jobs(const struct worker *w);

/* worker_reserve.c */
unsigned reserve_ahead_most(const struct conf *c, unsigned conc);
int reserve_can(const struct worker *w);
int64_t reserve_due(const struct worker *w);
void reserve_jobs(struct worker *w, int64_t now);
int reserve_release_lost(struct worker *w);

/* worker_start.c */
void start_ready(struct worker *w);
int start_again(struct worker *w, struct slot *s);
void start_give_back(struct worker *w);

/* worker_poll.c */
void poll_wait(struct worker *w, int64_t now);

/* worker_prune.c */
void prune_arm(struct worker *w);
void prune_tick(struct worker *w, int64_t now);
void sweep_tick(struct worker *w, int64_t now);
short poll_db_wait(void *arg, int fd, short events, int timeout_ms);

/* worker_watch.c */
void watch_tick(struct worker *w, int64_t now);

/* worker_keep.c */
void keep_time(struct worker *w);
int64_t keep_due(const struct worker *w);

/* worker_setup.c */
int64_t setup_wait_limit(const struct conf *c);
int setup_fd_budget(unsigned concurrency, unsigned extra, char *err);
void setup_identity(struct worker *w);

/* worker_slot.c */
unsigned slot_busy(const struct worker *w);
unsigned slot_count(const struct worker *w, enum slot_state state);
void slot_set(struct worker *w, struct slot *s, enum slot_state state);
void slot_clear(struct worker *w, struct slot *s);
void slot_end_unrun(struct worker *w, struct slot *s, enum outcome_write kind, const char *words, const char *reason,
    const char *error);

/* worker_span.c */
void span_run(struct worker *w, const struct slot *s, const char *unwritten, const char *why);
void span_claim(struct worker *w, size_t n, int64_t us);

/* worker_cancel.c */
void cancel_poll(struct worker *w, int64_t now);
int64_t cancel_due(const struct worker *w);

#endif
