/* scheduler.c -- enqueue each fire of each schedule exactly once.
 *
 * A tick reads the database's clock (never the host's: hosts drift, and
 * every host must agree on what is due), then for each enabled schedule
 * finds the fires after the point the ticks have already looked at
 * (jobq_schedule_state.checked_until, or its last fire) up to now:
 *
 *  - none: nothing to do;
 *  - the latest one, if it is less than a minute old, is enqueued;
 *  - an older one (nothing ticked at its time: downtime) is enqueued
 *    late if it is within catch_up (default 1h), else recorded as
 *    missed; either way it is reported.  Fires before the latest are
 *    only counted and reported: after downtime a schedule runs once,
 *    not once per missed minute (catch_up = latest, the default);
 *  - catch_up = none records every late fire as missed; catch_up = all
 *    enqueues each fire within catch_up, oldest first (tick_all).
 *
 * Exactly once: the jobq_schedule_runs row, whose primary key is (name,
 * fire_at), and the job are inserted in one transaction.  A second tick
 * for the same fire, on this host or another, at once or later, finds
 * the key taken (it waits on the first one's row lock, then gets a
 * duplicate key) and enqueues nothing.
 *
 * Only what the schedule still is: a tick loads every schedule first
 * and fires from that copy, so the statement that inserts the run row
 * inserts it only while the schedule is still on and unedited, locking
 * its rows until the fire commits (schedules_fire_guard).  Once `jobq
 * schedule disable`, `edit` or `remove` has returned, no fire of what
 * it changed happens.
 *
 * The clock is schedules_now() (schedules.c), with its test hook
 * JOBQ_SCHEDULER_NOW; exactly-once is enforced by the key either way.
 * What --list and the dashboard show about schedules is read by
 * schedule_view.c, not here. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <stdarg.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "audit.h"
#include "cron.h"
#include "isotime.h"
#include "log.h"
#include "queue.h"
#include "scheduler.h"
#include "schedules.h"
#include "wakeup.h"

#define ON_TIME_S 60     /* a fire this fresh is not late */
#define COUNT_LIMIT 1000 /* past this many missed fires, stop counting each */
#define ER_DUP_ENTRY_ 1062

/* FIRE_GONE: the schedule was switched off, edited or removed since the
 * tick loaded it (schedules_fire_guard); nothing was written. */
enum fire_result { FIRE_ENQUEUED, FIRE_SKIPPED, FIRE_MISSED, FIRE_TAKEN, FIRE_GONE };

/* How a fire is made (fire_tx's how): recorded as missed, not enqueued;
 * by `jobq schedule --run`; without the overlap rule (the fires of one
 * catch_up = all tick after the first it enqueued: they catch up
 * together). */
#define FIRE_F_MISSED 1
#define FIRE_F_MANUAL 2
#define FIRE_F_NO_OVERLAP 4

/* "03:00" in the schedule's zone, with the date when it is not now's. */
static void
local_text(const struct cron_zone *z, int64_t t, int64_t now, char *out, size_t len)
{
	char a[64], b[64];

	cron_format(z, t, a, sizeof a);
	cron_format(z, now, b, sizeof b);
	if (strncmp(a, b, 10) == 0)
		snprintf(out, len, "%.5s", a + 11);
	else
		snprintf(out, len, "%.10s %.5s", a, a + 11);
}

static void PRINTFLIKE(3, 4) say(const struct scheduler_opts *o, int important, const char *fmt, ...)
{
	struct buf b;
	va_list ap;

	buf_init(&b);
	va_start(ap, fmt);
	buf_vprintf(&b, fmt, ap);
	va_end(ap);
	if (o->say != NULL)
		o->say(o->arg, important, b.data);
	buf_free(&b);
}

/* What the overlap rule reads for one fire (last_job_busy). */
struct overlap {
	char ticked[32]; /* checked_until ("YYYY-MM-DD HH:MM:SS" UTC): the last tick that finished */
	int64_t age_s;   /* how long ago the fire was due, on the schedules' clock */
};

