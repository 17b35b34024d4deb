/* schedules.c -- jobq_schedules and jobq_schedule_state: the schedules
 * kept in the database, and each schedule's on/off switch and how far
 * the scheduler has looked.  Every SQL statement on those two tables is
 * here; so is the clock schedules are judged by (schedules_now), which
 * the scheduler and the views of schedules share. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "audit.h"
#include "cron.h"
#include "isotime.h"
#include "runs.h"
#include "schedules.h"

static struct schedule *
copy_ini(const struct schedule *src)
{
	struct schedule *s = schedule_new(src->name, SCHEDULE_INI);

	s->line = src->line;
	s->cron = xstrdup(src->cron);
	s->type = xstrdup(src->type);
	s->payload = xstrdup(src->payload);
	s->queue = xstrdup(src->queue);
	s->priority = src->priority;
	s->timezone = xstrdup(src->timezone);
	s->enabled = s->ini_enabled = src->enabled;
	s->overlap_allow = src->overlap_allow;
	s->catch_up_ms = src->catch_up_ms;
	s->catch_up_mode = src->catch_up_mode;
	s->alert_after_ms = src->alert_after_ms;
	s->description = xstrdup(src->description);
	return s;
}

/* A row of jobq_schedules, checked against the configuration as `jobq
 * schedule add` checked it: a handler or queue since removed from the
 * INI leaves the schedule listed, with the reason in s->problem, and
 * never fired. */
static struct schedule *
from_row(const struct conf *c, char **row)
{
	static const char *const keys[] = { "cron", "type", "payload", "queue", "priority", "timezone",
		"overlap", "catch_up", "description", "alert_after" };
	struct schedule *s = schedule_new(row[0], SCHEDULE_DB);
	char err[ERRSZ], catch_up[48], alert_after[32];
	size_t i;

	if (strcmp(row[10], "none") == 0)
		snprintf(catch_up, sizeof catch_up, "none");
	else
		snprintf(catch_up, sizeof catch_up, "%s %sms", row[10], row[8]);
	snprintf(alert_after, sizeof alert_after, "%sms", row[11] != NULL ? row[11] : "0");
	for (i = 0; i < ARRAY_LEN(keys) && s->problem == NULL; i++) {
		const char *v = i == 7 ? catch_up : i == 9 ? alert_after : row[i + 1];

		if (v != NULL && schedule_set(c, s, keys[i], v, err) < 0)
			s->problem = xstrdup(err);
	}
	if (s->problem == NULL && schedule_finish(c, s, err) < 0)
		s->problem = xstrdup(err);
	if (s->problem != NULL && s->cron == NULL)
		s->cron = xstrdup(row[1]);
	s->version = xstrdup(row[12]);
	return s;
}

static void
add(struct schedule ***v, size_t *n, struct schedule *s)
{
	*v = xrealloc(*v, (*n + 1) * sizeof **v);
	(*v)[(*n)++] = s;
}

static int
load_db(const struct conf *c, struct db *db, struct schedule ***v, size_t *n, char *err)
{
	struct db_res *r;
	char **row;
	int rc;

	r = db_query(db, &rc, err,
	    "SELECT name, cron, type, payload, queue, priority, timezone, overlap, catch_up_ms, description,"
	    " catch_up_mode, alert_after_ms, updated_at FROM jobq_schedules ORDER BY name");
	if (r == NULL)
		return rc;
	while ((row = db_res_next(r)) != NULL) {
		const struct schedule *ini = schedules_find(*v, *n, row[0]);
		struct schedule *s = from_row(c, row);

		if (ini != NULL) {
			char why[ERRSZ];

			errf(why,
			    "defined twice: the section at %s:%d fires, this database copy never fires"
			    " ('jobq schedule remove %s' removes it)",
			    c->path, ini->line, row[0]);
			free(s->problem);
			s->problem = xstrdup(why);
		}
		add(v, n, s);
	}
	db_res_free(r);
	return DB_OK;
}

static int
apply_switches(struct db *db, struct schedule **v, size_t n, char *err)
{
	struct db_res *r;
	char **row;
	size_t i;
	int rc;

	r = db_query(db, &rc, err, "SELECT name, enabled FROM jobq_schedule_state WHERE enabled IS NOT NULL");
	if (r == NULL)
		return rc;
	/* An INI schedule its file says enabled = no stays off, whatever
	 * switch a person left in the database before the file said so. */
	while ((row = db_res_next(r)) != NULL)
		for (i = 0; i < n; i++)
			if (strcmp(v[i]->name, row[0]) == 0 && !schedules_ini_off(v[i]))
				v[i]->enabled = strcmp(row[1], "0") != 0;
	db_res_free(r);
	return DB_OK;
}

