/* worker.c -- the event loop of `jobq work`.
 *
 * One thread, one poll(2).  The loop owns up to `concurrency` slots; a
 * slot holds one reserved job from reservation until its outcome is
 * written.  Each turn it:
 *   1. reads the self-pipe (SIGCHLD, SIGTERM, SIGINT) and reaps children;
 *   2. reconnects to the database if the connection was lost (capped
 *      backoff, one log line per change of state);
 *   3. writes outcomes that are waiting (a handler that finished while
 *      the database was away keeps its slot, and its lease is extended,
 *      until the write succeeds or the lease turns out to be lost);
 *   4. extends the leases of the jobs it holds (heartbeat) and refreshes
 *      its row in the worker registry;
 *   5. reserves as many jobs as it has free slots, when polling is due,
 *      and starts their handlers;
 *   6. sleeps in poll() until a pipe, a signal, a wakeup datagram
 *      (wakeup.c: a job was committed on this host) or the next deadline.
 *
 * Polling adapts: right after work was found (or a wakeup came) the next
 * poll follows within milliseconds, and the wait grows with the time
 * since, up to poll_interval (idle_wait), so a stream of jobs inserted by
 * plain SQL is seen at once while an idle worker sends a few statements
 * a second.
 *
 * The loop has one thread, so a database call that waits holds up
 * everything else.  No call may wait long: the connection has a wait
 * limit (a third of the heartbeat, 1..10 s) that bounds lock waits,
 * statements and the client's timeouts (db_set_wait_limit).  Between any
 * two calls keep_time() does what cannot wait: it stops the handler of a
 * job whose lease could not be extended before that lease ends (past it,
 * another worker may start the same job), applies handler timeouts and
 * notices --max-time.
 *
 * Signals only write a byte to the self-pipe.  The first SIGTERM/SIGINT
 * stops reservations and lets running handlers finish; a second one
 * terminates them and gives their jobs back without charging an attempt.
 * A stopping worker whose outcomes cannot be written gives up on them
 * after reserve_ttl (those jobs come back when their leases expire). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "alert.h"
#include "control.h"
#include "duration.h"
#include "log.h"
#include "outcome.h"
#include "pool.h"
#include "queue.h"
#include "registry.h"
#include "runner.h"
#include "spawn.h"
#include "scheduler.h"
#include "wakeup.h"
#include "worker.h"

#define RECONNECT_MIN_MS 100
#define RECONNECT_MAX_MS 5000
#define WRITE_RETRY_MS 500
#define START_RETRY_MIN_MS 100
#define START_RETRY_MAX_MS 5000
/* Adaptive polling (idle_wait): the shortest wait between two polls, and
 * how long after the last work found the wait reaches poll_interval. */
#define POLL_FAST_MS 5
#define POLL_RAMP_MS 2000
/* Reserving ahead (want_jobs): while jobs are short (mean under
 * AHEAD_SHORT_MS) and the queue has a backlog, jobs wait reserved beside
 * the running ones, so that a slot that frees starts the next job without
 * a round trip: as many as the running handlers end in AHEAD_WINDOW_MS,
 * at least max(concurrency, AHEAD_MIN), at most max(concurrency,
 * AHEAD_MAX).  The window makes a claim (three round trips and a commit)
 * bring about AHEAD_WINDOW_MS / 2 of work however short the jobs: at
 * 1,000 jobs/s a claim of 4 cost the database as much as the jobs'
 * outcomes did.  A job held ahead is not overtaken by later arrivals, so
 * the window stays a few tens of milliseconds. */
#define AHEAD_MIN 8
#define AHEAD_MAX 64
#define AHEAD_WINDOW_MS 40
#define AHEAD_SHORT_MS 100
/* Group commit (hold_writes): a busy worker holds a new outcome up to
 * WRITE_HOLD_MS, or until WRITE_BATCH wait, so that they share one
 * transaction and one log flush. */
#define WRITE_HOLD_MS 25
#define WRITE_BATCH 32
#define FDS_PER_SLOT SPAWN_NFDS /* a handler's stdin, stdout, stderr and control pipes, our ends */
#define FDS_SPARE 16
/* An outcome whose write lost the connection this many times is written
 * in a transaction of its own, then without the handler's texts, then
 * given up (its job returns when its lease expires): a statement that
 * makes the server drop the connection must not be resent forever. */
#define WRITE_TRIES_ALONE 1
#define WRITE_TRIES_MINIMAL 3
#define WRITE_TRIES_MAX 5

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
	/* the outcome waiting to be written */
	enum outcome_write write;
	int64_t delay_ms;
	int64_t duration_ms;
	char *output;
	char *error;
	char words[128];
	char reason[256];
	int lease_lost;
	/* The lease as we reckon it: it ends at lease_until (monotonic ms,
	 * counted from when the reservation or the last extension that went
	 * through was sent, so never later than the server's expiry). */
	int64_t lease_until;
	int64_t extend_tried; /* when an extension was last sent */
	int extend_failed;    /* the last one did not go through */
	int extend_warned;    /* and that was logged */
	int lease_stop;       /* its handler was told to stop for the lease */
	uint64_t seq;         /* order of reservation: READY jobs start in it */
	int64_t reserved_mono; /* when it was reserved (monotonic ms) */
	int ahead;             /* reserved while every handler slot was busy */
	int64_t written_by;   /* WRITING: its outcome is held for a group until then */
	unsigned write_tries; /* writes of this outcome that lost the connection */
	struct control ctl;                /* what the handler said on its control channel */
	struct enqueue_item *follow;       /* done: its follow-ups, and on_success's job */
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
	unsigned nslots; /* slots in the array: held jobs, at most */
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
	/* wait_and_io's poll set, made once: the loop turns for every pipe
	 * read, and allocating on each turn only churns the heap. */
	struct pollfd *pfd;
	int *pfd_first, *pfd_count;
	int db_up;
	int64_t down_since, reconnect_at, reconnect_delay;
	int64_t next_poll, next_heartbeat, next_write, max_time_at;
	int64_t active_at;   /* when work was last found, or a wakeup came */
	struct wakeup *wake; /* NULL: no wakeups, polling only */
	int64_t next_schedule;       /* --schedule: when to tick next */
	int write_now;               /* an outcome is new: write without waiting */
	int64_t write_delay;         /* between tries of a write that failed */
	int64_t write_failing_since; /* 0: the last write went through */
	int64_t wait_ms;             /* the database wait limit (db_set_wait_limit) */
	int64_t start_delay;         /* handler starts fail: pause reserving... */
	int64_t start_paused_until;  /* ...until then */
	char db_err[ERRSZ];
	char start_err[ERRSZ];
	struct alerts *alerts; /* on_dead programs running */
};

static int sigpipe_fds[2] = { -1, -1 };

static void keep_time(struct worker *w);
static void tick_runners(struct worker *w, int64_t now);
static void claim_conflict(struct worker *w, const char *err);
static int64_t lease_stop_at(const struct worker *w, const struct slot *s);

static int64_t
min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

/* Signal handlers only write the signal number to the self-pipe. */
static void
on_signal(int sig)
{
	int saved = errno;
	unsigned char b = (unsigned char)sig;
	ssize_t ignored = write(sigpipe_fds[1], &b, 1);

	(void)ignored;
	errno = saved;
}

static int
setup_signals(char *err)
{
	struct sigaction sa;

	if (pipe2(sigpipe_fds, O_CLOEXEC | O_NONBLOCK) < 0) {
		errf(err, "pipe: %s", strerror(errno));
		return -1;
	}
	memset(&sa, 0, sizeof sa);
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGCHLD, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	return 0;
}

static void
restore_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_DFL;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGCHLD, &sa, NULL);
	close(sigpipe_fds[0]);
	close(sigpipe_fds[1]);
	sigpipe_fds[0] = sigpipe_fds[1] = -1;
}