/* Whether the job of the schedule's last fire is still queued or
 * running, for the fire that ov describes.  The last fire is the latest
 * run with a job that was enqueued before this fire was due: by --run,
 * by a tick that finished (its fire is at or before checked_until), or
 * by a tick cut off before it finished that enqueued it before this
 * fire's time.  So the fires one tick catches up (catch_up = all) never
 * hold each other up, even when the tick was cut off after the first of
 * them and the next tick enqueues the rest.  A job whose lease expired
 * (its worker died) does not count: a crash must not block a schedule
 * forever. */
static int
last_job_busy(struct db *db, const char *name, const struct overlap *ov, int *busy, uint64_t *job, char *err)
{
	struct db_res *r;
	char **row;
	int rc;

	*busy = 0;
	r = db_query(db, &rc, err,
	    "SELECT j.id FROM jobs j"
	    " WHERE j.id = (SELECT r.job_id FROM jobq_schedule_runs r WHERE r.name = %q AND r.job_id IS NOT NULL"
	    "  AND (r.manual = 1 OR r.fire_at <= %q OR r.enqueued_at < UTC_TIMESTAMP(6) - INTERVAL %I SECOND)"
	    "  ORDER BY r.enqueued_at DESC LIMIT 1)"
	    " AND (j.lease_token IS NULL OR j.lease_expires_at > UTC_TIMESTAMP(6))",
	    name, ov->ticked, ov->age_s);
	if (r == NULL)
		return rc;
	if ((row = db_res_next(r)) != NULL) {
		*busy = 1;
		*job = strtoull(row[0], NULL, 10);
	}
	db_res_free(r);
	return DB_OK;
}

/* The first statement of a fire: its run row, inserted only while s is
 * still on (unless manual) and as loaded (schedules_fire_guard).
 * *res is FIRE_GONE when it is not; FIRE_TAKEN when another tick has
 * the fire. */
static int
insert_run(struct db *db, const struct schedule *s, const char *at, int how, enum fire_result *res, char *err)
{
	struct buf sql;
	char host[256];
	int rc, manual = (how & FIRE_F_MANUAL) != 0;

	if (gethostname(host, sizeof host) < 0)
		snprintf(host, sizeof host, "localhost");
	host[sizeof host - 1] = '\0';
	buf_init(&sql);
	db_sql(db, &sql,
	    "INSERT INTO jobq_schedule_runs (name, fire_at, status, manual, host) SELECT %q, %s, %q, %d, %q",
	    s->name, at, how & FIRE_F_MISSED ? "missed" : "enqueued", manual, host);
	schedules_fire_guard(db, &sql, s, manual);
	rc = db_exec_buf(db, &sql, err);
	buf_free(&sql);
	if (rc != DB_OK && db_errno(db) == ER_DUP_ENTRY_) {
		*res = FIRE_TAKEN;
		return DB_OK;
	}
	if (rc == DB_OK && db_affected(db) == 0)
		*res = FIRE_GONE;
	return rc;
}

/* The transaction of one fire (see the top of the file).  autocommit is
 * off rather than START TRANSACTION so that nothing can commit on its
 * own: should queue_enqueue's own deadlock retry roll back our row and
 * insert the job again, the job stays uncommitted, the row's UPDATE finds
 * nothing, and we roll it all back and run again.  a (NULL: none) is the
 * audit row of a person's run now, on the job, in the same transaction:
 * the fire and its row commit together or not at all. */
