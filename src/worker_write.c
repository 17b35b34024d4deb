/* worker_write.c -- step 3 of the worker's loop: a job's outcome.  When a
 * handler ends, write_conclude turns its exit and control channel into
 * the outcome to write (done, retry, dead or given back); write_pending
 * writes the outcomes that wait, several in one transaction
 * (queue_write, in queue_outcome.c), and settles each slot from what the
 * write did. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alert.h"
#include "duration.h"
#include "failed.h"
#include "isotime.h"
#include "log.h"
#include "metrics.h"
#include "outcome.h"
#include "queue.h"
#include "runner.h"
#include "trace.h"
#include "worker_int.h"

#define WRITE_RETRY_MS 500
/* A span's status message, before otlp.h keeps its first 255 bytes:
 * room for "outcome 'NAME' not written: " and a whole outcome note, so
 * that the compiler sees no cut to warn of (gcc at -O0 does). */
#define SPAN_WHY ERRSZ
/* An outcome whose write lost the connection this many times is written
 * in a transaction of its own, then without the handler's texts, then
 * given up (its job returns when its lease expires): a statement that
 * makes the server drop the connection must not be resent forever. */
#define WRITE_TRIES_ALONE 1
#define WRITE_TRIES_MINIMAL 3
#define WRITE_TRIES_MAX 5

/* The jobs a done outcome of s enqueues: the follow-ups its handler
 * wrote, then its handler's on_success job (same payload).  Those that
 * name no traceparent continue the job's trace under the run's span. */
static void
gather_follow(struct worker *w, struct slot *s)
{
	const struct handler *next = s->h->on_success ? conf_handler(w->conf, s->h->on_success) : NULL;
	size_t i;

	s->follow = xcalloc(s->ctl.nfollow + 1, sizeof *s->follow);
	for (i = 0; i < s->ctl.nfollow; i++)
		s->follow[s->nfollow++] = s->ctl.follow[i].e;
	if (next != NULL)
		s->follow[s->nfollow++] = (struct enqueue_item){ .type = next->type,
			.queue = next->queue,
			.payload = s->job->payload,
			.payload_len = s->job->payload_len,
			.priority = s->job->priority };
	for (i = 0; i < s->nfollow; i++)
		if (s->follow[i].traceparent == NULL && s->job->run_trace[0] != '\0')
			s->follow[i].traceparent = s->job->run_trace;
}

/* A follow-up whose "expires_at" has passed by the database's clock
 * would expire as it is enqueued: like a past expires_at in a batch line
 * (refused there), it makes the channel bad.  The database's time is
 * that of the claim (reserved_at, moved to the start for a job reserved
 * ahead) plus the handler's run time measured here: never later than
 * the server's own, so an expiry still ahead is never refused (one that
 * passed in the last milliseconds expires unstarted, as before).  So is
 * one whose expiry is not after its due time (enqueue_expiry_check).  0,
 * or -1 with the line and the problem in err. */
static int
follow_expiry(const struct slot *s, char *err)
{
	const struct control *ctl = &s->ctl;
	char now[40], why[ERRSZ];
	size_t i;

	snprintf(now, sizeof now, "%s", s->job->reserved_at);
	isotime_add_ms(now, sizeof now, s->duration_ms);
	for (i = 0; i < ctl->nfollow; i++) {
		const char *at = ctl->follow[i].expires_at;

		if (at != NULL && now[0] != '\0' && strcmp(at, now) <= 0) {
			errf(err,
			    "control channel line %zu: enqueue: \"expires_at\": %.32s UTC is in the past "
			    "(the database's time: %.19s); the job would expire as it is enqueued",
			    ctl->follow_line[i], at, now);
			return -1;
		}
		/* now is never later than the server's time, and the row is
		 * inserted later still: it stands for the due time of a
		 * "delay", and for the start of an "expires_in" with an "at"
		 * as `jobq enqueue --at --expires-in` takes the clock it read
		 * just before its INSERT.  An expiry that only the moments
		 * between would put after the due time gives a job that could
		 * start in those moments alone: refused as enqueue refuses it. */
		if (enqueue_expiry_check(&ctl->follow[i].e, now[0] != '\0' ? now : NULL, why) != 0) {
			errf(err, "control channel line %zu: enqueue: %s", ctl->follow_line[i], why);
			return -1;
		}
	}
	return 0;
}

