/* watchdog.c -- the watchdogs: each check decides whether something is
 * wrong now, and an incident (incidents.c) is opened when it turns wrong
 * and cleared when it turns right again.  Every `jobq work` runs them
 * every few seconds (worker_watch.c); whichever process changes the
 * incident's row delivers the alert, so it goes out once however many
 * watch.
 *
 * The checks, with the kind of incident each opens:
 *  - missed (a schedule with alert_after): its latest fire was recorded
 *    as missed (later than catch_up), or a fire after the last one the
 *    ticks handled is alert_after old with no run: nothing ticked (a
 *    dead man's switch).  Fires before the schedule was first looked at
 *    (watched_since) do not count.
 *  - unfinished (a schedule with alert_after): the job of its last fire
 *    is still queued or running alert_after after it was enqueued, or was
 *    dead-lettered.
 *  - wait (a queue with max_wait): its oldest due job has waited longer;
 *    read as the smallest due_at of the queue in jobs_due (queue, due_at,
 *    priority): one index dive.  A stale job counts from its lease's
 *    expiry (due_at): that is when it became due again.
 *  - stale (stale_alert): a job whose lease expired longer ago than that
 *    and nobody took back (its worker died, and no worker serves the
 *    queue); read through jobs_lease, which holds only reserved jobs.
 *  - dead (dead_alert = N/WINDOW): more than N jobs of the queue failed
 *    within the window and are still in the dead letter; read through
 *    failed_jobs_queue (queue, failed_at), N + 1 rows at most.
 * Times are the database's; a schedule's fire times are judged by the
 * schedules' clock (schedules_now, which tests can set).
 *
 * A write whose answer was lost (the connection went after the server
 * applied it) is remembered, and the next run, on a new connection,
 * asks first whether it took (incidents_took) and delivers it if so:
 * the one process that made the change still delivers it, once. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cron.h"
#include "duration.h"
#include "isotime.h"
#include "schedules.h"
#include "watchdog.h"

/* A write of this process whose answer was lost: its incident's id for
 * a clear, 0 for a raise. */
struct unsure {
	char kind[17];
	char name[129];
	uint64_t id;
};

struct watch {
	struct db *db;
	struct watchdog_unsure *u;
	const char *by;
	struct incident *open; /* the open incidents, read once per run */
	size_t nopen;
	watchdog_deliver *deliver;
	void *arg;
};

/* Remembers a write whose answer was lost: id 0 the raise of (kind,
 * name), else the clear of incident id. */
static void
remember(struct watchdog_unsure *p, const char *kind, const char *name, uint64_t id)
{
	struct unsure *u;

	p->list = xrealloc(p->list, (p->n + 1) * sizeof *p->list);
	u = &p->list[p->n++];
	snprintf(u->kind, sizeof u->kind, "%s", kind);
	snprintf(u->name, sizeof u->name, "%s", name);
	u->id = id;
}

/* Opens or clears the incident (kind, name) as bad says, when that
 * changes it; delivers it when this process made the change, or
 * remembers the write when its answer was lost. */
static int
settle(struct watch *w, const char *kind, const char *name, int bad, const char *reason, char *err)
{
	int is_open = incidents_find(w->open, w->nopen, kind, name) != NULL, won = 0, rc;
	struct incident x;

	if (bad == is_open)
		return DB_OK;
	memset(&x, 0, sizeof x);
	if (bad)
		rc = incidents_open(w->db, kind, name, reason, w->by, &x, &won, err);
	else
		rc = incidents_clear(w->db, kind, name, w->by, &x, &won, err);
	if (rc == DB_OK && won == 1)
		w->deliver(w->arg, &x, bad ? "raised" : "cleared");
	if (won == INCIDENT_UNSURE)
		remember(w->u, kind, name, bad ? 0 : x.id);
	free(x.reason);
	return rc;
}

/* Asks about each write whose answer was lost (watchdog_unsure), and
 * delivers those that took; each is forgotten once asked. */