static int
fire_tx(struct db *db, const struct schedule *s, const char *at, int how, const struct overlap *ov,
    const struct audit_entry *a, enum fire_result *res, uint64_t *job, char *err)
{
	struct enqueue_item it;
	int rc, busy = 0, missed = how & FIRE_F_MISSED;

	if ((rc = db_exec(db, err, "SET autocommit = 0")) != DB_OK)
		return rc;
	*res = FIRE_ENQUEUED;
	if ((rc = insert_run(db, s, at, how, res, err)) != DB_OK || *res != FIRE_ENQUEUED)
		return rc;
	if (missed) {
		*res = FIRE_MISSED;
		return rc;
	}
	if (!(how & (FIRE_F_MANUAL | FIRE_F_NO_OVERLAP)) && !s->overlap_allow &&
	    (rc = last_job_busy(db, s->name, ov, &busy, job, err)) != DB_OK)
		return rc;
	if (busy) {
		*res = FIRE_SKIPPED;
		return db_exec(db, err,
		    "UPDATE jobq_schedule_runs SET status = 'skipped' WHERE name = %q AND fire_at = %s",
		    s->name, at);
	}
	memset(&it, 0, sizeof it);
	it.type = s->type;
	it.queue = s->queue;
	it.payload = s->payload;
	it.payload_len = strlen(s->payload);
	it.priority = s->priority;
	if ((rc = queue_enqueue(db, &it, 1, job, err)) != DB_OK)
		return rc;
	rc = db_exec(db, err,
	    "UPDATE jobq_schedule_runs SET job_id = %U WHERE name = %q AND fire_at = %s AND job_id IS NULL",
	    *job, s->name, at);
	if (rc == DB_OK && db_affected(db) != 1) {
		errf(err, "the run row of '%s' went away (rolled back by a deadlock)", s->name);
		return DB_ERETRY;
	}
	if (rc == DB_OK && a != NULL)
		rc = audit_add_entry(db, a, *job, err);
	*res = FIRE_ENQUEUED;
	return rc;
}

/* Runs fire_tx to its end: COMMIT, or ROLLBACK and again after a
 * deadlock or lock wait timeout.  ov: for the overlap rule; NULL with
 * FIRE_F_MANUAL or FIRE_F_MISSED.  a: the audit row, or NULL. */
static int
fire(struct db *db, const struct schedule *s, const char *at_text, int how, const struct overlap *ov,
    const struct audit_entry *a, enum fire_result *res, uint64_t *job, char *err)
{
	char at_sql[64];
	int rc, attempt = 0;

	snprintf(at_sql, sizeof at_sql, "'%s'", at_text);
	do {
		char ignored[ERRSZ];

		*job = 0;
		rc = fire_tx(db, s, at_sql, how, ov, a, res, job, err);
		if (rc == DB_OK && *res != FIRE_TAKEN && *res != FIRE_GONE)
			rc = db_commit(db, err);
		else
			db_rollback(db);
		if (db_connected(db))
			db_exec(db, ignored, "SET autocommit = 1");
	} while (rc != DB_OK && db_retry_after(rc, ++attempt));
	return rc;
}

/* The fires of one schedule in (from, now]: the latest, how many, and
 * the first.  Counting stops being exact past COUNT_LIMIT (an every-
 * minute schedule after a week of downtime): it then jumps to the last
 * day before now. */
static int
due_fires(const struct cron *cr, const struct cron_zone *z, int64_t from, int64_t now, int64_t *first,
    int64_t *latest, uint64_t *count)
{
	int64_t t = from, f;

	*count = 0;
	while (cron_next(cr, z, t, &f) == CRON_FOUND && f <= now) {
		if (*count == 0)
			*first = f;
		*latest = t = f;
		if (++*count == COUNT_LIMIT && t < now - 86400)
			t = now - 86400;
	}
	return *count > 0;
}