/* Reads the control channel of s's finished handler; a bad one is a
 * handler error, its message added to the run's error.  Returns 0 when
 * it was good.  A bad one still hands on the newest good checkpoint the
 * handler wrote (kept apart by the runner): a retry resumes from it, as
 * it would had a heartbeat saved it before the handler ended. */
static int
read_control(struct worker *w, struct slot *s, char *why, size_t whylen)
{
	size_t len, ck_len;
	int overflow;
	unsigned seq;
	const size_t *lines;
	const char *buf = runner_control(s->run, &len, &overflow, &lines), *ck;
	char err[ERRSZ];
	char *text;

	if (control_parse(w->conf, buf, len, overflow, lines, &s->ctl, err) == 0) {
		if (follow_expiry(s, err) == 0)
			return 0;
		control_free(&s->ctl); /* a bad channel: nothing of it is applied */
	}
	if ((ck = runner_checkpoint(s->run, &ck_len, &seq)) != NULL)
		s->ctl.checkpoint = control_checkpoint(ck, ck_len);
	text = xasprintf("%s%sjobq: %s", s->error ? s->error : "", s->error && *s->error ? "\n" : "", err);
	free(s->error);
	s->error = text;
	snprintf(why, whylen, "%s", err);
	return -1;
}

/* The outcome of a handler stopped because its job was cancelled,
 * however it ended once told to stop: cancelled, nothing of its control
 * channel applied, and the run's error says who cancelled it. */
static void
cancelled(struct slot *s)
{
	char *text = xasprintf("jobq: cancelled by %s%s%s", s->job->cancel_by, s->error && *s->error ? "\n" : "",
	    s->error ? s->error : "");

	free(s->error);
	s->error = text;
	s->write = OUT_CANCEL;
	snprintf(s->reason, sizeof s->reason, "cancelled by %.240s", s->job->cancel_by);
}

/* Turns a finished handler into the outcome to write. */
void
write_conclude(struct worker *w, struct slot *s)
{
	struct exit_info x;
	struct decision d;
	char why[ERRSZ];
	int ctl_bad;

	runner_result(s->run, &x, &s->output, &s->error, &s->duration_ms);
	outcome_exit_words(&x, s->words, sizeof s->words);
	if (x.timed_out)
		metrics_handler(s->job->type, MH_TIMEOUT);
	else if (x.exec_errno != 0)
		metrics_handler(s->job->type, MH_START_FAILED);
	else if (!x.exited && x.signo != 0 && !runner_interrupted(s->run))
		metrics_handler(s->job->type, MH_CRASH);
	s->has_run = 1;
	ctl_bad = read_control(w, s, why, sizeof why) < 0;
	/* A handler we terminated (a hard stop, or a lease we could not
	 * keep) gives its job back, unless it still finished its work (exit
	 * 0 on SIGTERM): that counts as done.  The fence drops either when
	 * the lease is already gone. */
	if (s->cancelling) {
		cancelled(s);
	} else if (runner_interrupted(s->run) && (w->stopping >= 2 || s->lease_stop) &&
	           !(x.exited && x.code == 0)) {
		s->write = OUT_GIVEBACK;
	} else {
		int64_t age = s->job->age_ms + s->duration_ms;

		/* A retry_after replaces the backoff, checked against
		 * retry_until as the delay used (outcome.c). */
		outcome_decide(s->h, &x, s->error, s->job->attempt, s->max_attempts, age,
		    ctl_bad ? -1 : s->ctl.retry_after_ms, &d);
		if (ctl_bad && d.kind == OUTCOME_DONE)
			outcome_handler_error(s->h, why, s->job->attempt, s->max_attempts, age, &d);
		if (d.kind == OUTCOME_DONE)
			gather_follow(w, s);
		s->write = d.kind == OUTCOME_DONE ? OUT_DONE : d.kind == OUTCOME_RETRY ? OUT_RETRY : OUT_DEAD;
		s->delay_ms = d.delay_ms;
		snprintf(s->reason, sizeof s->reason, "%s", d.reason);
	}
	runner_free(s->run);
	s->run = NULL;
	slot_set(w, s, SLOT_WRITING);
	s->written_by = mono_ms() + WRITE_HOLD_MS;
	w->avg_ms = w->avg_ms < 0 ? s->duration_ms : (w->avg_ms * 7 + s->duration_ms) / 8;
	w->write_now = 1;
}