static unsigned
busy_slots(const struct worker *w)
{
	unsigned i, n = 0;

	for (i = 0; i < w->nslots; i++)
		n += w->slots[i].state != SLOT_FREE;
	return n;
}

static unsigned
slots_in(const struct worker *w, enum slot_state state)
{
	unsigned i, n = 0;

	for (i = 0; i < w->nslots; i++)
		n += w->slots[i].state == state;
	return n;
}

static unsigned
writing_slots(const struct worker *w)
{
	return slots_in(w, SLOT_WRITING);
}

static void
slot_clear(struct slot *s)
{
	runner_free(s->run);
	job_free(s->job);
	free(s->output);
	free(s->error);
	control_free(&s->ctl);
	free(s->follow);
	memset(s, 0, sizeof *s);
}

/* ---- database state ---- */

/* Notes a failed database call: a lost connection starts the reconnect
 * cycle (logged once), anything else is only logged. */
static void
db_failed(struct worker *w, int rc, const char *what, const char *err)
{
	if (rc == DB_EGONE || !db_connected(w->db)) {
		if (w->db_up) {
			log_warn("database connection lost during %s: %s; reconnecting", what, err);
			w->db_up = 0;
			w->down_since = mono_ms();
			w->reconnect_delay = RECONNECT_MIN_MS;
			w->reconnect_at = w->down_since + RECONNECT_MIN_MS;
		}
		db_disconnect(w->db);
		return;
	}
	log_error("%s: %s", what, err);
}

static void
try_reconnect(struct worker *w, int64_t now)
{
	char err[ERRSZ];

	if (w->db_up || now < w->reconnect_at)
		return;
	if (db_connect(w->db, 1, err) == DB_OK) {
		char d[32];

		duration_format(mono_ms() - w->down_since, d, sizeof d);
		log_info("database connection restored after %s (to %s)", d, db_target(w->db));
		w->db_up = 1;
		w->next_heartbeat = now; /* renew leases at once */
		w->next_write = now;
		w->next_poll = now;
		w->db_err[0] = '\0';
		return;
	}
	if (strcmp(err, w->db_err) != 0) {
		log_warn("reconnect: %s", err);
		snprintf(w->db_err, sizeof w->db_err, "%s", err);
	}
	w->reconnect_delay *= 2;
	if (w->reconnect_delay > RECONNECT_MAX_MS)
		w->reconnect_delay = RECONNECT_MAX_MS;
	w->reconnect_at = now + w->reconnect_delay;
}

/* ---- outcomes ---- */

/* At -v, a line when a handler starts: with only the finishes logged,
 * jobs of a later queue that finish first look as if they were taken
 * first. */
static void
log_start(const struct slot *s)
{
	char attempt[32];
	struct log_field f[5];

	snprintf(attempt, sizeof attempt, "%u/%u", s->job->attempt, s->max_attempts);
	f[0] = LF_N("job", s->job->id);
	f[1] = LF_S("type", s->job->type);
	f[2] = LF_S("queue", s->job->queue);
	f[3] = LF_S("attempt", attempt);
	f[4] = LF_N("pid", runner_pid(s->run));
	log_fields(LOG_DEBUG, "job started", f, 5);
}

static void
log_outcome(struct worker *w, const struct slot *s, const char *outcome)
{
	char attempt[32], delay[32];
	struct log_field f[10];
	int n = 0;

	snprintf(attempt, sizeof attempt, "%u/%u", s->job->attempt, s->max_attempts);
	f[n++] = LF_N("job", s->job->id);
	f[n++] = LF_S("type", s->job->type);
	f[n++] = LF_S("queue", s->job->queue);
	f[n++] = LF_S("attempt", attempt);
	f[n++] = LF_S("outcome", outcome);
	f[n++] = LF_N("ms", s->duration_ms);
	f[n++] = LF_S("exit", s->words);
	if (s->write == OUT_RETRY && strcmp(outcome, "retry") == 0) {
		duration_format(s->delay_ms, delay, sizeof delay);
		f[n++] = LF_S("retry_in", delay);
	}
	if (s->write == OUT_DEAD)
		f[n++] = LF_S("reason", s->reason);
	(void)w;
	log_fields(strcmp(outcome, "done") == 0 ? LOG_INFO : LOG_WARN, "job", f, n);
}

/* The error text kept with a retry: the exit status, then stderr. */
static char *
last_error_text(const struct slot *s)
{
	return xasprintf("[%s] %s", s->words, s->error ? s->error : "");
}

static void
count_outcome(struct worker *w, struct slot *s, int lost)
{
	if (lost)
		log_warn(
		    "job %llu: lease lost (another worker or release-stale took it); outcome '%s' dropped",
		    (unsigned long long)s->job->id, queue_outcome_name(s->write));
	else {
		log_outcome(w, s, queue_outcome_name(s->write));
		if (s->write == OUT_DONE)
			w->counts.done++;
		else if (s->write == OUT_RETRY)
			w->counts.retried++;
		else if (s->write == OUT_DEAD)
			w->counts.dead++;
	}
	slot_clear(s);
	w->finished++;
}

/* Schedules the next try of a write that failed but may succeed later.
 * Each try may wait up to the wait limit (a row locked elsewhere), so
 * the tries grow apart, up to a heartbeat, to leave the loop its time. */
static void
write_failed(struct worker *w, int64_t now)
{
	if (w->write_failing_since == 0)
		w->write_failing_since = now;
	w->write_delay = w->write_delay == 0 ? WRITE_RETRY_MS : w->write_delay * 2;
	if (w->write_delay > w->conf->worker.heartbeat_ms)
		w->write_delay = w->conf->worker.heartbeat_ms;
	w->next_write = now + w->write_delay;
}

/* A job of s is committed to dead-letter: its handler's on_dead program
 * gets the row as committed (read back, so that it says what a person
 * will find). */
static void
alert_dead(struct worker *w, const struct slot *s)
{
	static char *no_env[] = { NULL };
	const struct handler *h = s->h;
	struct handler none;
	struct job_view v;
	char err[ERRSZ];

	if (h == NULL && w->conf->worker.on_dead_argv != NULL) {
		/* A job of no [handler]: the [worker] on_dead, in a clean
		 * environment, as the worker's user. */
		memset(&none, 0, sizeof none);
		none.type = s->job->type;
		none.queue = s->job->queue;
		none.env = no_env;
		none.on_dead_argv = w->conf->worker.on_dead_argv;
		h = &none;
	}
	if (h == NULL || h->on_dead_argv == NULL)
		return;
	if (failed_show(w->db, s->job->id, "+00:00", &v, err) != DB_OK) {
		log_warn("job %llu: on_dead not run: reading the dead job back: %s", (unsigned long long)s->job->id,
		    err);
		return;
	}
	alerts_add(w->alerts, h, s->job->id, alert_json(&v));
	job_view_free(&v);
}

/* Acts on what queue_write did with the outcome of slot s: a written
 * or lost outcome frees the slot, a refused one too (logged: its job
 * returns when its lease expires); one whose write failed stays for the
 * next try, unless the connection was lost under it too often. */
static void
settle(struct worker *w, struct slot *s, const struct outcome *o, int rc)
{
	unsigned long long id = (unsigned long long)s->job->id;

	switch (o->state) {
	case OUTS_WRITTEN:
	case OUTS_LOST:
		if (o->cut)
			log_warn(
			    "job %llu: handler output cut to fit the server's max_allowed_packet (%zu bytes)",
			    id, db_max_packet(w->db));
		if (o->note[0] != '\0')
			log_warn("job %llu: %s", id, o->note);
		if (o->minimal && o->state == OUTS_WRITTEN)
			log_warn("job %llu: written without the handler's output: writing it with the output "
			         "lost the connection %u times",
			    id, s->write_tries);
		if (o->state == OUTS_WRITTEN && s->write == OUT_DEAD)
			alert_dead(w, s);
		count_outcome(w, s, o->state == OUTS_LOST);
		return;
	case OUTS_REFUSED:
		log_error("job %llu: outcome '%s' not written: %s; the job returns when its lease expires",
		    id, queue_outcome_name(s->write), o->note);
		break;
	case OUTS_FAILED:
		if (rc != DB_EGONE || ++s->write_tries < WRITE_TRIES_MAX)
			return;
		log_error("job %llu: the connection was lost %u times while writing its outcome '%s'; giving "
		          "it up: the job returns when its lease expires",
		    id, s->write_tries, queue_outcome_name(s->write));
		break;
	default:
		return;
	}
	slot_clear(s);
	w->finished++;
}