/* Every schedule, INI ones first (in file order), then the database's
 * by name, with their on/off switches applied.  A database schedule
 * whose name the file has too comes with that as its problem: the file
 * (what was deployed) fires, and the clash is reported by every tick
 * and `jobq check` without holding up the other schedules' fires. */
int
schedules_load(const struct conf *c, struct db *db, struct schedule ***out, size_t *n, char *err)
{
	size_t i;
	int rc;

	*out = NULL;
	*n = 0;
	for (i = 0; i < c->nschedules; i++)
		add(out, n, copy_ini(c->schedules[i]));
	if ((rc = load_db(c, db, out, n, err)) == DB_OK)
		rc = apply_switches(db, *out, *n, err);
	if (rc != DB_OK) {
		schedules_free(*out, *n);
		*out = NULL;
		*n = 0;
	}
	return rc;
}

void
schedules_free(struct schedule **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		schedule_free(v[i]);
	free(v);
}

const struct schedule *
schedules_find(struct schedule *const *v, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(v[i]->name, name) == 0)
			return v[i];
	return NULL;
}

/* The word of a catch_up mode, as the key and the column take it. */
const char *
schedules_catch_up_name(enum catch_up m)
{
	return m == CATCH_UP_NONE ? "none" : m == CATCH_UP_ALL ? "all" : "latest";
}

/* The column values of s, for INSERT and UPDATE. */
static void
values(struct db *db, struct buf *b, const struct schedule *s)
{
	db_sql(db, b,
	    "cron = %q, type = %q, payload = %q, queue = %q, priority = %d, timezone = %q,"
	    " overlap = %q, catch_up_ms = %I, description = %q, updated_at = UTC_TIMESTAMP(6),"
	    " catch_up_mode = %q, alert_after_ms = NULLIF(%I, 0)",
	    s->cron, s->type, s->payload, s->queue, s->priority, s->timezone,
	    s->overlap_allow ? "allow" : "skip", s->catch_up_ms, s->description,
	    schedules_catch_up_name(s->catch_up_mode), s->alert_after_ms);
}

/* The [schedule NAME] section of the INI named name, or NULL. */
const struct schedule *
schedules_ini(const struct conf *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->nschedules; i++)
		if (strcmp(c->schedules[i]->name, name) == 0)
			return c->schedules[i];
	return NULL;
}

/* The statement of schedules_checked: checked_until moves to until,
 * never back; watched_since is set the first time; ini_enabled becomes
 * ini_on (-1: NULL, a database schedule's).  fresh (a schedule being
 * added): whatever row the name has is a removed schedule's (a tick
 * that had loaded it may write it after the removal), and the new
 * schedule starts afresh: switched on, looked at from until. */
static void
checked_sql(struct db *db, struct buf *sql, const char *name, const char *until, int ini_on, int fresh)
{
	db_sql(db, sql,
	    "INSERT INTO jobq_schedule_state (name, checked_until, watched_since, ini_enabled)"
	    " VALUES (%q, %q, %q, %s)",
	    name, until, until, ini_on < 0 ? "NULL" : ini_on ? "1" : "0");
	if (fresh)
		buf_adds(sql,
		    " ON DUPLICATE KEY UPDATE enabled = NULL, checked_until = VALUES(checked_until),"
		    " watched_since = VALUES(watched_since), ini_enabled = VALUES(ini_enabled)");
	else
		db_sql(db, sql,
		    " ON DUPLICATE KEY UPDATE checked_until = GREATEST(COALESCE(checked_until, %q), %q),"
		    " watched_since = COALESCE(watched_since, %q), ini_enabled = VALUES(ini_enabled)",
		    until, until, until);
}

/* One try of schedules_add, inside a transaction: the row, and the
 * schedule looked at up to now (the schedules' clock), so that its
 * first fire is the next one due, never one from before it was added
 * (a tick takes the fire of the last minute of a schedule it has not
 * looked at before: an INI one). */