static void
report_fire(const struct scheduler_opts *o, const struct schedule *s, enum fire_result res, uint64_t job,
    const char *when, const char *late_at, int64_t late_s, struct scheduler_counts *n)
{
	switch (res) {
	case FIRE_TAKEN:
		say(o, 0, "%s: the %s fire was already enqueued by another run", s->name, when);
		break;
	case FIRE_GONE:
		say(o, 1,
		    "%s: %s fire not enqueued: the schedule was disabled, edited or removed during this tick",
		    s->name, when);
		break;
	case FIRE_SKIPPED:
		n->skipped++;
		say(o, 0,
		    "%s: %s fire skipped: job %llu of its last fire is still queued or running (overlap = "
		    "skip)",
		    s->name, when, (unsigned long long)job);
		break;
	case FIRE_MISSED:
		n->missed++;
		say(o, 1, "%s: missed %s fire not enqueued: %lld min late, beyond catch_up", s->name, when,
		    (long long)(late_s / 60));
		break;
	case FIRE_ENQUEUED:
		n->enqueued++;
		if (late_at != NULL) {
			n->late++;
			say(o, 1, "%s: missed %s fire enqueued late at %s (job %llu)", s->name, when, late_at,
			    (unsigned long long)job);
		} else
			say(o, 0, "%s: %s fire enqueued as job %llu (%s on %s)", s->name, when,
			    (unsigned long long)job, s->type, s->queue);
		break;
	}
}

/* What a --dry-run says of a fire, late_s after its time: what the tick
 * would do, not done: enqueue it, record it as missed, or, when check
 * says the overlap rule applies to it (as fire_tx would), skip it while
 * the job of its last fire is still queued or running.  Reads, never
 * writes.  *enq: 1 when it would be enqueued. */
static int
would(struct db *db, const struct scheduler_opts *o, const struct schedule *s, int missed, int check,
    struct overlap *ov, const char *when, int64_t late_s, int *enq, char *err)
{
	uint64_t job = 0;
	int busy = 0, rc;

	*enq = 0;
	if (!missed && check && !s->overlap_allow) {
		ov->age_s = late_s;
		if ((rc = last_job_busy(db, s->name, ov, &busy, &job, err)) != DB_OK)
			return rc;
	}
	if (busy) {
		say(o, 1,
		    "%s: would skip the %s fire: job %llu of its last fire is still queued or running"
		    " (overlap = skip)",
		    s->name, when, (unsigned long long)job);
		return DB_OK;
	}
	*enq = !missed;
	say(o, 1, "%s: would %s the %s fire%s (%s on %s, payload %s)", s->name,
	    missed ? "record as missed" : "enqueue", when, !missed && late_s >= ON_TIME_S ? " late" : "",
	    s->type, s->queue, s->payload);
	return DB_OK;
}

/* catch_up = all: every fire in (from, now] that is on time or within
 * catch_up is enqueued, oldest first, each once (its own run row); the
 * overlap rule applies to each fire until one of them is enqueued, for
 * the others catch up with that one.  A fire skipped because the job of
 * an earlier tick is still queued or running does not let the next ones
 * through: that job is their last fire's too (a stuck job must not get
 * every missed fire piled behind it).  Older fires are counted and
 * reported; when none is recent enough, the latest of them is recorded
 * as missed, as latest does.  *res: the last fire's result (FIRE_GONE
 * ends it).  At most COUNT_LIMIT fires a tick: *left is 1 when due
 * fires are left over, said so; the tick must then not move
 * checked_until past them, so that the next tick (which starts after
 * its last fire, schedules_checked_until) enqueues them, as it would
 * after a tick cut off. */
static int
tick_all(struct db *db, const struct schedule *s, const struct cron *cr, const struct cron_zone *z,
    int64_t from, int64_t now, struct overlap *ov, const struct scheduler_opts *o, struct scheduler_counts *n,
    enum fire_result *res, int *left, char *err)
{
	int64_t ok_s = s->catch_up_ms / 1000 > ON_TIME_S - 1 ? s->catch_up_ms / 1000 : ON_TIME_S - 1;
	int64_t cutoff = now - ok_s - 1, t, f, first = 0, latest = 0;
	uint64_t old = 0, job = 0, k = 0;
	char when[40], now_at[40], at[32];
	int rc, would_enq, caught = 0; /* one fire of this tick enqueued: the rest catch up with it */