/* Whether to hold the outcomes that wait a moment longer, so that more
 * share their transaction: only while a handler runs (there is something
 * else to wait for), never when stopping, at most until the oldest one's
 * written_by or until WRITE_BATCH wait.  An outcome held is still under
 * its lease (the heartbeat extends it); a crash in that moment loses it
 * like a crash during its handler, and the job runs again. */
static int
hold_writes(struct worker *w, int64_t now)
{
	int64_t by = INT64_MAX;
	unsigned i, n = 0;

	if (w->stopping || slots_in(w, SLOT_RUNNING) == 0)
		return 0;
	for (i = 0; i < w->nslots; i++)
		if (w->slots[i].state == SLOT_WRITING) {
			n++;
			by = min64(by, w->slots[i].written_by);
		}
	if (n >= WRITE_BATCH || now >= by)
		return 0;
	w->next_write = by;
	return 1;
}

static int
seq_order(const void *a, const void *b)
{
	const struct slot *x = *(struct slot *const *)a, *y = *(struct slot *const *)b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Writes every outcome that waits, in as few transactions as fit (see
 * queue_write).  A slot is freed once its outcome is written, its lease
 * turned out lost, or the server refused it; when the database is away
 * they all stay and are tried again. */
static void
write_pending(struct worker *w, int64_t now)
{
	struct outcome *o;
	struct run_record *runs;
	struct slot **who;
	char **texts, err[ERRSZ];
	unsigned i, n = 0;
	int rc;

	/* Called on every turn of the loop: nothing is allocated before
	 * there is something to write. */
	if (!w->db_up || (!w->write_now && now < w->next_write))
		return;
	if (w->write_failing_since == 0 && hold_writes(w, now)) {
		w->write_now = 0;
		return;
	}
	w->write_now = 0;
	if (writing_slots(w) == 0)
		return;
	o = xcalloc(w->nslots, sizeof *o);
	runs = xcalloc(w->nslots, sizeof *runs);
	who = xcalloc(w->nslots, sizeof *who);
	texts = xcalloc(w->nslots, sizeof *texts);
	/* In the order the jobs were reserved (and started): the run rows'
	 * ids then follow the runs, as they did with one write per job. */
	for (i = 0; i < w->nslots; i++)
		if (w->slots[i].state == SLOT_WRITING)
			who[n++] = &w->slots[i];
	qsort(who, n, sizeof *who, seq_order);
	for (i = 0; i < n; i++) {
		struct slot *s = who[i];

		runs[i] = (struct run_record){ w->id, s->duration_ms, s->words, s->output, s->error, s->ctl.result };
		o[i] =
		    (struct outcome){ s->job, s->write, s->delay_ms, NULL, s->error ? s->error : "", s->words,
			    s->reason, s->has_run ? &runs[i] : NULL, s->write_tries >= WRITE_TRIES_ALONE,
			    s->write_tries >= WRITE_TRIES_MINIMAL, OUTS_PENDING, 0, "", NULL, 0 };
		if (s->write == OUT_DONE) {
			o[i].follow = s->follow;
			o[i].nfollow = s->nfollow;
		}
		if (s->write == OUT_RETRY)
			o[i].last_error = texts[i] = last_error_text(s);
	}
	if (n == 0)
		goto out;
	rc = queue_write(w->db, o, n, err);
	for (i = 0; i < n; i++)
		settle(w, who[i], &o[i], rc);
	if (rc == DB_OK) {
		w->next_poll = now; /* slots are free: look for work at once */
		w->write_delay = 0;
		w->write_failing_since = 0;
	} else {
		db_failed(w, rc, "writing outcomes", err);
		write_failed(w, now);
	}
out:
	for (i = 0; i < w->nslots; i++)
		free(texts[i]);
	free(texts);
	free(who);
	free(runs);
	free(o);
}

/* The jobs a done outcome of s enqueues: the follow-ups its handler
 * wrote, then its handler's on_success job (same payload). */
static void
gather_follow(struct worker *w, struct slot *s)
{
	const struct handler *next = s->h->on_success ? conf_handler(w->conf, s->h->on_success) : NULL;
	size_t i;

	s->follow = xcalloc(s->ctl.nfollow + 1, sizeof *s->follow);
	for (i = 0; i < s->ctl.nfollow; i++)
		s->follow[s->nfollow++] = s->ctl.follow[i].e;
	if (next != NULL)
		s->follow[s->nfollow++] = (struct enqueue_item){ .type = next->type, .queue = next->queue,
			.payload = s->job->payload, .payload_len = s->job->payload_len, .priority = s->job->priority };
}

/* Reads the control channel of s's finished handler; a bad one is a
 * handler error, its message added to the run's error.  Returns 0 when
 * it was good. */
static int
read_control(struct worker *w, struct slot *s, char *why, size_t whylen)
{
	size_t len;
	int overflow;
	const char *buf = runner_control(s->run, &len, &overflow);
	char err[ERRSZ];
	char *text;

	if (control_parse(w->conf, buf, len, overflow, &s->ctl, err) == 0)
		return 0;
	text = xasprintf("%s%sjobq: %s", s->error ? s->error : "", s->error && *s->error ? "\n" : "", err);
	free(s->error);
	s->error = text;
	snprintf(why, whylen, "%s", err);
	return -1;
}

/* Turns a finished handler into the outcome to write. */
static void
conclude(struct worker *w, struct slot *s)
{
	struct exit_info x;
	struct decision d;
	char why[ERRSZ];
	int ctl_bad;

	runner_result(s->run, &x, &s->output, &s->error, &s->duration_ms);
	outcome_exit_words(&x, s->words, sizeof s->words);
	s->has_run = 1;
	ctl_bad = read_control(w, s, why, sizeof why) < 0;
	/* A handler we terminated (a hard stop, or a lease we could not
	 * keep) gives its job back, unless it still finished its work (exit
	 * 0 on SIGTERM): that counts as done.  The fence drops either when
	 * the lease is already gone. */
	if (runner_interrupted(s->run) && (w->stopping >= 2 || s->lease_stop) && !(x.exited && x.code == 0)) {
		s->write = OUT_GIVEBACK;
	} else {
		int64_t age = s->job->age_ms + s->duration_ms;

		outcome_decide(s->h, &x, s->error, s->job->attempt, s->max_attempts, age, &d);
		if (ctl_bad && d.kind == OUTCOME_DONE)
			outcome_handler_error(s->h, why, s->job->attempt, s->max_attempts, age, &d);
		else if (!ctl_bad && s->ctl.retry_after_ms >= 0)
			outcome_retry_after(s->h, s->ctl.retry_after_ms, age, &d);
		if (d.kind == OUTCOME_DONE)
			gather_follow(w, s);
		s->write = d.kind == OUTCOME_DONE ? OUT_DONE : d.kind == OUTCOME_RETRY ? OUT_RETRY : OUT_DEAD;
		s->delay_ms = d.delay_ms;
		snprintf(s->reason, sizeof s->reason, "%s", d.reason);
	}
	runner_free(s->run);
	s->run = NULL;
	s->state = SLOT_WRITING;
	s->written_by = mono_ms() + WRITE_HOLD_MS;
	w->avg_ms = w->avg_ms < 0 ? s->duration_ms : (w->avg_ms * 7 + s->duration_ms) / 8;
	w->write_now = 1;
}

/* ---- starting jobs ---- */

/* Buries a job without running it. */
static void
bury_unrun(struct worker *w, struct slot *s, const char *words, const char *reason, const char *error)
{
	s->write = OUT_DEAD;
	snprintf(s->words, sizeof s->words, "%s", words);
	snprintf(s->reason, sizeof s->reason, "%s", reason);
	s->error = xstrdup(error);
	s->state = SLOT_WRITING;
	w->write_now = 1;
}

/* A handler could not be started (no descriptors, no processes left):
 * the job goes back, and this worker takes no new job for a while, from
 * 100 ms doubling to 5 s, rather than taking it again at once and
 * failing in a loop.  The same error is logged once per streak. */
static void
start_failed(struct worker *w, const struct job *j, const char *err)
{
	char d[32];

	w->start_delay = w->start_delay == 0 ? START_RETRY_MIN_MS : w->start_delay * 2;
	if (w->start_delay > START_RETRY_MAX_MS)
		w->start_delay = START_RETRY_MAX_MS;
	w->start_paused_until = mono_ms() + w->start_delay;
	duration_format(w->start_delay, d, sizeof d);
	if (strcmp(err, w->start_err) != 0) {
		log_error("job %llu: %s; taking no new job for %s (and longer while it lasts)",
		    (unsigned long long)j->id, err, d);
		snprintf(w->start_err, sizeof w->start_err, "%s", err);
	} else
		log_debug("job %llu: %s; taking no new job for %s", (unsigned long long)j->id, err, d);
}

/* Moves ts, a database time ("YYYY-MM-DD HH:MM:SS[.ffffff]", UTC), ms
 * later; left as it is when it does not parse. */
static void
time_add_ms(char *ts, size_t size, int64_t ms)
{
	struct tm tm;
	const char *dot = strchr(ts, '.'), *f = dot != NULL ? dot + 1 : "";
	int64_t us = 0;
	char out[96];
	time_t t;
	int i;

	memset(&tm, 0, sizeof tm);
	if (sscanf(ts, "%4d-%2d-%2d %2d:%2d:%2d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
	        &tm.tm_min, &tm.tm_sec) != 6)
		return;
	for (i = 0; i < 6; i++) {
		us *= 10;
		if (*f >= '0' && *f <= '9')
			us += *f++ - '0';
	}
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	us += ms * 1000;
	t = timegm(&tm) + (time_t)(us / 1000000);
	us %= 1000000;
	if (gmtime_r(&t, &tm) == NULL)
		return;
	snprintf(out, sizeof out, "%04d-%02d-%02d %02d:%02d:%02d.%06lld", tm.tm_year + 1900, tm.tm_mon + 1,
	    tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (long long)us);
	if (strlen(out) < size)
		memcpy(ts, out, strlen(out) + 1);
}

static void
start_job(struct worker *w, struct slot *s)
{
	char err[ERRSZ], reason[256];
	struct job *j = s->job;
	int64_t waited = mono_ms() - s->reserved_mono;

	/* The run's started_at is the claim's database time (for a job
	 * under a rate limit, the time its start was counted at): a job that
	 * waited reserved ahead starts that much later (a duration measured
	 * here, added to the database's time, never a clock compared). */
	if (s->ahead && waited > 0)
		time_add_ms(j->reserved_at, sizeof j->reserved_at, waited);
	s->h = conf_handler(w->conf, j->type);
	s->max_attempts = j->max_attempts ? j->max_attempts : s->h ? s->h->max_attempts : 1;
	w->started++;
	if (s->h == NULL) {
		char *msg = xasprintf(
		    "unknown job type '%s': no [handler %s] section in %s", j->type, j->type, w->conf->path);

		bury_unrun(w, s, "not run", "unknown job type", msg);
		free(msg);
		return;
	}
	if (job_defect(j, reason, sizeof reason) != NULL) {
		/* A row another program wrote that no handler should get. */
		bury_unrun(w, s, "not run", reason, reason);
		return;
	}
	if (j->attempt > s->max_attempts) {
		/* The earlier attempts ended with their worker (crash, kill -9):
		 * a job that keeps killing workers must stop somewhere. */
		snprintf(reason, sizeof reason, "attempts used up (%u of %u; the last ended with its worker)",
		    j->attempt - 1, s->max_attempts);
		bury_unrun(w, s, "not run", reason, reason);
		return;
	}
	s->run = runner_start(s->h, j, s->max_attempts, err);
	if (s->run == NULL) {
		/* fork failed: hand the job straight back, attempt refunded. */
		start_failed(w, j, err);
		s->write = OUT_GIVEBACK;
		snprintf(s->words, sizeof s->words, "not started");
		s->state = SLOT_WRITING;
		w->write_now = 1;
		return;
	}
	if (w->start_delay > 0)
		log_info("handlers start again (the last failure: %s)", w->start_err);
	w->start_delay = 0;
	w->start_err[0] = '\0';
	s->state = SLOT_RUNNING;
	log_start(s);
}

/* The most jobs reserve_ahead lets wait beside conc running ones. */
static unsigned
ahead_most(const struct conf *c, unsigned conc)
{
	if (c->worker.reserve_ahead >= 0)
		return (unsigned)c->worker.reserve_ahead;
	return conc > AHEAD_MAX ? conc : AHEAD_MAX;
}

/* How many jobs may wait reserved beside the running ones: reserve_ahead
 * when set; with auto (AHEAD_MIN) none until the handlers are known to
 * be short.  None for --once and --max-jobs, none without a backlog (an
 * idle queue gains nothing, and a job held here is one another worker
 * cannot take, and one that a job arriving in an earlier queue or at a
 * smaller priority does not overtake). */
static unsigned
ahead(const struct worker *w)
{
	int set = w->conf->worker.reserve_ahead;
	unsigned least;
	int64_t n;

	if (set == 0 || w->opts->once || w->opts->max_jobs > 0 || !w->backlog)
		return 0;
	if (set > 0)
		return (unsigned)set;
	if (conf_has_flow_limits(w->conf))
		return 0; /* a held job would count as running, and start after its rate slot */
	if (w->avg_ms < 0 || w->avg_ms >= AHEAD_SHORT_MS)
		return 0;
	n = (int64_t)w->conc * AHEAD_WINDOW_MS / (w->avg_ms > 1 ? w->avg_ms : 1);
	least = w->conc > AHEAD_MIN ? w->conc : AHEAD_MIN;
	return n < least ? least : n > ahead_most(w->conf, w->conc) ? ahead_most(w->conf, w->conc) : (unsigned)n;
}

/* How many jobs to reserve now: enough for every idle slot plus the ones
 * reserved ahead; while every slot is busy, only once the jobs waiting
 * have fallen to half of those ahead, so that claims come in batches. */
static unsigned
want_jobs(const struct worker *w)
{
	unsigned running = slots_in(w, SLOT_RUNNING), ready = slots_in(w, SLOT_READY);
	unsigned more = ahead(w), target = w->conc + more, n, room = w->nslots - busy_slots(w);

	if (running + ready >= target || (running + ready >= w->conc && ready > more / 2))
		return 0;
	n = target - running - ready;
	if (n > room)
		n = room;
	if (w->opts->max_jobs > 0) {
		uint64_t left = w->opts->max_jobs > w->started + ready ? w->opts->max_jobs - w->started - ready : 0;

		if (left < n)
			n = (unsigned)left;
	}
	if (w->opts->once && n > 1)
		n = 1; /* --once takes one job, whatever the concurrency */
	return n;
}

/* Starts the jobs reserved ahead, in the order they were reserved, while
 * fewer than `concurrency` handlers run.  One whose lease is no longer
 * ours, or has less than a third left (its extensions failed), is given
 * back unstarted (the fence drops that if the lease is gone). */
static void
start_ready(struct worker *w)
{
	int64_t now = mono_ms();

	while (slots_in(w, SLOT_RUNNING) < w->conc && !w->stopping) {
		struct slot *s = NULL;
		unsigned i;

		for (i = 0; i < w->nslots; i++)
			if (w->slots[i].state == SLOT_READY && (s == NULL || w->slots[i].seq < s->seq))
				s = &w->slots[i];
		if (s == NULL)
			return;
		if (s->lease_lost || s->lease_until - now < w->conf->worker.reserve_ttl_ms / 3) {
			s->write = OUT_GIVEBACK;
			snprintf(s->words, sizeof s->words, "not started");
			s->state = SLOT_WRITING;
			w->write_now = 1;
			continue;
		}
		start_job(w, s);
	}
}

/* Gives back the jobs reserved ahead, unstarted, attempt refunded: the
 * worker is stopping. */
static void
give_back_ready(struct worker *w)
{
	unsigned i;

	for (i = 0; i < w->nslots; i++)
		if (w->slots[i].state == SLOT_READY) {
			w->slots[i].write = OUT_GIVEBACK;
			snprintf(w->slots[i].words, sizeof w->slots[i].words, "not started");
			w->slots[i].state = SLOT_WRITING;
			w->write_now = 1;
		}
}

/* Whether a reservation may be made once polling is due. */
static int
can_reserve(const struct worker *w)
{
	if (w->stopping || !w->db_up || want_jobs(w) == 0)
		return 0;
	return !(w->opts->once && w->reserved_once);
}

/* When polling is due: the poll interval, or later while handler
 * starts are failing. */
static int64_t
poll_due(const struct worker *w)
{
	return w->next_poll > w->start_paused_until ? w->next_poll : w->start_paused_until;
}

/* The wait before the next poll when the last one found less than it
 * asked for: in proportion to the time since work was last found or a
 * wakeup came, from POLL_FAST_MS up to poll_interval, reached after
 * POLL_RAMP_MS.  A job that arrives t after the last one waits about
 * t * poll_interval / (2 * POLL_RAMP_MS) for the poll that finds it,
 * while the polls of an idle spell are spaced geometrically (a few dozen
 * to reach poll_interval, whatever it is). */
static int64_t
idle_wait(const struct worker *w, int64_t now)
{
	int64_t most = w->conf->worker.poll_interval_ms, since = now - w->active_at, t;

	if (since >= POLL_RAMP_MS)
		return most;
	t = since * most / POLL_RAMP_MS;
	return t < POLL_FAST_MS ? min64(POLL_FAST_MS, most) : t;
}

static void
reserve(struct worker *w, int64_t now)
{
	struct reserve_req req;
	struct job **jobs;
	size_t n, i, k = 0;
	char err[ERRSZ];
	unsigned limit = want_jobs(w);
	int64_t got;
	int rc, held = 0, free_run;

	if (!can_reserve(w) || now < poll_due(w))
		return;
	req.queues = w->opts->queues;
	req.limit = limit;
	req.ttl_ms = w->conf->worker.reserve_ttl_ms;
	req.worker = w->id;
	req.mode = w->mode;
	req.flow = w->conf;
	req.held = w->opts->stop_when_empty ? &held : NULL;
	rc = queue_reserve(w->db, &req, &jobs, &n, err);
	got = mono_ms();
	w->reserved_once = 1;
	if (rc == DB_ERETRY)
		claim_conflict(w, err);
	else if (rc != DB_OK)
		db_failed(w, rc, "reserving jobs", err);
	else
		w->claim_conflicts = 0;
	w->empty = rc == DB_OK && n == 0 && !held; /* held: due jobs wait for a flow limit */
	w->backlog = n == limit;
	if (n > 0)
		w->active_at = now;
	w->next_poll = n == limit ? now : now + idle_wait(w, now);
	free_run = w->conc - slots_in(w, SLOT_RUNNING) - slots_in(w, SLOT_READY);
	for (i = 0; i < n; i++) {
		while (w->slots[k].state != SLOT_FREE)
			k++;
		w->slots[k].ahead = (int)i >= free_run;
		w->slots[k].job = jobs[i];
		w->slots[k].state = SLOT_READY;
		w->slots[k].seq = ++w->seq;
		w->slots[k].reserved_mono = got;
		w->slots[k].lease_until = now + req.ttl_ms;
		w->slots[k].extend_tried = now;
	}
	free(jobs);
	/* A stop that came while the claim was in flight (db_wait reads the
	 * signals) found none of these jobs to give back: they go now. */
	if (w->stopping)
		give_back_ready(w);
	start_ready(w);
}

/* A reservation whose transaction deadlocked (or, on Galera, lost
 * certification) on every rerun claimed nothing and changed nothing:
 * with workers on several nodes that is contention, not a fault, and the
 * next poll tries again.  It is logged at debug, and as a warning only
 * when it goes on (every CLAIM_CONFLICT_WARN in a row), so that a busy
 * cluster does not fill the log or cron's mail. */
#define CLAIM_CONFLICT_WARN 20
static void
claim_conflict(struct worker *w, const char *err)
{
	w->claim_conflicts++;
	if (w->claim_conflicts % CLAIM_CONFLICT_WARN == 0)
		log_warn("reserving jobs: %u attempts in a row lost to other workers' claims (%s); "
			 "with workers on several Galera nodes, consider writing through one node",
		    w->claim_conflicts, err);
	else
		log_debug("reserving jobs: %s; trying again at the next poll", err);
}

/* ---- heartbeat ---- */

/* Extends the leases of who[0..n) in one round trip, as far as the
 * first that fails; *tried gets how many were tried, that one included.
 * Those that went through run a full reserve_ttl from the moment the
 * request was sent; a lease found lost is logged once (the fence will
 * drop that job's outcome, and guard_leases stops its handler). */
static int
extend_some(struct worker *w, struct slot **who, unsigned n, unsigned *tried, char *err)
{
	struct job **jobs = xcalloc(n + 1, sizeof *jobs);
	int *lost = xcalloc(n + 1, sizeof *lost), rc;
	int64_t sent = mono_ms(), ttl = w->conf->worker.reserve_ttl_ms;
	unsigned i;

	for (i = 0; i < n; i++)
		jobs[i] = who[i]->job;
	rc = queue_extend(w->db, jobs, n, ttl, lost, err);
	for (i = 0; i < n; i++) {
		struct slot *s = who[i];

		s->extend_tried = sent;
		if (lost[i] < 0) {
			s->extend_failed = 1; /* the one that failed; the rest were not run */
			break;
		}
		s->extend_failed = s->extend_warned = 0;
		if (!lost[i])
			s->lease_until = sent + ttl;
		else {
			s->lease_lost = 1;
			log_warn("job %llu: lease lost (another worker or release-stale took it); its "
			         "outcome will be dropped",
			    (unsigned long long)s->job->id);
		}
	}
	*tried = i < n ? i + 1 : n;
	free(jobs);
	free(lost);
	return rc;
}

/* Marks the last progress line s's running handler wrote so far to be
 * written with this heartbeat's lease extension, when it is new: the
 * database sees progress once a heartbeat, however often it is written.
 * Until the handler writes one, the first extension writes "none". */
static void
note_progress(struct slot *s)
{
	char note[CONTROL_NOTE_MAX + 1];
	struct job *j = s->job;
	const char *buf;
	size_t len;
	int overflow, p;

	if (s->state != SLOT_RUNNING)
		return;
	buf = runner_control(s->run, &len, &overflow);
	if (buf == NULL || !control_progress(buf, len, &p, note, sizeof note)) {
		/* None yet: the first extension clears what an earlier attempt,
		 * whose worker died, may have left. */
		p = -1;
		note[0] = '\0';
	}
	if (j->progress_known && p == j->progress && strcmp(note, j->progress_note) == 0)
		return;
	j->progress_known = j->progress_new = 1;
	j->progress = p;
	snprintf(j->progress_note, sizeof j->progress_note, "%s", note);
}

/* Heartbeat order: the jobs whose last extension went through first, then
 * those whose extension failed, the one tried longest ago first. */
static int
extend_order(const void *a, const void *b)
{
	const struct slot *x = *(struct slot *const *)a, *y = *(struct slot *const *)b;

	if (x->extend_failed != y->extend_failed)
		return x->extend_failed - y->extend_failed;
	if (!x->extend_failed)
		return x < y ? -1 : x > y;
	return x->extend_tried < y->extend_tried ? -1 : x->extend_tried > y->extend_tried;
}

/* Extends the leases of the jobs we hold, in one round trip when all
 * goes well.  A job whose row another session keeps locked makes its
 * statement wait (up to the wait limit) and fail; the statements before
 * it stand, and the rest are sent again without it.  Jobs whose
 * extension failed go last, so that the others are extended first next
 * time; the retries stop once half a heartbeat interval has gone by.  A
 * job that cannot be extended is stopped before its lease ends
 * (guard_leases). */
static int
extend_leases(struct worker *w, int64_t now, char *err)
{
	struct slot **who = xcalloc(w->nslots + 1, sizeof *who);
	unsigned i, n = 0, done = 0, tried;
	int rc = DB_OK;

	for (i = 0; i < w->nslots; i++)
		if (w->slots[i].state != SLOT_FREE && !w->slots[i].lease_lost) {
			note_progress(&w->slots[i]);
			who[n++] = &w->slots[i];
		}
	qsort(who, n, sizeof *who, extend_order);
	while (done < n) {
		struct slot *s;

		if ((rc = extend_some(w, who + done, n - done, &tried, err)) == DB_OK || rc == DB_EGONE ||
		    rc == DB_EFAIL)
			break;
		s = who[done + tried - 1];
		if (!s->extend_warned)
			log_warn("job %llu: lease not extended: %s", (unsigned long long)s->job->id, err);
		s->extend_warned = 1;
		done += tried;
		if (mono_ms() - now >= w->conf->worker.heartbeat_ms / 2)
			break;
		keep_time(w);
	}
	free(who);
	return rc == DB_EGONE || rc == DB_EFAIL ? rc : DB_OK;
}

/* "critical,default,low" */
static char *
queue_list(const struct worker *w)
{
	struct buf q;
	unsigned i;

	buf_init(&q);
	buf_adds(&q, "");
	for (i = 0; w->opts->queues[i] != NULL; i++)
		buf_printf(&q, "%s%s", i ? "," : "", w->opts->queues[i]);
	return buf_steal(&q);
}

static int
register_worker(struct worker *w, char *err)
{
	char *queues = queue_list(w);
	int rc = registry_register(
	    w->db, w->id, w->host, (unsigned)getpid(), queues, w->conc, w->conf->worker.heartbeat_ms, err);

	free(queues);
	return rc;
}

/* "12:send_email,13:resize": the jobs in the registry row. */
static char *
current_jobs(const struct worker *w)
{
	struct buf b;
	unsigned i;

	buf_init(&b);
	buf_adds(&b, "");
	for (i = 0; i < w->nslots; i++) {
		const struct slot *s = &w->slots[i];

		if (s->state != SLOT_FREE && !s->lease_lost)
			buf_printf(
			    &b, "%s%llu:%s", b.len ? "," : "", (unsigned long long)s->job->id, s->job->type);
	}
	return buf_steal(&b);
}

/* Extends our leases and refreshes our registry row.  A lease that could
 * not be extended is only logged here; the registry row is refreshed all
 * the same (the worker is alive, and says so), unless the connection is
 * gone. */
static void
heartbeat(struct worker *w, int64_t now)
{
	char err[ERRSZ], *current;
	int rc;

	if (!w->db_up || now < w->next_heartbeat)
		return;
	w->next_heartbeat = now + w->conf->worker.heartbeat_ms;
	rc = extend_leases(w, now, err);
	if (rc == DB_EGONE || rc == DB_EFAIL) {
		db_failed(w, rc, "heartbeat", err);
		return;
	}
	keep_time(w);
	current = current_jobs(w);
	if ((rc = registry_heartbeat(w->db, w->id, &w->counts, current, err)) == 1)
		rc = register_worker(w, err); /* our row was pruned: add it back */
	if (rc != DB_OK)
		db_failed(w, rc, "heartbeat", err);
	free(current);
}

/* ---- signals and children ---- */

static void
reap_children(struct worker *w)
{
	for (;;) {
		siginfo_t si;
		unsigned i;

		memset(&si, 0, sizeof si);
		if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) < 0 || si.si_pid == 0)
			return;
		for (i = 0; i < w->nslots; i++)
			if (w->slots[i].state == SLOT_RUNNING && runner_pid(w->slots[i].run) == si.si_pid)
				break;
		if (i < w->nslots)
			runner_reap(w->slots[i].run);
		else if (!alerts_reap(w->alerts, si.si_pid) && !pool_reap(si.si_pid))
			waitpid(si.si_pid, NULL, 0); /* not ours to track */
	}
}