static int
add_once(struct db *db, const struct schedule *s, char *err)
{
	char now_utc[32];
	struct buf sql;
	int64_t now;
	int rc;

	buf_init(&sql);
	db_sql(db, &sql, "INSERT INTO jobq_schedules SET name = %q, ", s->name);
	values(db, &sql, s);
	rc = db_exec_buf(db, &sql, err);
	buf_free(&sql);
	if (rc != DB_OK && db_errno(db) == 1062) { /* ER_DUP_ENTRY */
		errf(err, "schedule '%s' already exists in the database", s->name);
		return SCHEDULES_EXISTS;
	}
	if (rc != DB_OK || (rc = schedules_now(db, &now, err)) != DB_OK)
		return rc;
	isotime_utc_text(now, now_utc, sizeof now_utc);
	buf_init(&sql);
	checked_sql(db, &sql, s->name, now_utc, -1, 1);
	rc = db_exec_buf(db, &sql, err);
	buf_free(&sql);
	return rc;
}

/* schedules_add's checks of s before anything is written: DB_OK, or
 * SCHEDULES_INVALID or SCHEDULES_IN_INI with the reason in err. */
static int
add_check(const struct conf *c, struct schedule *s, char *err)
{
	const struct schedule *ini;

	if (!conf_valid_name(s->name))
		return errf(err, "name: bad name '%s' (1-64 of A-Z a-z 0-9 _ . -)", s->name),
		       SCHEDULES_INVALID;
	if ((ini = schedules_ini(c, s->name)) != NULL)
		return errf(err, "'%s' is defined in %s:%d; a schedule lives in one place only", s->name,
		           c->path, ini->line),
		       SCHEDULES_IN_INI;
	if (schedule_finish(c, s, err) < 0)
		return SCHEDULES_INVALID;
	return DB_OK;
}

/* schedules_add inside a transaction the caller opened, commits and
 * reruns (audit_tx: the schedule and its audit row commit together). */
int
schedules_add_tx(const struct conf *c, struct db *db, struct schedule *s, char *err)
{
	int rc = add_check(c, s, err);

	return rc != DB_OK ? rc : add_once(db, s, err);
}

/* Adds s as a database schedule: the one way in for `jobq schedule add`
 * and the dashboard, so both refuse the same things.  The caller has
 * set s's fields through schedule_set(), which checked each one; this
 * checks the name, that no INI section has it (a schedule lives in one
 * place only: the tick refuses a name in both), fills the defaults
 * (schedule_finish) and inserts it, looked at up to now (add_once).
 * SCHEDULES_INVALID (bad name, no cron or type), SCHEDULES_IN_INI or
 * SCHEDULES_EXISTS with the reason in err and nothing written; or a
 * DB_* code. */
int
schedules_add(const struct conf *c, struct db *db, struct schedule *s, char *err)
{
	int rc, attempt = 0;

	if ((rc = add_check(c, s, err)) != DB_OK)
		return rc;
	do {
		if ((rc = db_begin(db, err)) != DB_OK)
			return rc;
		if ((rc = add_once(db, s, err)) == DB_OK && (rc = db_commit(db, err)) == DB_OK)
			return DB_OK;
		db_rollback(db);
	} while (db_retry_after(rc, ++attempt));
	return rc;
}

/* Replaces every field of a database schedule. */
int
schedules_update(struct db *db, const struct schedule *s, char *err)
{
	struct buf sql;
	int rc;

	buf_init(&sql);
	buf_adds(&sql, "UPDATE jobq_schedules SET ");
	values(db, &sql, s);
	db_sql(db, &sql, " WHERE name = %q", s->name);
	rc = db_exec_buf(db, &sql, err);
	buf_free(&sql);
	if (rc == DB_OK && db_affected(db) == 0) {
		errf(err, "no schedule '%s' in the database", s->name);
		return SCHEDULES_NOT_FOUND;
	}
	return rc;
}

/* One try of schedules_remove, inside a transaction.  The switch's row
 * goes first: a fire locks it before the schedule's row
 * (schedules_fire_guard), and taking them in the same order keeps the
 * two from deadlocking.  The caller rolls back on an error. */