/* The log line of a written outcome. */
static void
log_outcome(struct worker *w, const struct slot *s, const char *outcome)
{
	char attempt[32], delay[32];
	struct log_field f[12];
	char trace_id[TRACE_ID_LEN + 1], span_id[SPAN_ID_LEN + 1];
	const struct handler *h = conf_handler(w->conf, s->job->type);
	unsigned max = s->max_attempts ? s->max_attempts
	             : s->job->max_attempts ? s->job->max_attempts
	             : h ? h->max_attempts : 1;
	/* A job reserved ahead and handed back unstarted as the worker
	 * stops (--max-time, a cron run's end) is no problem: under --quiet
	 * it must not mail anyone.  Nor a job a person cancelled, or one that
	 * expired unstarted as its enqueuer asked: --quiet mails retries and
	 * dead letters only, and the expiry sweep logs the same ends as info. */
	int quiet = strcmp(outcome, "done") == 0 || s->write == OUT_CANCEL || s->write == OUT_EXPIRE ||
	            (s->write == OUT_GIVEBACK && strcmp(s->words, "not started") == 0);
	int n = 0;

	snprintf(attempt, sizeof attempt, "%u/%u", s->job->attempt, max);
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
	trace_ids(s->has_run ? s->job->run_trace : NULL, trace_id, span_id);
	if (trace_id[0] != '\0') {
		f[n++] = LF_S("trace_id", trace_id);
		f[n++] = LF_S("span_id", span_id);
	}
	log_fields(quiet ? LOG_INFO : LOG_WARN, "job", f, n);
}

/* The error text kept with a retry: the exit status, then stderr. */
static char *
last_error_text(const struct slot *s)
{
	return xasprintf("[%s] %s", s->words, s->error ? s->error : "");
}

/* The metrics' name of what became of s's outcome (mo: how its write
 * ended, MO_DONE when it was written as asked), counted in metrics.c:
 * by outcome, and for a run by queue and type with its duration. */
static void
metric_outcome(const struct slot *s, enum metrics_outcome mo)
{
	static const enum metrics_outcome as[] = { [OUT_DONE] = MO_DONE, [OUT_RETRY] = MO_RETRY,
		[OUT_DEAD] = MO_DEAD, [OUT_GIVEBACK] = MO_GIVEN_BACK, [OUT_CANCEL] = MO_CANCELLED,
		[OUT_EXPIRE] = MO_EXPIRED };

	if (mo == MO_DONE)
		mo = as[s->write];
	metrics_outcome(mo);
	if (s->has_run && s->started_ns != 0) /* a job ended unstarted has a run row, not a run */
		metrics_run(s->job->queue, s->job->type, mo, s->duration_ms);
	if (mo == MO_DONE)
		metrics_followups(s->job->type, (unsigned)s->nfollow);
}

/* Logs and counts the outcome of s, written or (lost) dropped, and frees
 * its slot. */
static void
count_outcome(struct worker *w, struct slot *s, int lost)
{
	char why[SPAN_WHY] = "";

	metric_outcome(s, lost ? MO_LOST : MO_DONE);
	if (lost)
		snprintf(why, sizeof why,
		    "lease lost (another worker or release-stale took it); outcome '%s' dropped",
		    queue_outcome_name(s->write));
	span_run(w, s, lost ? "lost" : NULL, why);
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
		else if (s->write == OUT_CANCEL)
			w->counts.cancelled++;
		else if (s->write == OUT_EXPIRE)
			w->counts.expired++;
	}
	slot_clear(w, s);
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