static void
begin_stop(struct worker *w, int level, const char *why)
{
	unsigned i, running = 0;

	if (level <= w->stopping)
		return;
	if (w->stopping == 0)
		w->stopping_since = mono_ms();
	w->stopping = level;
	give_back_ready(w);
	for (i = 0; i < w->nslots; i++)
		running += w->slots[i].state == SLOT_RUNNING;
	if (level == 1) {
		log_info("%s: taking no new jobs, waiting for %u running", why, running);
		return;
	}
	log_info("%s: terminating %u running handlers, their jobs go back to the queue", why, running);
	for (i = 0; i < w->nslots; i++)
		if (w->slots[i].state == SLOT_RUNNING)
			runner_terminate(w->slots[i].run);
}

static void
read_signals(struct worker *w)
{
	unsigned char buf[64];
	ssize_t n, i;

	while ((n = read(sigpipe_fds[0], buf, sizeof buf)) > 0)
		for (i = 0; i < n; i++) {
			if (buf[i] == SIGCHLD)
				continue;
			begin_stop(w, w->stopping + 1, buf[i] == SIGINT ? "SIGINT" : "SIGTERM");
		}
	reap_children(w);
}

/* ---- the loop ---- */

static int
should_exit(const struct worker *w)
{
	if (busy_slots(w) > 0 || alerts_busy(w->alerts) > 0)
		return 0;
	if (w->stopping)
		return 1;
	if (w->opts->once && w->reserved_once)
		return 1;
	if (w->opts->max_jobs > 0 && w->finished >= w->opts->max_jobs)
		return 1;
	return w->opts->stop_when_empty && w->empty;
}