static int
remove_once(const struct conf *c, struct db *db, const char *name, char *err)
{
	const struct schedule *ini;
	uint64_t left = 0; /* rows of the switch, the schedule and its fires */
	int rc = db_exec(db, err, "DELETE FROM jobq_schedule_state WHERE name = %q", name);

	if (rc == DB_OK) {
		left = db_affected(db);
		rc = db_exec(db, err, "DELETE FROM jobq_schedules WHERE name = %q", name);
	}
	if (rc == DB_OK && db_affected(db) == 0 && (ini = schedules_ini(c, name)) != NULL) {
		errf(err, "'%s' is defined in %s:%d; remove it there (or disable it)", name, c->path,
		    ini->line);
		return SCHEDULES_IN_INI;
	}
	if (rc == DB_OK) {
		left += db_affected(db);
		rc = db_exec(db, err, "DELETE FROM jobq_schedule_runs WHERE name = %q", name);
	}
	/* nothing of it: not even what an orphan leaves (schedules_orphans) */
	if (rc == DB_OK && left + db_affected(db) == 0) {
		errf(err, "no schedule '%s' in the database", name);
		return SCHEDULES_NOT_FOUND;
	}
	return rc;
}

/* Removes a database schedule with its switch and its run history, in
 * one transaction: a schedule added later under the same name is a new
 * one, and the ticks must not take the old one's last fire for its own
 * (they would enqueue a fire from before it existed).  What an orphan
 * (schedules_orphans: an INI section renamed or taken out) left goes
 * the same way.  The CLI and the dashboard both come here.  An INI schedule is refused
 * (SCHEDULES_IN_INI: it is removed from the file) unless the database
 * also has the name: that row is the one `jobq schedule remove` is
 * advised to delete when a name is in both places.  SCHEDULES_NOT_FOUND
 * when neither has it. */
int
schedules_remove(const struct conf *c, struct db *db, const char *name, char *err)
{
	return schedules_remove_audited(c, db, name, NULL, err);
}

/* schedules_remove, with the audit row a (NULL: none) of the removal in
 * its transaction: both are committed or neither is. */
int
schedules_remove_audited(
    const struct conf *c, struct db *db, const char *name, const struct audit_entry *a, char *err)
{
	int rc, attempt = 0;

	do {
		if ((rc = db_begin(db, err)) != DB_OK)
			return rc;
		if ((rc = remove_once(c, db, name, err)) == DB_OK && a != NULL)
			rc = audit_add_entry(db, a, 0, err);
		if (rc == DB_OK && (rc = db_commit(db, err)) == DB_OK)
			return DB_OK;
		db_rollback(db);
	} while (db_retry_after(rc, ++attempt));
	return rc;
}

/* Whether s is an INI schedule whose file says enabled = no: off for
 * good, which no switch in the database turns on (apply_switches). */
int
schedules_ini_off(const struct schedule *s)
{
	return s->source == SCHEDULE_INI && !s->ini_enabled;
}

/* Turns a schedule (INI or database) on or off; the caller checked the
 * name, and that an INI schedule the file turns off is not turned on
 * (schedules_ini_off).  A schedule switched from off to on is looked at
 * up to now (the schedules' clock): a disabled schedule never fires, so
 * the fires due while it was off are not the ticks' to catch up, even
 * when no tick moved checked_until meanwhile (none ran, or the schedule
 * could not fire and the ticks left it alone).  catch_up is for
 * downtime: on a schedule already on, enable changes nothing.  The
 * assignments run left to right, so checked_until reads the old switch. */
int
schedules_switch(struct db *db, const char *name, int enabled, char *err)
{
	char now_utc[32];
	int64_t now;
	int rc;

	if ((rc = schedules_now(db, &now, err)) != DB_OK)
		return rc;
	isotime_utc_text(now, now_utc, sizeof now_utc);
	return db_exec(db, err,
	    "INSERT INTO jobq_schedule_state (name, enabled) VALUES (%q, %d)"
	    " ON DUPLICATE KEY UPDATE checked_until = IF(%d = 1 AND enabled = 0,"
	    "  GREATEST(COALESCE(checked_until, %q), %q), checked_until), enabled = %d",
	    name, enabled ? 1 : 0, enabled ? 1 : 0, now_utc, now_utc, enabled ? 1 : 0);
}

/* The part of the statement that inserts a fire's run row (scheduler.c)
 * which makes it insert nothing unless s is still what the tick loaded:
 * its switch's row is there and not off (manual: on or off), and, for a
 * database schedule, its row is there with the updated_at it was loaded
 * with (every edit sets it).  Both rows are read with shared locks, in
 * the fire's own statement (no round trip of its own): an edit, a switch
 * or a removal that comes first is seen, one that comes later waits on
 * the locks until the fire has committed.  So once such a command has
 * returned, no fire of the old definition happens.  The switch's row
 * must exist (schedules_state_row): under READ COMMITTED a missing row
 * could not be locked.  Appended to b, after "SELECT values". */