/* The dead-letter row of s's job as the worker wrote it (its texts may
 * have been cut there to fit the server's packet), failed now: for
 * on_dead when the row cannot be read back.  v points into s. */
static void
dead_as_written(const struct slot *s, struct job_view *v, char *when, size_t len)
{
	isotime_utc_text((int64_t)time(NULL), when, len);
	memset(v, 0, sizeof *v);
	v->id = s->job->id;
	v->queue = s->job->queue;
	v->type = s->job->type;
	v->payload = s->job->payload;
	v->attempts = s->job->attempt - (s->attempt_unmade && s->job->attempt > 0);
	v->reason = (char *)s->reason;
	v->exception = s->error;
	v->failed_at = when;
}

/* A job of s is committed to dead-letter: its handler's on_dead program
 * gets the row as committed (read back, so that it says what a person
 * will find), or, when that read fails (the connection lost after the
 * commit), as the worker wrote it: the commit is what on_dead is owed
 * for, once. */
static void
alert_dead(struct worker *w, const struct slot *s)
{
	static char *no_env[] = { NULL };
	const struct handler *h = s->h;
	struct handler none;
	struct job_view v;
	char err[ERRSZ], when[32];

	if (h == NULL && w->conf->worker.on_dead_argv != NULL) {
		/* A job of no [handler]: the [worker] on_dead, in a clean
		 * environment but for [worker] env.NAME, as the worker's user. */
		memset(&none, 0, sizeof none);
		none.type = s->job->type;
		none.queue = s->job->queue;
		none.env = w->conf->worker.env != NULL ? w->conf->worker.env : no_env;
		none.on_dead_argv = w->conf->worker.on_dead_argv;
		h = &none;
	}
	if (h == NULL || h->on_dead_argv == NULL)
		return;
	metrics_alert(MA_ON_DEAD);
	if (failed_show(w->db, s->job->id, "+00:00", &v, err) != DB_OK) {
		log_warn("job %llu: reading the dead job back failed (%s): on_dead gets it as this worker wrote it",
		    (unsigned long long)s->job->id, err);
		dead_as_written(s, &v, when, sizeof when);
		alerts_add(w->alerts, h, s->job->id, alert_json(&v));
		return;
	}
	alerts_add(w->alerts, h, s->job->id, alert_json(&v));
	job_view_free(&v);
}

/* Counts and logs the jobs o's end cancelled, which its transaction
 * ended unstarted (final_cascade): outcomes as much as a claim's would
 * have been, had they waited for one. */
static void
cascaded(const struct outcome *o)
{
	uint64_t n = o->cascaded[0] + o->cascaded[1];

	if (n == 0)
		return;
	metrics_outcomes(MO_EXPIRED, o->cascaded[0]);
	metrics_outcomes(MO_CANCELLED, o->cascaded[1]);
	log_info("job %llu: its end ended %llu job%s that waited for it (down the graph) unstarted",
	    (unsigned long long)o->job->id, (unsigned long long)n, n == 1 ? "" : "s");
}

/* Acts on what queue_write did with the outcome of slot s: a written
 * or lost outcome frees the slot, a refused one too (logged: its job
 * returns when its lease expires); one whose write failed stays for the
 * next try, unless the connection was lost under it too often.  A run
 * whose outcome is refused or given up still ends its span, as it counts
 * in jobq_runs_total. */