	local_text(z, now, now, now_at, sizeof now_at);
	if (cutoff > from && due_fires(cr, z, from, cutoff, &first, &latest, &old))
		say(o, 1, "%s: %s%llu fire%s from %s on older than catch_up not enqueued", s->name,
		    old >= COUNT_LIMIT ? "over " : "", (unsigned long long)old, old == 1 ? "" : "s",
		    (local_text(z, first, now, when, sizeof when), when));
	for (t = from > cutoff ? from : cutoff; k < COUNT_LIMIT && cron_next(cr, z, t, &f) == CRON_FOUND &&
	     f <= now;
	     t = f, k++) {
		local_text(z, f, now, when, sizeof when);
		if (o->dry_run) {
			if ((rc = would(db, o, s, 0, !caught, ov, when, now - f, &would_enq, err)) != DB_OK)
				return rc;
			caught |= would_enq;
			continue;
		}
		isotime_utc_text(f, at, sizeof at);
		ov->age_s = now - f;
		if ((rc = fire(db, s, at, caught ? FIRE_F_NO_OVERLAP : 0, ov, NULL, res, &job, err)) != DB_OK)
			return rc;
		caught |= *res == FIRE_ENQUEUED;
		report_fire(o, s, *res, job, when, now - f >= ON_TIME_S ? now_at : NULL, now - f, n);
		if (*res == FIRE_GONE)
			return DB_OK;
	}
	if ((*left = k == COUNT_LIMIT && cron_next(cr, z, t, &f) == CRON_FOUND && f <= now))
		say(o, 1, "%s: %d fires a tick at most: those from %s on are left to the next tick", s->name,
		    COUNT_LIMIT, (local_text(z, f, now, when, sizeof when), when));
	if (k == 0 && old > 0) {
		local_text(z, latest, now, when, sizeof when);
		if (o->dry_run)
			return would(db, o, s, 1, 0, NULL, when, now - latest, &would_enq, err);
		isotime_utc_text(latest, at, sizeof at);
		if ((rc = fire(db, s, at, FIRE_F_MISSED, NULL, NULL, res, &job, err)) != DB_OK)
			return rc;
		report_fire(o, s, *res, job, when, NULL, now - latest, n);
	}
	return DB_OK;
}

/* Records that this tick looked at s up to now_utc, with its file's
 * enabled key as read (schedules_checked). */
static int
checked(struct db *db, const struct schedule *s, const char *now_utc, char *err)
{
	return schedules_checked(db, s->name, now_utc, s->source == SCHEDULE_INI ? s->ini_enabled : -1, err);
}

/* Where a tick at now starts looking for fires of s.  A schedule not
 * seen before: a minute back, so that it may take this minute's fire
 * (the file does not say when a section was written).  An INI schedule
 * whose file the last tick read as enabled = no and this one reads as
 * yes: the same, not from where that tick left off, since the time
 * between was spent off for all a tick can tell (it was turned on at a
 * moment no tick saw); catch_up is for downtime.  A schedule turned off
 * and back on between two ticks is not known to have been off at all:
 * that time is downtime to it (jobq.ini(5), enabled). */
static int64_t
start_from(const struct schedule *s, const struct schedule_checked *ck, int64_t now)
{
	int turned_on = ck->ini_off && s->source == SCHEDULE_INI && s->ini_enabled;

	if (!ck->found || (turned_on && ck->until < now - ON_TIME_S))
		return now - ON_TIME_S;
	return ck->until;
}

/* One schedule's part of a tick.  A fire that finds the schedule
 * disabled, edited or removed since the tick loaded it (FIRE_GONE) ends
 * it without moving checked_until: the schedule is no longer what this
 * tick looked at; so do fires of catch_up = all left to the next tick
 * (tick_all).  (A removed one may get its state row back from this
 * tick; `schedule add` resets it.) */