static int
settle_unsure(struct watch *w, char *err)
{
	struct watchdog_unsure *p = w->u;
	struct incident x;
	int rc = DB_OK, took;

	while (p->n > 0 && rc == DB_OK) {
		const struct unsure *u = &p->list[p->n - 1];

		rc = incidents_took(w->db, u->kind, u->name, u->id, w->by, &x, &took, err);
		if (rc == DB_OK && took)
			w->deliver(w->arg, &x, u->id == 0 ? "raised" : "cleared");
		if (rc == DB_OK)
			p->n--;
		free(x.reason);
	}
	if (p->n == 0)
		watchdog_unsure_free(p);
	return rc;
}

/* Forgets every write p remembers. */
void
watchdog_unsure_free(struct watchdog_unsure *p)
{
	free(p->list);
	p->list = NULL;
	p->n = 0;
}

/* The first column of the first row of the query sql (freed) as a
 * number; *null 1 when there is no row or it is NULL. */
static int
scalar(struct db *db, struct buf *sql, int64_t *v, int *null, char *err)
{
	struct db_res *r;
	char **row;
	int rc;

	*null = 1;
	r = db_query_buf(db, sql, &rc, err);
	buf_free(sql);
	if (r == NULL)
		return rc;
	if ((row = db_res_next(r)) != NULL && row[0] != NULL) {
		*v = strtoll(row[0], NULL, 10);
		*null = 0;
	}
	db_res_free(r);
	return DB_OK;
}

static int
check_wait(struct watch *w, const struct queue_watch *q, char *err)
{
	char reason[256], waited[32], most[32];
	int64_t ms = 0;
	struct buf sql;
	int rc, none;

	buf_init(&sql);
	db_sql(w->db, &sql,
	    "SELECT TIMESTAMPDIFF(MICROSECOND, MIN(due_at), UTC_TIMESTAMP(6)) DIV 1000 FROM jobs WHERE queue = %q",
	    q->queue);
	if ((rc = scalar(w->db, &sql, &ms, &none, err)) != DB_OK)
		return rc;
	duration_format(ms / 1000 * 1000, waited, sizeof waited);
	duration_format(q->max_wait_ms, most, sizeof most);
	snprintf(reason, sizeof reason, "the oldest due job of queue %s has waited %s (max_wait %s)",
	    q->queue, waited, most);
	return settle(w, "wait", q->queue, !none && ms > q->max_wait_ms, reason, err);
}

static int
check_stale(struct watch *w, const struct queue_watch *q, char *err)
{
	char reason[256];
	int64_t n = 0;
	struct buf sql;
	int rc, none;

	buf_init(&sql);
	db_sql(w->db, &sql,
	    "SELECT COUNT(*) FROM jobs FORCE INDEX (jobs_lease) WHERE lease_token IS NOT NULL"
	    " AND queue = %q AND lease_expires_at < UTC_TIMESTAMP(6) - INTERVAL %I MICROSECOND",
	    q->queue, q->stale_ms * 1000);
	if ((rc = scalar(w->db, &sql, &n, &none, err)) != DB_OK)
		return rc;
	snprintf(reason, sizeof reason,
	    "%lld job%s of queue %s held by a worker whose lease expired (did it die?) and not taken back",
	    (long long)n, n == 1 ? "" : "s", q->queue);
	return settle(w, "stale", q->queue, n > 0, reason, err);
}

static int
check_dead(struct watch *w, const struct queue_watch *q, char *err)
{
	char reason[256], window[32];
	int64_t n = 0;
	struct buf sql;
	int rc, none;

	buf_init(&sql);
	db_sql(w->db, &sql,
	    "SELECT COUNT(*) FROM (SELECT 1 FROM failed_jobs WHERE queue = %q"
	    " AND failed_at > UTC_TIMESTAMP(6) - INTERVAL %I MICROSECOND LIMIT %u) t",
	    q->queue, q->dead_window_ms * 1000, q->dead_count + 1);
	if ((rc = scalar(w->db, &sql, &n, &none, err)) != DB_OK)
		return rc;
	duration_format(q->dead_window_ms, window, sizeof window);
	snprintf(reason, sizeof reason, "more than %u job%s of queue %s dead-lettered within %s (dead_alert)",
	    q->dead_count, q->dead_count == 1 ? "" : "s", q->queue, window);
	return settle(w, "dead", q->queue, n > q->dead_count, reason, err);
}