static void
settle(struct worker *w, struct slot *s, const struct outcome *o, int rc)
{
	unsigned long long id = (unsigned long long)s->job->id;
	char why[SPAN_WHY];

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
		cascaded(o); /* before count_outcome, which frees the slot's job */
		count_outcome(w, s, o->state == OUTS_LOST);
		return;
	case OUTS_REFUSED:
		log_error("job %llu: outcome '%s' not written: %s; the job returns when its lease expires",
		    id, queue_outcome_name(s->write), o->note);
		metric_outcome(s, MO_REFUSED);
		snprintf(
		    why, sizeof why, "outcome '%s' not written: %s", queue_outcome_name(s->write), o->note);
		span_run(w, s, "refused", why);
		break;
	case OUTS_FAILED:
		/* A lock held elsewhere: the next tries write this outcome
		 * alone, after the others (writing_in_order). */
		s->write_locked += rc == DB_ERETRY || rc == DB_EWAIT;
		/* The connection dropped with the transaction sent: the server
		 * may have applied it, and the next try asks first. */
		s->write_unsure |= rc == DB_EGONE;
		if (rc != DB_EGONE || ++s->write_tries < WRITE_TRIES_MAX)
			return;
		log_error("job %llu: the connection was lost %u times while writing its outcome '%s'; giving "
		          "it up: the job returns when its lease expires",
		    id, s->write_tries, queue_outcome_name(s->write));
		metric_outcome(s, MO_GIVEN_UP);
		snprintf(why, sizeof why,
		    "outcome '%s' not written: the connection was lost %u times while writing it",
		    queue_outcome_name(s->write), s->write_tries);
		span_run(w, s, "given_up", why);
		break;
	default:
		return;
	}
	slot_clear(w, s);
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

	if (w->stopping || slot_count(w, SLOT_RUNNING) == 0)
		return 0;
	for (i = 0; i < w->nslots; i++)
		if (w->slots[i].state == SLOT_WRITING) {
			n++;
			by = min64(by, w->slots[i].written_by);
		}
	if (n == 0 || n >= WRITE_BATCH || now >= by)
		return 0;
	w->next_write = by;
	return 1;
}

/* qsort order of slots: those whose writes waited on locks less often
 * first, then as they were reserved. */