/* ---- leases ---- */

/* How long before the end of a lease (as we reckon it) its handler must
 * be gone: the longest one database call may block, since the loop may
 * be inside one at that moment, and a little slack; but at most a fifth
 * of the lease.  A server that answers ends its waits at the wait limit,
 * well inside that; only a connection that stalls altogether can take
 * the client's whole read timeout. */
static int64_t
lease_margin(const struct worker *w)
{
	return min64(db_call_bound(w->db) + 250, w->conf->worker.reserve_ttl_ms / 5);
}

/* SIGTERM to SIGKILL for a handler stopped for its lease: its kill_grace,
 * at most a tenth of the lease. */
static int64_t
lease_grace(const struct worker *w, const struct slot *s)
{
	return min64(s->h->kill_grace_ms, w->conf->worker.reserve_ttl_ms / 10);
}

/* When the handler of s is told to stop if its lease is not extended
 * by then. */
static int64_t
lease_stop_at(const struct worker *w, const struct slot *s)
{
	return s->lease_until - lease_margin(w) - lease_grace(w, s);
}

/* Stops each handler whose job this worker may no longer hold: past the
 * end of its lease another worker may take the job and run it too (and
 * this one could not stop its handler while it waits on the database).
 * A handler whose lease was not extended in time gets SIGTERM at
 * lease_stop_at and SIGKILL lease_margin before the lease ends; one whose
 * lease was found lost is stopped at once.  Its job is given back (the
 * fence drops that when the lease is gone). */