void
schedules_fire_guard(struct db *db, struct buf *b, const struct schedule *s, int manual)
{
	db_sql(db, b, " FROM jobq_schedule_state st WHERE st.name = %q", s->name);
	if (!manual)
		buf_adds(b, " AND COALESCE(st.enabled, 1) <> 0");
	if (s->source == SCHEDULE_DB)
		db_sql(db, b,
		    " AND EXISTS (SELECT 1 FROM jobq_schedules d WHERE d.name = %q AND d.updated_at = %q"
		    " LOCK IN SHARE MODE)",
		    s->name, s->version != NULL ? s->version : "");
	buf_adds(b, " LOCK IN SHARE MODE");
}

/* Makes sure name has its row in jobq_schedule_state, which every fire
 * locks (schedules_fire_guard): an INI schedule gets it from its first
 * tick, a database schedule from schedules_add. */
int
schedules_state_row(struct db *db, const char *name, char *err)
{
	struct buf sql;
	int rc;

	/* rerun when it deadlocks: ticks on several Galera nodes create the
	 * row at once, and all but one lose certification */
	buf_init(&sql);
	db_sql(db, &sql, "INSERT INTO jobq_schedule_state (name) VALUES (%q) ON DUPLICATE KEY UPDATE name = name",
	    name);
	rc = db_exec_retry(db, &sql, NULL, 0, err);
	buf_free(&sql);
	return rc;
}

/* Records that the scheduler has looked at name's fires up to until
 * ("YYYY-MM-DD HH:MM:SS" UTC); it never moves back.  The first look
 * also starts watched_since (schedules_watched_since).  ini_on: the
 * enabled key of an INI schedule as this tick read its file (0 or 1),
 * -1 for a database schedule; the next tick reads it back
 * (schedules_checked_until's ini_off).  Rerun when it deadlocks: on
 * Galera, ticks on two nodes write the same row at once and one loses
 * certification. */
int
schedules_checked(struct db *db, const char *name, const char *until, int ini_on, char *err)
{
	struct buf sql;
	int rc;

	buf_init(&sql);
	checked_sql(db, &sql, name, until, ini_on, 0);
	rc = db_exec_retry(db, &sql, NULL, 0, err);
	buf_free(&sql);
	return rc;
}

/* How far the scheduler has looked at name's fires, into *ck: until,
 * the later of checked_until and its last scheduled fire (seconds since
 * the epoch), found 0 when neither exists; ticked, checked_until alone,
 * how far the last tick that finished looked (a tick cut off may have
 * enqueued fires after it), 86400 when there is none; has_state,
 * whether name has its jobq_schedule_state row (schedules_state_row);
 * ini_off, whether the last tick that looked at it read enabled = no in
 * its file (schedules_checked's ini_on). */
int
schedules_checked_until(struct db *db, const char *name, struct schedule_checked *ck, char *err)
{
	struct db_res *r;
	char **row;
	int rc;

	memset(ck, 0, sizeof *ck);
	ck->ticked = 86400;
	r = db_query(db, &rc, err,
	    "SELECT UNIX_TIMESTAMP(GREATEST(c, COALESCE((SELECT MAX(fire_at) FROM jobq_schedule_runs"
	    "  WHERE name = %q AND manual = 0), '1970-01-02'))), UNIX_TIMESTAMP(c),"
	    " EXISTS (SELECT 1 FROM jobq_schedule_state WHERE name = %q),"
	    " EXISTS (SELECT 1 FROM jobq_schedule_state WHERE name = %q AND ini_enabled = 0)"
	    " FROM (SELECT COALESCE((SELECT checked_until FROM jobq_schedule_state WHERE name = %q),"
	    "  '1970-01-02') c) t",
	    name, name, name, name);
	if (r == NULL)
		return rc;
	if ((row = db_res_next(r)) != NULL && row[0] != NULL) {
		ck->until = strtoll(row[0], NULL, 10);
		ck->found = ck->until > 2 * 86400;
		ck->ticked = strtoll(row[1], NULL, 10);
		ck->has_state = row[2] != NULL && strcmp(row[2], "1") == 0;
		ck->ini_off = row[3] != NULL && strcmp(row[3], "1") == 0;
	}
	db_res_free(r);
	return DB_OK;
}