static int
write_order(const void *a, const void *b)
{
	const struct slot *x = *(struct slot *const *)a, *y = *(struct slot *const *)b;

	if (x->write_locked != y->write_locked)
		return x->write_locked < y->write_locked ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Whether the outcomes that wait are written on this turn: when the
 * database is up and a new outcome or the next try is due, unless they
 * are held for a group (hold_writes).  It clears write_now once it has
 * looked. */
static int
write_due(struct worker *w, int64_t now)
{
	if (!w->db_up || (!w->write_now && now < w->next_write))
		return 0;
	if (w->write_failing_since == 0 && hold_writes(w, now)) {
		w->write_now = 0;
		return 0;
	}
	w->write_now = 0;
	return slot_count(w, SLOT_WRITING) > 0 || w->charge_due;
}

/* Puts the running jobs whose attempts are not charged yet in charge;
 * returns how many. */
static unsigned
uncharged(struct worker *w, struct job **charge)
{
	unsigned i, n = 0;

	for (i = 0; i < w->nslots; i++)
		if (w->slots[i].state == SLOT_RUNNING && !w->slots[i].job->charged)
			charge[n++] = w->slots[i].job;
	return n;
}

/* Puts the slots whose outcomes wait in who, in the order the jobs were
 * reserved (and started): the run rows' ids then follow the runs, as
 * they did with one write per job.  An outcome whose write waited on a
 * lock held elsewhere (another session holds its job's row) goes after
 * the others, in a transaction of its own, and queue_write stops at the
 * first that fails: one such row neither costs another outcome its
 * write nor makes one write wait more than once.  Each failure moves it
 * further back, so several of them take turns.  Returns how many. */
static unsigned
writing_in_order(struct worker *w, struct slot **who)
{
	unsigned i, n = 0;

	for (i = 0; i < w->nslots; i++)
		if (w->slots[i].state == SLOT_WRITING)
			who[n++] = &w->slots[i];
	qsort(who, n, sizeof *who, write_order);
	return n;
}

/* What queue_write is given for s: its outcome o, with its run record
 * when its handler ran, its follow-ups when done, and for a retry the
 * error text kept with it (*text, the caller frees it). */
static void
outcome_of(struct worker *w, struct slot *s, struct outcome *o, struct run_record *run, char **text)
{
	*run = (struct run_record){ w->id, s->duration_ms, s->words, s->output, s->error, s->ctl.result,
		s->started_ns == 0 };
	*o = (struct outcome){ s->job, s->write, s->delay_ms, NULL, s->error ? s->error : "", s->words,
		s->reason, s->has_run ? run : NULL, s->write_tries >= WRITE_TRIES_ALONE || s->write_locked > 0,
		s->write_tries >= WRITE_TRIES_MINIMAL, s->write_unsure, OUTS_PENDING, 0, 0, "", NULL, 0, NULL,
		NULL, 0, w->id, { 0, 0 } };
	if (s->write == OUT_DONE) {
		o->follow = s->follow;
		o->nfollow = s->nfollow;
	}
	if (s->write == OUT_RETRY)
		o->last_error = *text = last_error_text(s);
	if (s->write == OUT_RETRY || s->write == OUT_DEAD || (s->write == OUT_GIVEBACK && s->has_run))
		o->checkpoint = s->ctl.checkpoint;
	o->attempt_unmade = s->write == OUT_DEAD && s->attempt_unmade;
}

/* Lets the first outcomes of o[0..n) whose jobs something waits for
 * hand off (queue.h: struct handoff) as many jobs as can start at once.
 * A hand-off counts the job's attempt, as a claim does for the jobs it
 * starts at once and for no others: one handed off beyond them would
 * wait reserved ahead with its attempt counted, and come back charged
 * without having run were the worker killed (max_attempts 1: dead).
 * The jobs the others release are left to any claim, this worker's
 * next one too.  A job that gains a waiter while it runs is not let:
 * its outcome releases that waiter for a claim. */
static void
handoff_allow(struct worker *w, struct outcome *o, unsigned n)
{
	int room = (int)w->conc - (int)slot_count(w, SLOT_RUNNING) - (int)slot_count(w, SLOT_READY);
	unsigned i;

	if (w->handoff.queues == NULL || w->stopping)
		return;
	for (i = 0; i < n && room > 0; i++)
		if (o[i].job->waiters != 0 && o[i].kind != OUT_RETRY && o[i].kind != OUT_GIVEBACK) { /* ends it */
			o[i].handoff = &w->handoff;
			room--;
		}
}

/* Takes the jobs the outcomes just written handed off to this worker
 * (queue.h: struct handoff), read back in their transaction: puts them
 * in slots and starts them like a claim's, or gives them back at once
 * when the worker is stopping. */
static void
handoff_take(struct worker *w, int64_t now)
{
	size_t n = 0, i, k;
	unsigned room = w->nslots - slot_count(w, SLOT_READY) - slot_count(w, SLOT_RUNNING) -
	    slot_count(w, SLOT_WRITING);

	/* A token kept over a failed write (write_pending) reads back, with
	 * the jobs new to this worker, those it took before, which it may
	 * hold still, or have ended or dropped since: each is taken once. */
	for (i = 0; i < w->handoff.njobs; i++) {
		struct job *j = w->handoff.jobs[i];

		for (k = 0; k < w->nhandoff_taken && w->handoff_taken[k] != j->id; k++)
			;
		if (k < w->nhandoff_taken || n >= room) {
			job_free(j); /* taken before; or no slot: its lease expires */
			continue;
		}
		if (w->nhandoff_taken == w->handoff_taken_cap) {
			w->handoff_taken_cap = w->handoff_taken_cap ? 2 * w->handoff_taken_cap : 16;
			w->handoff_taken = xrealloc(w->handoff_taken, w->handoff_taken_cap * sizeof *w->handoff_taken);
		}
		w->handoff_taken[w->nhandoff_taken++] = j->id;
		w->handoff.jobs[n++] = j;
	}
	w->active_at = now;
	metrics_handoff((unsigned)n);
	reserve_place(w, w->handoff.jobs, n, mono_ms(), now);
	free(w->handoff.jobs);
	w->handoff.jobs = NULL;
	w->handoff.njobs = 0;
	/* As after a claim: a stop that came while the write was in flight
	 * (poll_db_wait reads the signals) gave back the jobs ready then,
	 * not these, and a stopping worker starts nothing; kept, they would
	 * hold it (and their leases, which its heartbeat extends) for good. */
	if (w->stopping)
		start_give_back(w);
	start_ready(w);
}

/* Writes every outcome that waits, in as few transactions as fit (see
 * queue_write).  A slot is freed once its outcome is written, its lease
 * turned out lost, or the server refused it; when the database is away
 * they all stay and are tried again. */
void
write_pending(struct worker *w, int64_t now)
{
	struct outcome *o;
	struct run_record *runs;
	struct slot **who;
	struct job **charge;
	char **texts, err[ERRSZ];
	unsigned i, n, nc;
	int rc;

	/* Called on every turn of the loop: nothing is allocated before
	 * there is something to write. */
	if (!write_due(w, now))
		return;
	o = xcalloc(w->nslots, sizeof *o);
	runs = xcalloc(w->nslots, sizeof *runs);
	who = xcalloc(w->nslots, sizeof *who);
	texts = xcalloc(w->nslots, sizeof *texts);
	charge = xcalloc(w->nslots, sizeof *charge);
	n = writing_in_order(w, who);
	/* The charges go in the first transaction; after a write that
	 * waited on a lock they wait for a turn without outcomes, since the
	 * locked row may be a running job's. */
	nc = 0;
	if (!w->write_waited || n == 0) {
		nc = uncharged(w, charge);
		w->charge_due = 0;
	}
	for (i = 0; i < n; i++)
		outcome_of(w, who[i], &o[i], &runs[i], &texts[i]);
	handoff_allow(w, o, n);
	if (n + nc > 0) {
		int64_t t0 = mono_us();
		int unsure = w->handoff_unsure, may_hand = 0;

		/* A write that failed may have handed jobs off (an outcome of
		 * a job something waits for), its answer lost: the token stays
		 * until a write succeeds, and that one reads them back
		 * (handoff_take takes each job once). */
		if (!unsure) {
			random_hex(w->handoff.token, LEASE_TOKEN_LEN / 2);
			w->nhandoff_taken = 0;
		}
		rc = queue_write(w->db, o, n, charge, nc, err);
		metrics_write(mono_us() - t0);
		for (i = 0; i < nc; i++)
			w->charge_due |= !charge[i]->charged;
		for (i = 0; i < n; i++) {
			may_hand |= o[i].handoff != NULL && (o[i].job->waiters != 0 || o[i].gained_waiter);
			settle(w, who[i], &o[i], rc);
		}
		w->handoff_unsure = rc != DB_OK && (unsure || may_hand);
		/* Read back when stopping too: handoff_take gives them back,
		 * attempt refunded, where left they would come back charged
		 * once their lease ran out, without having run. */
		if (rc == DB_OK && unsure && w->handoff.queues != NULL && w->handoff.njobs == 0)
			w->handoff_unsure = queue_handoff_read(w->db, &w->handoff, err) != DB_OK;
		if (w->handoff.njobs > 0)
			handoff_take(w, now);
		free(w->handoff.jobs); /* what a read that found none left */
		w->handoff.jobs = NULL;
		w->write_waited = rc == DB_ERETRY || rc == DB_EWAIT;
		if (rc == DB_OK) {
			w->next_poll = now; /* slots are free: look for work at once */
			w->write_delay = 0;
			w->write_failing_since = 0;
		} else {
			conn_failed(w, rc, "writing outcomes", err);
			write_failed(w, now);
		}
	}
	for (i = 0; i < w->nslots; i++)
		free(texts[i]);
	free(texts);
	free(charge);
	free(who);
	free(runs);
	free(o);
}

/* The worker stops with s's outcome still unwritten (the database away,
 * or a row held, for a whole reserve_ttl after the stop): counted and
 * its span ended as an outcome given up, as settle() does for one whose
 * write lost its connection too often, so that the run is seen in the
 * metrics and the trace alike.  The job returns when its lease expires. */
void
write_abandon(struct worker *w, struct slot *s)
{
	char why[SPAN_WHY];

	metric_outcome(s, MO_GIVEN_UP);
	snprintf(why, sizeof why, "outcome '%s' not written: the worker stopped before it could write it",
	    queue_outcome_name(s->write));
	span_run(w, s, "given_up", why);
}