static int
tick_one(struct db *db, const struct schedule *s, const struct cron *cr, const struct cron_zone *z,
    int64_t now, const struct scheduler_opts *o, struct scheduler_counts *n, char *err)
{
	int64_t from, first = 0, latest = 0, late_s;
	uint64_t count, job = 0;
	char when[40], first_at[40], now_at[40], now_utc[32];
	struct schedule_checked ck;
	struct overlap ov;
	enum fire_result res = FIRE_ENQUEUED;
	int rc, missed, would_enq, left = 0;

	if ((rc = schedules_checked_until(db, s->name, &ck, err)) != DB_OK)
		return rc;
	isotime_utc_text(ck.ticked, ov.ticked, sizeof ov.ticked);
	from = start_from(s, &ck, now);
	isotime_utc_text(now, now_utc, sizeof now_utc);
	if (!s->enabled || !due_fires(cr, z, from, now, &first, &latest, &count))
		return o->dry_run ? DB_OK : checked(db, s, now_utc, err);
	if (!ck.has_state && !o->dry_run && (rc = schedules_state_row(db, s->name, err)) != DB_OK)
		return rc;
	if (s->catch_up_mode == CATCH_UP_ALL) {
		if ((rc = tick_all(db, s, cr, z, from, now, &ov, o, n, &res, &left, err)) != DB_OK ||
		    o->dry_run || res == FIRE_GONE || left)
			return rc;
		return checked(db, s, now_utc, err);
	}
	late_s = now - latest;
	missed = late_s >= ON_TIME_S && late_s * 1000 > s->catch_up_ms;
	local_text(z, latest, now, when, sizeof when);
	local_text(z, now, now, now_at, sizeof now_at);
	if (count > 1) {
		local_text(z, first, now, first_at, sizeof first_at);
		say(o, 1, "%s: %s%llu earlier fire%s from %s on %s missed while nothing ticked", s->name,
		    count > COUNT_LIMIT ? "over " : "", (unsigned long long)(count - 1),
		    count == 2 ? "" : "s", first_at, count == 2 ? "was" : "were");
	}
	if (o->dry_run)
		return would(db, o, s, missed, 1, &ov, when, late_s, &would_enq, err);
	{
		char at[32];

		isotime_utc_text(latest, at, sizeof at);
		ov.age_s = late_s;
		if ((rc = fire(db, s, at, missed ? FIRE_F_MISSED : 0, &ov, NULL, &res, &job, err)) != DB_OK)
			return rc;
	}
	report_fire(o, s, res, job, when, late_s >= ON_TIME_S ? now_at : NULL, late_s, n);
	return res == FIRE_GONE ? DB_OK : checked(db, s, now_utc, err);
}

/* The end of a tick: the names no schedule of v has any more (a
 * section renamed or taken out of the file) are kept looked at up to a
 * minute before now (schedules_orphans_checked), so that one which
 * comes back is taken as new, not as one that missed every fire while
 * it was gone. */
static int
keep_orphans(struct db *db, struct schedule *const *v, size_t nv, int64_t now, char *err)
{
	char **names, until[32];
	size_t n;
	int rc;

	if ((rc = schedules_orphans(db, v, nv, &names, &n, err)) != DB_OK)
		return rc;
	isotime_utc_text(now - ON_TIME_S, until, sizeof until);
	rc = schedules_orphans_checked(db, names, n, until, err);
	strv_free(names);
	return rc;
}

/* Enqueues what is due for every schedule.  A schedule that cannot fire
 * (a database schedule whose handler left the INI) is reported and
 * counted in n->failed, unless it is disabled (an operator silencing
 * it must not get the failure every minute); so is one whose fire the
 * server refused (DB_EFAIL: a trigger, a value it will not store); the
 * others go on.  Returns a DB_* code when the database failed (the
 * connection, a lock wait). */
int
scheduler_tick(const struct conf *c, struct db *db, const struct scheduler_opts *o,
    struct scheduler_counts *n, char *err)
{
	struct schedule **v;
	size_t nv, i;
	char now_utc[32];
	int64_t now;
	int rc;