/* The names the database keeps a switch or fires of that are no
 * schedule of v (neither a section of the file nor a row of
 * jobq_schedules): an INI section renamed or taken out of the file
 * leaves them behind (a tick that had loaded a removed database
 * schedule may too).  Sorted; *out is NULL-terminated (strv_free), NULL
 * when there are none. */
int
schedules_orphans(struct db *db, struct schedule *const *v, size_t n, char ***out, size_t *nout, char *err)
{
	struct db_res *r;
	char **row;
	int rc;

	*out = NULL;
	*nout = 0;
	r = db_query(db, &rc, err,
	    "SELECT name FROM jobq_schedule_state UNION SELECT DISTINCT name FROM jobq_schedule_runs"
	    " ORDER BY name");
	if (r == NULL)
		return rc;
	while ((row = db_res_next(r)) != NULL) {
		if (schedules_find(v, n, row[0]) != NULL)
			continue;
		*out = xrealloc(*out, (*nout + 2) * sizeof **out);
		(*out)[(*nout)++] = xstrdup(row[0]);
		(*out)[*nout] = NULL;
	}
	db_res_free(r);
	return DB_OK;
}

/* Keeps the names of orphans (schedules_orphans) looked at up to until
 * ("YYYY-MM-DD HH:MM:SS" UTC, never moved back), as a tick keeps a
 * disabled schedule: a section that comes back to the file (renamed
 * back, put back) starts from there, not from where its ticks left off,
 * since the fires of the time it was not in the file were not missed
 * through downtime (catch_up is for those).  The tick passes its now
 * less a minute, so that a host still ticking the old file, whose tick
 * comes later in the same minute, still fires that minute's fire. */
int
schedules_orphans_checked(struct db *db, char *const *names, size_t n, const char *until, char *err)
{
	struct buf sql;
	size_t i;
	int rc;

	if (n == 0)
		return DB_OK;
	buf_init(&sql);
	db_sql(db, &sql,
	    "UPDATE jobq_schedule_state SET checked_until = GREATEST(COALESCE(checked_until, %q), %q)"
	    " WHERE name IN (",
	    until, until);
	for (i = 0; i < n; i++)
		db_sql(db, &sql, "%s%q", i > 0 ? ", " : "", names[i]);
	buf_adds(&sql, ")");
	rc = db_exec_retry(db, &sql, NULL, 0, err);
	buf_free(&sql);
	return rc;
}

/* The test hook JOBQ_SCHEDULER_NOW (see schedules_now): 1 with *now
 * its time when it is set, 0 when it is not, -1 with err naming the
 * variable and its value (cron_parse_time quotes it) when that is no
 * time. */
static int
hook_now(int64_t *now, char *err)
{
	const char *fixed = getenv("JOBQ_SCHEDULER_NOW");
	struct cron_zone *utc;
	char e2[ERRSZ];
	int rc;

	if (fixed == NULL || *fixed == '\0')
		return 0;
	utc = cron_zone_open("UTC", e2);
	rc = utc != NULL ? cron_parse_time(utc, fixed, now, e2) : -1;
	cron_zone_free(utc);
	if (rc < 0) { /* named: it is not in the configuration */
		errf(err, "JOBQ_SCHEDULER_NOW (a test hook in the environment): %s", e2);
		return -1;
	}
	return 1;
}

/* Refuses a JOBQ_SCHEDULER_NOW that is no time before a command does
 * anything (cli_conf), so that it is one line and a configuration
 * error, not a failure in the middle of a tick.  0, or -1 with err. */
int
schedules_clock_check(char *err)
{
	int64_t now;

	return hook_now(&now, err) < 0 ? -1 : 0;
}

/* The clock every schedule is judged by: the database's, in seconds
 * since the epoch (never the host's: hosts drift, and every host must
 * agree on what is due).
 *
 * Test hook: JOBQ_SCHEDULER_NOW=ISO-8601 replaces the database's clock
 * for deciding what is due (only that: leases, available_at and every
 * other time stay the database's).  It lets the tests play hours of
 * schedule in seconds. */