/* The checks of every [queue NAME] that has watchdogs. */
static int
check_queues(struct watch *w, const struct conf *c, char *err)
{
	size_t i;
	int rc = DB_OK;

	for (i = 0; i < c->nqueue_watches && rc == DB_OK; i++) {
		const struct queue_watch *q = &c->queue_watches[i];

		if (q->max_wait_ms > 0)
			rc = check_wait(w, q, err);
		if (rc == DB_OK && q->stale_ms >= 0)
			rc = check_stale(w, q, err);
		if (rc == DB_OK && q->dead_window_ms > 0)
			rc = check_dead(w, q, err);
	}
	return rc;
}

/* The schedule's latest run that was not --run: its fire time and
 * whether it was recorded missed.  *found 0 when it has none. */
static int
last_run(struct db *db, const char *name, int64_t *fire, int *missed, int *found, char *err)
{
	struct db_res *r;
	char **row;
	int rc;

	*found = *missed = 0;
	r = db_query(db, &rc, err,
	    "SELECT UNIX_TIMESTAMP(fire_at), status = 'missed' FROM jobq_schedule_runs"
	    " WHERE name = %q AND manual = 0 ORDER BY fire_at DESC LIMIT 1",
	    name);
	if (r == NULL)
		return rc;
	if ((row = db_res_next(r)) != NULL && row[0] != NULL) {
		*fire = strtoll(row[0], NULL, 10);
		*missed = strcmp(row[1], "1") == 0;
		*found = 1;
	}
	db_res_free(r);
	return DB_OK;
}

/* "YYYY-MM-DD HH:MM" of t in the schedule's zone. */
static void
fire_text(const struct cron_zone *z, int64_t t, char *out, size_t len)
{
	char a[64];

	cron_format(z, t, a, sizeof a);
	snprintf(out, len, "%.10s %.5s", a, strlen(a) > 11 ? a + 11 : "");
}

/* missed: see the top of the file. */
static int
check_missed(struct watch *w, const struct schedule *s, const struct cron *cr, const struct cron_zone *z,
    int64_t now, char *err)
{
	int64_t since = 0, last = 0, f = 0, after;
	char now_utc[32], reason[256], at[40], d[32];
	struct schedule_checked ck;
	int rc, found, missed, bad = 0;

	isotime_utc_text(now, now_utc, sizeof now_utc);
	if ((rc = schedules_watched_since(w->db, s->name, now_utc, &since, err)) != DB_OK ||
	    (rc = schedules_checked_until(w->db, s->name, &ck, err)) != DB_OK ||
	    (rc = last_run(w->db, s->name, &last, &missed, &found, err)) != DB_OK)
		return rc;
	duration_format(s->alert_after_ms, d, sizeof d);
	if (found && missed && last >= since) {
		bad = 1;
		fire_text(z, last, at, sizeof at);
		snprintf(reason, sizeof reason, "schedule %s: the fire of %s was missed (later than catch_up)",
		    s->name, at);
	} else {
		after = ck.until > since ? ck.until : since;
		bad = cron_next(cr, z, after, &f) == CRON_FOUND && (f + s->alert_after_ms / 1000) <= now;
		fire_text(z, f, at, sizeof at);
		snprintf(reason, sizeof reason,
		    "schedule %s: the fire of %s was not enqueued within %s (is anything ticking?)", s->name,
		    at, d);
	}
	return settle(w, "missed", s->name, bad, reason, err);
}