	memset(n, 0, sizeof *n);
	if ((rc = schedules_now(db, &now, err)) != DB_OK)
		return rc;
	isotime_utc_text(now, now_utc, sizeof now_utc);
	if ((rc = schedules_load(c, db, &v, &nv, err)) != DB_OK)
		return rc;
	for (i = 0; i < nv && rc == DB_OK; i++) {
		char e2[ERRSZ];
		struct cron_zone *z = NULL;
		struct cron *cr = NULL;

		if (v[i]->problem != NULL && !v[i]->enabled) {
			/* Switched off: it would not fire anyway (--list shows
			 * why); looked at like any disabled schedule (tick_one),
			 * so its off time is never caught up. */
			if (!o->dry_run && (rc = checked(db, v[i], now_utc, e2)) == DB_EFAIL)
				rc = DB_OK; /* it fires nothing: a refusal keeps no other from firing */
			else if (rc != DB_OK)
				snprintf(err, ERRSZ, "%s", e2);
			continue;
		}
		if (v[i]->problem == NULL && (z = cron_zone_open(v[i]->timezone, e2)) != NULL &&
		    (cr = cron_parse(v[i]->cron, e2)) != NULL) {
			/* A statement the server refuses for this schedule alone
			 * (its fire rolled back) must not keep the rest from firing;
			 * a lost connection or a lock wait ends the tick. */
			if ((rc = tick_one(db, v[i], cr, z, now, o, n, err)) == DB_EFAIL && db_connected(db)) {
				n->failed++;
				say(o, 1, "%s: cannot fire: %s", v[i]->name, err);
				rc = DB_OK;
			}
		} else {
			n->failed++;
			say(o, 1, "%s: cannot fire: %s", v[i]->name, v[i]->problem ? v[i]->problem : e2);
		}
		cron_free(cr);
		cron_zone_free(z);
	}
	if (rc == DB_OK && !o->dry_run)
		rc = keep_orphans(db, v, nv, now, err);
	schedules_free(v, nv);
	if (n->enqueued > 0)
		wakeup_send(c, NULL);
	return rc;
}

/* Whether the manual fire of s at at (its run row's key) was committed,
 * after the answer to its COMMIT was lost (db_unsure): read once the
 * connection is back and the session that sent the COMMIT has ended
 * (db_lost_settle: it may still be committing), causally on a Galera
 * node, as a worker reads back a lost outcome (queue_outcome_applied).
 * *job: the fire's job, 0 when the fire is not there (its transaction
 * rolled back: nothing was enqueued).  DB_OK, or a db_rc when it could
 * not be told (then the job may have been enqueued). */
static int
run_read_back(struct db *db, const struct schedule *s, const char *at, uint64_t *job, char *err)
{
	struct db_res *r;
	char **row, ignored[ERRSZ];
	int rc, back;

	*job = 0;
	if ((rc = db_connect(db, 1, err)) != DB_OK || (rc = db_lost_settle(db, 3000, err)) != DB_OK ||
	    (rc = db_causal(db, 1, err)) != DB_OK)
		return rc;
	r = db_query(db, &rc, err,
	    "SELECT job_id FROM jobq_schedule_runs WHERE name = %q AND fire_at = %q AND manual = 1", s->name,
	    at);
	if (r != NULL && (row = db_res_next(r)) != NULL && row[0] != NULL)
		*job = strtoull(row[0], NULL, 10);
	db_res_free(r);
	if (r == NULL)
		return rc;
	back = db_causal(db, 0, ignored);
	return back == DB_EGONE ? back : DB_OK;
}

/* scheduler_run_now's fire of s at at, whose COMMIT's answer was lost:
 * DB_OK with *job when it was committed, said so; DB_EGONE with err
 * saying that nothing was enqueued, or, when it could not be read back,
 * that it may have been. */