static void
guard_leases(struct worker *w, int64_t now)
{
	unsigned i;

	for (i = 0; i < w->nslots; i++) {
		struct slot *s = &w->slots[i];
		int64_t kill_by;
		char d[32];

		if (s->state != SLOT_RUNNING || s->lease_stop)
			continue;
		if (s->lease_lost)
			kill_by = now + lease_grace(w, s);
		else if (now >= lease_stop_at(w, s))
			kill_by = s->lease_until - lease_margin(w);
		else
			continue;
		s->lease_stop = 1;
		runner_terminate_by(s->run, kill_by);
		if (s->lease_lost) {
			log_warn("job %llu: stopping its handler: the job is no longer ours",
			    (unsigned long long)s->job->id);
			continue;
		}
		duration_format(s->lease_until - now, d, sizeof d);
		log_warn("job %llu: stopping its handler: its lease could not be extended and ends in %s "
		         "(the job goes back to the queue)",
		    (unsigned long long)s->job->id, d);
	}
}

/* The work that must not wait for the database: stop handlers whose
 * lease runs out, apply handler timeouts, notice --max-time.  Called at
 * the top of each turn and between any two database calls, so that a
 * slow call delays it by one wait limit at most. */
static void
keep_time(struct worker *w)
{
	int64_t now = mono_ms();

	guard_leases(w, now);
	tick_runners(w, now);
	if (w->max_time_at > 0 && now >= w->max_time_at)
		begin_stop(w, 1, "--max-time reached");
}