/* unfinished: see the top of the file. */
static int
check_unfinished(struct watch *w, const struct schedule *s, char *err)
{
	char reason[256], d[32];
	struct db_res *r;
	char **row;
	int rc, bad = 0;

	r = db_query(w->db, &rc, err,
	    "SELECT r.job_id, TIMESTAMPDIFF(MICROSECOND, r.enqueued_at, UTC_TIMESTAMP(6)) DIV 1000 > %I,"
	    " j.id IS NOT NULL, f.id IS NOT NULL FROM (SELECT job_id, enqueued_at FROM jobq_schedule_runs"
	    "  WHERE name = %q AND job_id IS NOT NULL ORDER BY enqueued_at DESC LIMIT 1) r"
	    " LEFT JOIN jobs j ON j.id = r.job_id LEFT JOIN failed_jobs f ON f.id = r.job_id",
	    s->alert_after_ms, s->name);
	if (r == NULL)
		return rc;
	duration_format(s->alert_after_ms, d, sizeof d);
	snprintf(reason, sizeof reason, "schedule %s: its last job did not finish", s->name);
	if ((row = db_res_next(r)) != NULL && strcmp(row[3], "1") == 0) {
		bad = 1;
		snprintf(reason, sizeof reason, "schedule %s: job %s of its last fire was dead-lettered", s->name,
		    row[0]);
	} else if (row != NULL && strcmp(row[1], "1") == 0 && strcmp(row[2], "1") == 0) {
		bad = 1;
		snprintf(reason, sizeof reason, "schedule %s: job %s of its last fire is not done after %s",
		    s->name, row[0], d);
	}
	db_res_free(r);
	return settle(w, "unfinished", s->name, bad, reason, err);
}

/* The checks of every enabled schedule that has alert_after; one that
 * is off, or cannot fire (its problem is the ticks' to report), is
 * never late. */
static int
check_schedules(struct watch *w, const struct conf *c, char *err)
{
	struct schedule **v;
	size_t nv, i;
	int64_t now;
	int rc;

	if ((rc = schedules_now(w->db, &now, err)) != DB_OK ||
	    (rc = schedules_load(c, w->db, &v, &nv, err)) != DB_OK)
		return rc;
	for (i = 0; i < nv && rc == DB_OK; i++) {
		struct cron_zone *z = NULL;
		struct cron *cr = NULL;
		int on = v[i]->enabled && v[i]->problem == NULL, watched = v[i]->alert_after_ms > 0;
		char e2[ERRSZ];

		if (!watched)
			continue;
		if (on && (z = cron_zone_open(v[i]->timezone, e2)) != NULL &&
		    (cr = cron_parse(v[i]->cron, e2)) != NULL)
			rc = check_missed(w, v[i], cr, z, now, err);
		else
			rc = settle(w, "missed", v[i]->name, 0, "", err);
		if (rc == DB_OK)
			rc = on ? check_unfinished(w, v[i], err) : settle(w, "unfinished", v[i]->name, 0, "", err);
		cron_free(cr);
		cron_zone_free(z);
	}
	schedules_free(v, nv);
	return rc;
}

/* Runs every check once; by names this process in the incidents it
 * writes.  fn is called for each incident this process opened or
 * cleared.  u keeps, from one run to the next, the writes whose answers
 * were lost: asked about first.  Returns a DB_* code: the checks stop at
 * the first failure. */
int
watchdog_run(const struct conf *c, struct db *db, const char *by, struct watchdog_unsure *u,
    watchdog_deliver *fn, void *arg, char *err)
{
	struct watch w;
	int rc;

	memset(&w, 0, sizeof w);
	w.db = db;
	w.u = u;
	w.by = by;
	w.deliver = fn;
	w.arg = arg;
	if ((rc = settle_unsure(&w, err)) != DB_OK ||
	    (rc = incidents_list(db, 0, &w.open, &w.nopen, err)) != DB_OK)
		return rc;
	if ((rc = check_queues(&w, c, err)) == DB_OK)
		rc = check_schedules(&w, c, err);
	incidents_free(w.open, w.nopen);
	return rc;
}