static int
run_lost(struct db *db, const struct schedule *s, const struct scheduler_opts *o, const char *at,
    uint64_t *job, char *err)
{
	char e2[ERRSZ];

	if (run_read_back(db, s, at, job, e2) != DB_OK) {
		if (!db_unsure(db)) /* the read-back's own statements cleared it */
			errf(err,
			    "%s: the connection was lost before the answer to the fire's COMMIT came, and"
			    " reading the fire back failed (%s): it may have been enqueued; look (jobq"
			    " schedule --list, jobq status) before running it again",
			    s->name, e2);
		return DB_EGONE;
	}
	if (*job == 0) {
		errf(err,
		    "%s: the connection was lost before the answer to the fire's COMMIT came; read back"
		    " after reconnecting, the fire is not there: nothing was enqueued",
		    s->name);
		return DB_EGONE;
	}
	say(o, 1, "%s: the answer to the fire's COMMIT was lost; read back after reconnecting, it was committed",
	    s->name);
	return DB_OK;
}

/* `jobq schedule --run NAME`: enqueues s now, whatever its time, its
 * on/off switch and the overlap rule; the run is recorded as manual, and
 * a (NULL: none; the dashboard's button) is written on the job in the
 * fire's transaction.  When the answer to the fire's COMMIT is lost,
 * the fire's row is read back (run_read_back): DB_OK with the job it
 * made, or DB_EGONE with err saying that nothing was enqueued; only
 * when that cannot be read either is it left unsure (db_unsure). */
int
scheduler_run_now(const struct conf *c, struct db *db, const struct schedule *s,
    const struct scheduler_opts *o, const struct audit_entry *a, uint64_t *job_id, char *err)
{
	enum fire_result res;
	char at[40] = "";
	int rc;

	if (s->problem != NULL) {
		errf(err, "%s: cannot fire: %s", s->name, s->problem);
		return DB_EFAIL;
	}
	if (o->dry_run) {
		say(o, 1, "%s: would enqueue now (%s on %s, payload %s)", s->name, s->type, s->queue,
		    s->payload);
		return DB_OK;
	}
	if ((rc = queue_db_now(db, at, sizeof at, err)) != DB_OK ||
	    (rc = schedules_state_row(db, s->name, err)) != DB_OK)
		return rc;
	rc = fire(db, s, at, FIRE_F_MANUAL, NULL, a, &res, job_id, err);
	if (rc == DB_EGONE && db_unsure(db) && (rc = run_lost(db, s, o, at, job_id, err)) == DB_OK)
		res = FIRE_ENQUEUED;
	if (rc != DB_OK)
		return rc;
	if (res == FIRE_GONE) {
		errf(err, "%s: edited or removed meanwhile; nothing enqueued, try again", s->name);
		return DB_EFAIL;
	}
	if (res != FIRE_ENQUEUED) {
		errf(err, "%s: another run took the same microsecond; try again", s->name);
		return DB_EFAIL;
	}
	wakeup_send(c, s->queue);
	say(o, 1, "%s: enqueued now as job %llu (%s on %s)", s->name, (unsigned long long)*job_id, s->type,
	    s->queue);
	return DB_OK;
}

static void
log_say(void *arg, int important, const char *line)
{
	(void)arg;
	if (important)
		log_warn("schedule: %s", line);
	else
		log_info("schedule: %s", line);
}

/* `jobq work --schedule`: one tick, logged; returns the milliseconds to
 * wait before the next one: to the start of the database clock's next
 * minute (plus a second), so a worker ticks at most once a minute and
 * soon after each fire time.  Exactly-once across workers is the
 * database's key, not this timing. */
int64_t
scheduler_worker_tick(const struct conf *c, struct db *db)
{
	struct scheduler_opts o = { 0, log_say, NULL };
	struct scheduler_counts n;
	char err[ERRSZ];
	int64_t now;

	if (scheduler_tick(c, db, &o, &n, err) != DB_OK || schedules_now(db, &now, err) != DB_OK) {
		log_warn("schedule: %s", err);
		return 10 * 1000;
	}
	return (60 - now % 60 + 1) * 1000;
}