/* The next moment something that needs no database is due: a handler's
 * timeout or kill, a lease's stop, --max-time, an alert program, a
 * persistent process's idle end.  INT64_MAX when nothing is. */
static int64_t
io_due(const struct worker *w)
{
	int64_t t = INT64_MAX;
	unsigned i;

	if (w->max_time_at > 0 && !w->stopping)
		t = w->max_time_at;
	t = min64(t, alerts_deadline(w->alerts));
	t = min64(t, pool_deadline());
	for (i = 0; i < w->nslots; i++)
		if (w->slots[i].state == SLOT_RUNNING) {
			t = min64(t, runner_deadline(w->slots[i].run));
			if (!w->slots[i].lease_stop)
				t = min64(t, lease_stop_at(w, &w->slots[i]));
		}
	return t;
}

/* How long poll() may sleep between turns of the loop. */
static int
poll_timeout(const struct worker *w, int64_t now)
{
	int64_t t = min64(now + 1000, io_due(w));

	if (can_reserve(w))
		t = min64(t, poll_due(w));
	if (w->db_up) {
		t = min64(t, w->next_heartbeat);
		if (writing_slots(w) > 0)
			t = min64(t, w->write_now ? now : w->next_write);
	} else
		t = min64(t, w->reconnect_at);
	return t <= now ? 0 : (int)(t - now);
}

/* Sleeps in poll() for at most timeout ms and services every pipe that
 * is ready; with db_fd >= 0 also wakes for db_events on it, and returns
 * its revents. */
static short
serve_io(struct worker *w, int timeout, int db_fd, short db_events)
{
	struct pollfd *pfd = w->pfd;
	int *first = w->pfd_first, *count = w->pfd_count;
	int n = 1, nalert, ndb = -1;
	unsigned i;

	pfd[0].fd = sigpipe_fds[0];
	pfd[0].events = POLLIN;
	if (w->wake != NULL) {
		pfd[n].fd = wakeup_fd(w->wake);
		pfd[n++].events = POLLIN;
	}
	if (db_fd >= 0) {
		ndb = n;
		pfd[n].fd = db_fd;
		pfd[n++].events = db_events;
	}
	for (i = 0; i < w->nslots; i++) {
		first[i] = n;
		count[i] = w->slots[i].state == SLOT_RUNNING ? runner_fds(w->slots[i].run, pfd + n) : 0;
		n += count[i];
	}
	nalert = n;
	n += alerts_fds(w->alerts, pfd + n);
	for (i = 0; i < (unsigned)n; i++)
		pfd[i].revents = 0;
	if (poll(pfd, (nfds_t)n, timeout) < 0 && errno != EINTR)
		fatal("poll: %s", strerror(errno));
	/* Always drained, even with no slot free: a datagram left unread
	 * would make every poll() return at once. */
	if (w->wake != NULL && (pfd[1].revents & POLLIN) && wakeup_drain(w->wake, w->opts->queues)) {
		w->next_poll = mono_ms();
		w->active_at = w->next_poll;
	}
	for (i = 0; i < w->nslots; i++)
		if (count[i] > 0)
			runner_io(w->slots[i].run, pfd + first[i], count[i]);
	alerts_io(w->alerts, pfd + nalert);
	return ndb >= 0 ? pfd[ndb].revents : 0;
}

/* Sleeps until the next thing is due and services every pipe that is
 * ready. */
static void
wait_and_io(struct worker *w, int64_t now)
{
	serve_io(w, poll_timeout(w, now), -1, 0);
}

/* The database waiter (db_set_waiter): while a statement or a commit is
 * in flight the worker goes on with everything that needs no database.
 * It reads its handlers' pipes, reaps them, and concludes the ones that
 * end (their outcomes wait for the next write).  It starts the jobs
 * reserved ahead in their place, and keeps timeouts and leases.  So a
 * slot does not stand empty for a round trip and an fsync: on a fast
 * queue that wait is as long as the handler's run.  Nothing here may
 * call the database, and no slot is freed or taken here (only READY ->
 * RUNNING -> WRITING), so the step that waits finds its own slots as it
 * left them. */
static short
db_wait(void *arg, int fd, short events, int timeout_ms)
{
	struct worker *w = arg;
	int64_t now = mono_ms(), due = io_due(w);
	int t = due <= now ? 0 : due - now > 1000 ? 1000 : (int)(due - now);
	short rev;

	if (timeout_ms >= 0 && timeout_ms < t)
		t = timeout_ms;
	rev = serve_io(w, t, fd, events);
	read_signals(w);
	keep_time(w);
	return rev;
}

static void
tick_runners(struct worker *w, int64_t now)
{
	unsigned i;

	pool_tick(now);
	for (i = 0; i < w->nslots; i++) {
		struct slot *s = &w->slots[i];

		if (s->state != SLOT_RUNNING)
			continue;
		runner_tick(s->run, now);
		if (runner_finished(s->run))
			conclude(w, s);
	}
	alerts_tick(w->alerts, now);
	start_ready(w);
}

static void
worker_free_arrays(struct worker *w)
{
	free(w->slots);
	free(w->pfd);
	free(w->pfd_first);
	free(w->pfd_count);
	alerts_free(w->alerts);
}

/* The longest one database call of the worker may wait (see
 * db_set_wait_limit): a third of the heartbeat interval, so that a
 * lease outlives several of them; at least 1 s, the unit of the
 * servers' lock wait timeouts, and at most 10 s. */
static int64_t
worker_wait_limit(const struct conf *c)
{
	int64_t ms = c->worker.heartbeat_ms / 3;

	return ms < 1000 ? 1000 : ms > 10000 ? 10000 : ms;
}

/* Descriptors open now. */
static unsigned
open_fds(void)
{
	struct rlimit rl;
	unsigned n = 0;
	int fd, top = 1024;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < 65536)
		top = (int)rl.rlim_cur;
	for (fd = 0; fd < top; fd++)
		n += fcntl(fd, F_GETFD) >= 0;
	return n;
}

/* Makes sure that concurrency handlers can run at once under the
 * open-files limit: each holds FDS_PER_SLOT pipes, on top of what the
 * worker holds now and FDS_SPARE for a handler being started, a
 * reconnect and the libraries.  Raises the soft limit as far as needed
 * when the hard limit allows; otherwise says how many handlers fit. */