int
schedules_now(struct db *db, int64_t *now, char *err)
{
	struct db_res *r;
	char **row;
	int rc;

	if ((rc = hook_now(now, err)) != 0)
		return rc < 0 ? DB_EFAIL : DB_OK;
	if ((r = db_query(db, &rc, err, "SELECT UNIX_TIMESTAMP()")) == NULL)
		return rc;
	if ((row = db_res_next(r)) != NULL && row[0] != NULL)
		*now = strtoll(row[0], NULL, 10);
	db_res_free(r);
	return DB_OK;
}

/* When a tick or a watchdog first looked at name's fires ("YYYY-MM-DD HH:MM:SS"
 * UTC, on the schedules' clock), recorded as now_utc the first time it
 * asks: fires before it are not the watchdog's business (a schedule
 * added today did not miss yesterday's fire).  Two watchdogs asking at
 * once keep the first answer (COALESCE). */
int
schedules_watched_since(struct db *db, const char *name, const char *now_utc, int64_t *since, char *err)
{
	struct db_res *r;
	char **row;
	int rc, found = 0;

	r = db_query(db, &rc, err,
	    "SELECT UNIX_TIMESTAMP(watched_since) FROM jobq_schedule_state WHERE name = %q"
	    " AND watched_since IS NOT NULL",
	    name);
	if (r == NULL)
		return rc;
	if ((row = db_res_next(r)) != NULL && row[0] != NULL) {
		*since = strtoll(row[0], NULL, 10);
		found = 1;
	}
	db_res_free(r);
	if (found)
		return DB_OK;
	rc = db_exec(db, err,
	    "INSERT INTO jobq_schedule_state (name, watched_since) VALUES (%q, %q)"
	    " ON DUPLICATE KEY UPDATE watched_since = COALESCE(watched_since, VALUES(watched_since))",
	    name, now_utc);
	if (rc != DB_OK)
		return rc;
	return schedules_watched_since(db, name, now_utc, since, err);
}

/* The fires of one schedule prune may delete: enqueued before cutoff,
 * and none of the rows the ticks, the watchdog and --list read as the
 * schedule's last (its newest fire, its newest timed fire, the newest
 * that enqueued a job: keep[0..2], NULL when it has none). */
static void
prune_where(struct db *db, struct buf *where, const char *name, const char *cutoff, char *const keep[3])
{
	int i;

	db_sql(db, where, "name = %q AND enqueued_at < %q", name, cutoff);
	for (i = 0; i < 3; i++)
		if (keep[i] != NULL)
			db_sql(db, where, " AND fire_at <> %q", keep[i]);
}

/* Deletes (count_only: counts) the fire rows of jobq_schedule_runs
 * enqueued more than older_ms ago, but each schedule's last ones
 * (prune_where): they are what a tick weighs overlap and catch-up by,
 * and what --list and the watchdog call its last fire.  The cutoff is
 * fixed before those rows are read, so a fire a tick adds meanwhile is
 * newer than it and stays.  Each schedule's rows go in chunks by the
 * (name, enqueued_at) index. */
int
schedules_prune(struct db *db, int64_t older_ms, int count_only, uint64_t *removed, char *err)
{
	struct db_res *r;
	struct buf where;
	char **row, *cutoff = NULL;
	uint64_t n;
	int rc;

	*removed = 0;
	if ((r = db_query(db, &rc, err, "SELECT UTC_TIMESTAMP(6) - INTERVAL %I MICROSECOND", older_ms * 1000)) == NULL)
		return rc;
	if ((row = db_res_next(r)) != NULL && row[0] != NULL)
		cutoff = xstrdup(row[0]);
	db_res_free(r);
	if (cutoff == NULL) {
		errf(err, "the database gave no time");
		return DB_EFAIL;
	}
	r = db_query(db, &rc, err,
	    "SELECT name, MAX(fire_at), MAX(IF(manual = 0, fire_at, NULL)),"
	    " (SELECT l.fire_at FROM jobq_schedule_runs l WHERE l.name = r.name AND l.job_id IS NOT NULL"
	    "  ORDER BY l.enqueued_at DESC LIMIT 1)"
	    " FROM jobq_schedule_runs r GROUP BY name");
	buf_init(&where);
	while (r != NULL && rc == DB_OK && (row = db_res_next(r)) != NULL) {
		buf_reset(&where);
		prune_where(db, &where, row[0], cutoff, row + 1);
		rc = delete_in_chunks(db, "jobq_schedule_runs", where.data, count_only, &n, err);
		*removed += n;
	}
	db_res_free(r);
	buf_free(&where);
	free(cutoff);
	return rc;
}