static int
fd_budget(unsigned concurrency, char *err)
{
	struct rlimit rl;
	unsigned long long own = open_fds() + FDS_SPARE,
	                   need = own + FDS_PER_SLOT * (unsigned long long)concurrency, hard;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= need)
		return 0;
	if (rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= need) {
		rl.rlim_cur = (rlim_t)need;
		if (setrlimit(RLIMIT_NOFILE, &rl) == 0)
			return 0;
	}
	hard = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > rl.rlim_cur ? rl.rlim_max : rl.rlim_cur;
	errf(err,
	    "concurrency %u needs %llu open files (%d per handler, %llu for the worker) but the "
	    "open-files limit (RLIMIT_NOFILE, ulimit -n) is %llu: it allows concurrency %llu at most; "
	    "lower --concurrency or raise the limit",
	    concurrency, need, FDS_PER_SLOT, own, hard, hard > own ? (hard - own) / FDS_PER_SLOT : 0);
	return -1;
}

static void
worker_identity(struct worker *w)
{
	char rnd[9];

	if (gethostname(w->host, sizeof w->host) < 0)
		snprintf(w->host, sizeof w->host, "localhost");
	w->host[sizeof w->host - 1] = '\0';
	random_hex(rnd, 4);
	snprintf(w->id, sizeof w->id, "%.100s:%d:%s", w->host, (int)getpid(), rnd);
}

static int
worker_start(struct worker *w, char *err)
{
	struct log_field f[6];
	const char *st = db_statement_timeout(w->db);
	char wait[32], *queues;
	int rc;

	w->mode = w->conf->worker.reserve_mode;
	if (w->mode == RESERVE_AUTO && (rc = queue_probe(w->db, &w->mode, err)) != DB_OK)
		return rc;
	if ((rc = register_worker(w, err)) != DB_OK)
		return rc;
	queues = queue_list(w);
	f[0] = LF_S("worker", w->id);
	f[1] = LF_S("queues", queues);
	f[2] = LF_N("concurrency", w->conc);
	f[3] = LF_S("reserve_mode", conf_reserve_mode_name(w->mode));
	duration_format(w->wait_ms, wait, sizeof wait);
	f[4] = LF_S("db_wait_limit", wait);
	f[5] = LF_S("statement_timeout", st != NULL ? st : "none");
	log_fields(LOG_INFO, "worker started", f, 6);
	free(queues);
	return DB_OK;
}

static void
worker_finish(struct worker *w)
{
	char err[ERRSZ];
	unsigned i, unwritten = 0;
	struct log_field f[5];
	struct rusage ru;

	for (i = 0; i < w->nslots; i++)
		if (w->slots[i].state != SLOT_FREE) {
			unwritten++;
			slot_clear(&w->slots[i]);
		}
	if (unwritten > 0)
		log_warn("%u outcomes could not be written; those jobs return when their leases expire",
		    unwritten);
	pool_stop(); /* persistent handlers: EOF, SIGTERM, SIGKILL after kill_grace */
	if (w->db_up && registry_unregister(w->db, w->id, err) != DB_OK)
		log_warn("unregister: %s", err);
	getrusage(RUSAGE_SELF, &ru);
	f[0] = LF_N("done", w->counts.done);
	f[1] = LF_N("retried", w->counts.retried);
	f[2] = LF_N("dead", w->counts.dead);
	f[3] = LF_N("max_rss_kb", ru.ru_maxrss);
	f[4] = LF_S("worker", w->id);
	log_fields(LOG_INFO, "worker stopped", f, 5);
}

/* Whether a stopping worker whose handlers have all ended stops waiting
 * for outcomes it cannot write: at once on a hard stop with the database
 * gone; otherwise once writing has failed (or the database been away)
 * for a whole reserve_ttl, for a stop and --max-time must end even when
 * another session keeps a row locked.  Those jobs come back when their
 * leases expire. */
static int
stop_gives_up(const struct worker *w, int64_t now)
{
	int64_t since = w->write_failing_since;
	unsigned i;

	if (!w->stopping)
		return 0;
	for (i = 0; i < w->nslots; i++)
		if (w->slots[i].state == SLOT_RUNNING)
			return 0;
	if (w->stopping >= 2 && !w->db_up)
		return 1;
	if (!w->db_up && (since == 0 || w->down_since < since))
		since = w->down_since;
	if (since > 0 && since < w->stopping_since)
		since = w->stopping_since; /* the wait is counted from the stop */
	return since > 0 && now - since >= w->conf->worker.reserve_ttl_ms;
}

/* --schedule: enqueue the schedules' due fires, at most once a minute
 * (exactly-once across workers is the scheduler's, by the database). */
static void
tick_schedule(struct worker *w, int64_t now)
{
	if (w->opts->schedule && w->db_up && !w->stopping && now >= w->next_schedule)
		w->next_schedule = mono_ms() + scheduler_worker_tick(w->conf, w->db);
}

/* Runs the loop until a stop condition holds; returns the exit status. */
int
worker_run(const struct conf *c, struct db *db, const struct worker_opts *o)
{
	/* One turn of the loop: each step may wait on the database (within
	 * the wait limit); keep_time runs before each. */
	static void (*const steps[])(struct worker *, int64_t) = {
		try_reconnect,
		write_pending,
		heartbeat,
		tick_schedule,
		reserve,
	};
	struct worker w;
	char err[ERRSZ];
	size_t i;
	int rc;

	memset(&w, 0, sizeof w);
	w.conf = c;
	w.opts = o;
	w.db = db;
	w.db_up = 1;
	w.conc = o->concurrency;
	/* running, reserved ahead, and outcomes held for a group */
	w.nslots = 2 * w.conc + ahead_most(c, w.conc) + WRITE_BATCH;
	w.avg_ms = -1;
	w.wait_ms = worker_wait_limit(c);
	if (fd_budget(w.conc, err) < 0) {
		log_error("cannot start: %s", err);
		return 78;
	}
	w.slots = xcalloc(w.nslots, sizeof *w.slots);
	w.pfd = xcalloc(3 + (size_t)(w.nslots + ALERTS_MAX) * RUNNER_MAX_FDS, sizeof *w.pfd);
	w.pfd_first = xcalloc(w.nslots + 1, sizeof *w.pfd_first);
	w.pfd_count = xcalloc(w.nslots + 1, sizeof *w.pfd_count);
	w.alerts = alerts_new();
	pool_init(w.conc); /* processes: one per handler running at once, not per held job */
	worker_identity(&w);
	/* Reconnect, so that the wait limit covers the client's timeouts. */
	db_set_wait_limit(db, w.wait_ms);
	db_set_waiter(db, db_wait, &w);
	if ((rc = db_connect(db, 1, err)) != DB_OK || setup_signals(err) < 0 ||
	    (rc = worker_start(&w, err)) != DB_OK) {
		log_error("cannot start: %s", err);
		db_set_waiter(db, NULL, NULL);
		worker_free_arrays(&w);
		return 69;
	}
	w.next_heartbeat = mono_ms() + c->worker.heartbeat_ms;
	w.active_at = mono_ms();
	if ((w.wake = wakeup_open(c, err)) == NULL && err[0] != '\0')
		log_warn("no wakeups, polling every %lld ms at most: %s", (long long)c->worker.poll_interval_ms, err);
	else if (w.wake != NULL)
		log_debug("wakeup socket %s", wakeup_path(w.wake));
	if (o->max_time_ms > 0)
		w.max_time_at = mono_ms() + o->max_time_ms;
	for (;;) {
		read_signals(&w);
		for (i = 0; i < ARRAY_LEN(steps); i++) {
			keep_time(&w);
			steps[i](&w, mono_ms());
		}
		if (should_exit(&w) || stop_gives_up(&w, mono_ms()))
			break;
		wait_and_io(&w, mono_ms());
	}
	worker_finish(&w);
	db_set_waiter(db, NULL, NULL); /* w is gone on return */
	wakeup_close(w.wake);
	restore_signals();
	worker_free_arrays(&w);
	return 0;
}
