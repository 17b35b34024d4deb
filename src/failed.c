/* failed.c -- read, retry and forget dead-lettered jobs.
 *
 * A retry moves the row back to jobs in one transaction: the row is
 * locked, copied (keeping its id, attempts reset, due now) and deleted,
 * so a job is never in both tables or in neither, even when two operators
 * retry it at once (the second finds nothing: QUEUE_NOT_FOUND).  A retry
 * with an edited payload is the same move, carrying the new payload and
 * its audit row in the same transaction. */
#include "config.h"

#include <mysqld_error.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "audit.h"
#include "errtext.h"
#include "failed.h"
#include "json.h"
#include "log.h"
#include "park.h"
#include "queue.h"
#include "runs.h"

#define RETRY_PAGE 1000

/* Adds to where that a retry can serve the job again: its type has a
 * [handler] section in c and its queue a [queue] section; or (unknown)
 * that it cannot: a retry would only dead-letter it again, or leave it
 * in a queue no worker may serve.  Each list starts with NULL, which
 * matches nothing, so that an empty one is still a list; IN is NULL
 * rather than false for a name not in it, hence COALESCE. */
void
failed_servable_sql(struct db *db, struct buf *where, const struct conf *c, int unknown)
{
	size_t i;

	buf_adds(where, " AND COALESCE(type IN (NULL");
	for (i = 0; i < c->nhandlers; i++)
		db_sql(db, where, ", %q", c->handlers[i]->type);
	buf_adds(where, ") AND queue IN (NULL");
	for (i = 0; c->queues[i] != NULL; i++)
		db_sql(db, where, ", %q", c->queues[i]);
	buf_adds(where, unknown ? "), 0) = 0" : "), 0) = 1");
}

static void
filter_sql(struct db *db, struct buf *where, const struct failed_filter *f)
{
	buf_adds(where, "1 = 1");
	if (f->queue != NULL)
		db_sql(db, where, " AND queue = %q", db_ascii(f->queue));
	if (f->type != NULL)
		db_sql(db, where, " AND type = %q", db_ascii(f->type));
	if (f->handlers != NULL)
		failed_servable_sql(db, where, f->handlers, f->unknown_types);
}

/* A dead job's failed_at as text, UTC to the microsecond: a page's
 * anchor (anchor_sql). */
#define FAILED_AT_UTC "DATE_FORMAT(failed_at, '%%Y-%%m-%%d %%H:%%i:%%s.%%f')"

/* Adds to where the keyset condition "older than failed job id" (or
 * newer, older = 0) in the list's order (failed_at, then id), which the
 * failed_at indexes serve.  at: the job's failed_at when the caller
 * knows it (a page's anchor, which may have been retried or forgotten
 * since), else read from its row: QUEUE_NOT_FOUND when there is none. */
static int
anchor_sql(struct db *db, struct buf *where, uint64_t id, const char *at, int older, char *err)
{
	const char *op = older ? "<" : ">";
	struct db_res *r;
	char **row;
	int rc;

	if (at != NULL) {
		db_sql(db, where, " AND (failed_at %s %q OR (failed_at = %q AND id %s %U))", op, at, at, op, id);
		return DB_OK;
	}
	r = db_query(db, &rc, err,
	    "SELECT " FAILED_AT_UTC " FROM failed_jobs WHERE id = %U",
	    id);
	if (r == NULL)
		return rc;
	if ((row = db_res_next(r)) == NULL || row[0] == NULL) {
		db_res_free(r);
		snprintf(err, ERRSZ, "no failed job %llu", (unsigned long long)id);
		return QUEUE_NOT_FOUND;
	}
	rc = anchor_sql(db, where, id, row[0], older, err);
	db_res_free(r);
	return rc;
}

/* Swaps rows into the opposite order (a --before page is read oldest
 * first, to take the rows next to its anchor). */
static void
reverse_rows(struct failed_row *rows, size_t n)
{
	size_t i;

	for (i = 0; i < n / 2; i++) {
		struct failed_row t = rows[i];

		rows[i] = rows[n - 1 - i];
		rows[n - 1 - i] = t;
	}
}

/* Dead-lettered jobs, newest first: one page of f->limit rows (all when
 * 0), after or before an anchor job when f says so.  Of each error only
 * its summary is kept (the reason when it has none: errtext_summary_or),
 * read from at most 4 KiB of it (ERRTEXT_SQL): a list of 50,000 jobs
 * with 32 KiB errors must not hold them all. */
int
failed_list(struct db *db, const struct failed_filter *f, const char *tz, struct failed_row **rows, size_t *n,
    char *err)
{
	struct buf where;
	struct db_res *r;
	char **row;
	int rc = DB_OK, newer = f->before != 0 && f->after == 0;

	*rows = NULL;
	*n = 0;
	buf_init(&where);
	filter_sql(db, &where, f);
	if (f->after != 0)
		rc = anchor_sql(db, &where, f->after, f->after_at, 1, err);
	if (rc == DB_OK && f->before != 0)
		rc = anchor_sql(db, &where, f->before, NULL, 0, err);
	if (rc != DB_OK) {
		buf_free(&where);
		return rc;
	}
	buf_adds(&where, newer ? " ORDER BY failed_at, id" : " ORDER BY failed_at DESC, id DESC");
	if (f->limit > 0)
		buf_printf(&where, " LIMIT %u", f->limit);
	r = db_query(db, &rc, err,
	    "SELECT id, queue, type, CONVERT_TZ(failed_at, '+00:00', %q), exit_status, reason,"
	    " COALESCE(%s, ''), attempts, " FAILED_AT_UTC
	    " FROM failed_jobs WHERE %s",
	    tz, ERRTEXT_SQL("exception"), where.data);
	buf_free(&where);
	if (r == NULL)
		return rc;
	*rows = xcalloc(db_res_rows(r) + 1, sizeof **rows);
	while ((row = db_res_next(r)) != NULL) {
		struct failed_row *x = &(*rows)[(*n)++];

		x->id = db_col_u64(row[0], 0);
		x->queue = xstrdup_or_empty(row[1]);
		x->type = xstrdup_or_empty(row[2]);
		x->failed_at = xstrdup_or_empty(row[3]);
		x->exit_status = xstrdup_or_empty(row[4]);
		x->reason = xstrdup_or_empty(row[5]);
		x->summary = errtext_summary_or(row[6], row[5]);
		x->attempts = (unsigned)db_col_u64(row[7], 0);
		x->at = xstrdup_or_empty(row[8]);
	}
	db_res_free(r);
	if (newer)
		reverse_rows(*rows, *n);
	return DB_OK;
}

/* How many jobs matching f (its queue and type) are older than failed
 * job id (newer, older = 0): what a page's footer says is left. */
int
failed_count_beyond(
    struct db *db, const struct failed_filter *f, uint64_t id, int older, uint64_t *n, char *err)
{
	struct buf where;
	int rc;

	buf_init(&where);
	filter_sql(db, &where, f);
	if ((rc = anchor_sql(db, &where, id, NULL, older, err)) == DB_OK)
		rc = count_rows(db, "failed_jobs", where.data, n, err);
	buf_free(&where);
	return rc;
}

void
failed_rows_free(struct failed_row *rows, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(rows[i].queue);
		free(rows[i].type);
		free(rows[i].at);
		free(rows[i].failed_at);
		free(rows[i].exit_status);
		free(rows[i].reason);
		free(rows[i].summary);
	}
	free(rows);
}

/* Whether failed_jobs holds job id; type (unless NULL) gets its type,
 * a string to free (NULL when there is no such job). */
int
failed_exists(struct db *db, uint64_t id, int *exists, char **type, char **queue, char *err)
{
	struct db_res *r;
	char **row;
	int rc;

	r = db_query(db, &rc, err, "SELECT type, queue FROM failed_jobs WHERE id = %U", id);
	if (r == NULL)
		return rc;
	row = db_res_next(r);
	*exists = row != NULL;
	if (type != NULL)
		*type = row != NULL ? xstrdup_or_empty(row[0]) : NULL;
	if (queue != NULL)
		*queue = row != NULL ? xstrdup_or_empty(row[1]) : NULL;
	db_res_free(r);
	return DB_OK;
}

/* The most of each payload an edit's audit detail keeps, in characters:
 * both fit the 1024 of the detail column with their sizes before them.
 * A longer one keeps its start and "..." (its size says how much). */
#define EDIT_SHOWN 460

/* s, or its first EDIT_SHOWN - 3 characters and "...", cut on a
 * character boundary (payloads are UTF-8: json_payload_check). */
static char *
shown(const char *s)
{
	size_t i, chars = 0, cut = 0;

	for (i = 0; s[i] != '\0'; i++)
		if (((unsigned char)s[i] & 0xC0) != 0x80 && ++chars == EDIT_SHOWN - 2)
			cut = i;
	if (chars <= EDIT_SHOWN)
		return xstrdup(s);
	return xasprintf("%.*s...", (int)cut, s);
}

/* Adds the audit row of an edited retry to the transaction: who, and
 * the old and the new payload, each with its size in bytes first. */
static int
audit_edit(struct db *db, uint64_t id, const struct failed_edit *e, const char *old, char *err)
{
	char *o = shown(old), *n = shown(e->payload);
	char *detail =
	    xasprintf("payload %zu -> %zu bytes; old: %s; new: %s", strlen(old), strlen(e->payload), o, n);
	struct audit_entry a = { e->user, e->address, "retry-edited", 0, detail };
	int rc = audit_add_entry(db, &a, id, err);

	free(o);
	free(n);
	free(detail);
	return rc;
}

/* Whether dead job id could go back to the queue as it stands: DB_OK
 * when nothing there holds its id or its unique key; FAILED_HELD, err
 * naming the job in the way (and the key), when something does; else
 * QUEUE_NOT_FOUND or a db_rc.  The one wording of that refusal: a retry
 * the unique index refused says it, and --dry-run predicts it. */
int
failed_retry_check(struct db *db, uint64_t id, char *err)
{
	struct db_res *r;
	char **row;
	int rc;

	r = db_query(db, &rc, err,
	    "SELECT f.id, j.id, j.id = f.id, f.unique_key FROM failed_jobs f"
	    " LEFT JOIN jobs j ON j.id = f.id OR j.unique_key = f.unique_key"
	    " WHERE f.id = %U ORDER BY j.id = f.id DESC LIMIT 1",
	    id);
	if (r == NULL)
		return rc;
	if ((row = db_res_next(r)) == NULL)
		rc = QUEUE_NOT_FOUND;
	else if (row[1] == NULL)
		rc = DB_OK;
	else {
		if (strcmp(row[2], "1") == 0)
			errf(err,
			    "the queue already holds a job with id %llu (jobs.id); it stays dead-lettered",
			    (unsigned long long)id);
		else
			errf(err,
			    "its unique key is held by another job in the queue (job %s, key '%s'); it stays "
			    "dead-lettered",
			    row[1], row[3]);
		rc = FAILED_HELD;
	}
	db_res_free(r);
	return rc;
}

/* Inside a transaction: locks the dead row, copies it to jobs (keeping
 * its id, attempts reset, due now, its trace context and checkpoint, so
 * that the retry continues the trace and resumes; with e, carrying
 * e->payload and writing the audit row of the edit; with a, writing the
 * audit row a) and deletes it.  QUEUE_NOT_FOUND
 * when the row is gone: of a retry and a forget (or two retries) of one
 * job, the second to get the lock finds nothing and changes nothing. */
static int
retry_once(struct db *db, uint64_t id, const struct failed_edit *e, const struct audit_entry *a, char *err)
{
	struct db_res *r;
	struct buf payload;
	char **row, *old = NULL;
	uint64_t reopened;
	int rc, found;

	r = db_query(db, &rc, err, "SELECT %s FROM failed_jobs WHERE id = %U FOR UPDATE",
	    e != NULL ? "payload" : "id", id);
	if (r == NULL)
		return rc;
	if ((row = db_res_next(r)) != NULL && e != NULL)
		old = xstrdup_or_empty(row[0]);
	found = row != NULL;
	db_res_free(r);
	if (!found)
		return QUEUE_NOT_FOUND;
	/* The job takes its unique key back (a retry must not let a second
	 * job with the key be queued); when another job holds the key now,
	 * the unique index refuses the move and the job stays dead. */
	buf_init(&payload);
	if (e != NULL)
		db_sql(db, &payload, "%q", e->payload);
	else
		buf_adds(&payload, "payload");
	rc = db_exec(db, err,
	    "INSERT INTO jobs (id, queue, type, payload, priority, attempts, max_attempts, available_at, "
	    "created_at, unique_key, traceparent, checkpoint)"
	    " SELECT id, queue, type, %s, priority, 0, max_attempts, UTC_TIMESTAMP(6), created_at,"
	    " unique_key, traceparent, checkpoint FROM failed_jobs WHERE id = %U",
	    payload.data, id);
	buf_free(&payload);
	if (rc == DB_EFAIL && db_errno(db) == ER_DUP_ENTRY) {
		/* failed_retry_check names the job in the way; should it
		 * find none (that job left meanwhile), the refusal stands. */
		if (failed_retry_check(db, id, err) != FAILED_HELD)
			errf(err,
			    "its id or unique key is held by another job in the queue; it stays "
			    "dead-lettered");
		rc = FAILED_HELD;
	}
	if (rc == DB_OK)
		rc = db_exec(db, err, "DELETE FROM failed_jobs WHERE id = %U", id);
	/* The jobs of policy any that still wait for others took its death
	 * off their counts: it is owed them no more. */
	if (rc == DB_OK)
		rc = park_drop_counted(db, id, err);
	if (rc == DB_OK && e != NULL)
		rc = audit_edit(db, id, e, old, err);
	if (rc == DB_OK && a != NULL)
		rc = audit_add_entry(db, a, id, err);
	/* The jobs its death cancelled wait for it again (park.c). */
	if (rc == DB_OK)
		rc = park_reopen(db, id, &reopened, err);
	free(old);
	return rc;
}

/* How long a retry waits for a worker that holds a job to re-open
 * (PARK_EBUSY): it finalizes a claim's jobs in moments, unless it died
 * holding them (then their lease must end first; the error says when). */
#define BUSY_WAIT_MS 5000

/* Whether to rerun a retry that found a job to re-open held (rc
 * PARK_EBUSY), after a pause, until *until (set on the first call). */
static int
busy_again(int rc, int64_t *until)
{
	struct timespec ts = { 0, 50 * 1000000L };

	if (rc != PARK_EBUSY)
		return 0;
	if (*until == 0)
		*until = mono_ms() + BUSY_WAIT_MS;
	if (mono_ms() >= *until)
		return 0;
	nanosleep(&ts, NULL);
	return 1;
}

/* retry_once in a transaction of its own, rerun after a deadlock or a
 * lock wait timeout, or while a job to re-open is held (busy_again). */
static int
move_back(struct db *db, uint64_t id, const struct failed_edit *e, const struct audit_entry *a, char *err)
{
	int64_t until = 0;
	int rc, attempt = 0;

	do {
		if ((rc = db_begin(db, err)) != DB_OK)
			return rc;
		rc = retry_once(db, id, e, a, err);
		if (rc == DB_OK || rc == QUEUE_NOT_FOUND) {
			int crc = rc == DB_OK ? db_commit(db, err) : (db_rollback(db), DB_OK);

			if (crc == DB_OK)
				return rc;
			rc = crc;
		} else
			db_rollback(db);
	} while (busy_again(rc, &until) || db_retry_after(rc, ++attempt)); /* a wait is no attempt */
	return rc == PARK_EBUSY ? FAILED_HELD : rc;
}

/* One retry (with e: edited; forget: 1, a forget) of job id, audited
 * with a when not NULL. */
static int
act_once(struct db *db, int forget, uint64_t id, const struct failed_edit *e, const struct audit_entry *a,
    char *err)
{
	return forget ? failed_forget_audited(db, id, a, err) : move_back(db, id, e, a, err);
}

static int act_reconnecting(struct db *db, int forget, uint64_t id, const struct failed_edit *e,
    const struct audit_entry *a, char *err);

/* Moves one job back to its queue, due now, attempts reset, with the
 * audit row a (NULL: none) of the retry in its transaction: the move and
 * its row are committed together or not at all.  Returns DB_OK,
 * QUEUE_NOT_FOUND or a db_rc (DB_EFAIL, err saying why, when its id or
 * unique key is in the queue again, or a job its death cancelled is
 * held by a worker). */
int
failed_retry_audited(struct db *db, uint64_t id, const struct audit_entry *a, char *err)
{
	int rc = move_back(db, id, NULL, a, err);

	return rc == FAILED_HELD ? DB_EFAIL : rc;
}

/* Moves one job back to its queue as failed_retry_audited does, carrying
 * e->payload in place of its own (e->payload_len bytes, a NUL among them
 * refused), with an audit row (action
 * "retry-edited") holding the old and the new payload, all in one
 * transaction.  The payload is checked first (json_payload_check against
 * e->max_payload): FAILED_BAD_PAYLOAD, err saying what is wrong, and
 * nothing changed.  Else DB_OK; QUEUE_NOT_FOUND when the job is not (any
 * more) dead-lettered; FAILED_HELD when its id or unique key is in the
 * queue again, or a job its death cancelled is held by a worker (it
 * stays dead); or a db_rc. */
int
failed_retry_edited(struct db *db, uint64_t id, const struct failed_edit *e, char *err)
{
	if (json_payload_check(e->payload, e->payload_len, e->max_payload, 0, err) < 0)
		return FAILED_BAD_PAYLOAD;
	return act_reconnecting(db, 0, id, e, NULL, err);
}

/* How many dead-lettered jobs match f (what retry --all would try). */
int
failed_count(struct db *db, const struct failed_filter *f, uint64_t *n, char *err)
{
	struct buf where;
	int rc;

	buf_init(&where);
	filter_sql(db, &where, f);
	rc = count_rows(db, "failed_jobs", where.data, n, err);
	buf_free(&where);
	return rc;
}

/* The next page of matching ids after last; one reconnect when the
 * connection was lost. */
static struct db_res *
next_ids(struct db *db, const char *where, uint64_t last, int *rc, char *err)
{
	struct db_res *r;
	int attempt;

	for (attempt = 0; attempt < 2; attempt++) {
		r = db_query(db, rc, err,
		    "SELECT id FROM failed_jobs WHERE %s AND id > %U ORDER BY id LIMIT %d", where, last,
		    RETRY_PAGE);
		if (r != NULL || *rc != DB_EGONE || attempt > 0 || db_connect(db, 1, err) != DB_OK)
			return r;
	}
	return NULL;
}

/* The failed_at of id's dead-letter row into at[32]: what tells this
 * death of the job from a later one (a retry that died again is a new
 * row under the same id).  DB_OK, QUEUE_NOT_FOUND or a db_rc. */
static int
dead_row_at(struct db *db, uint64_t id, char *at, char *err)
{
	struct db_res *r;
	char **row;
	int rc;

	r = db_query(db, &rc, err, "SELECT " FAILED_AT_UTC " FROM failed_jobs WHERE id = %U", id);
	if (r == NULL)
		return rc;
	if ((row = db_res_next(r)) == NULL || row[0] == NULL)
		rc = QUEUE_NOT_FOUND;
	else
		snprintf(at, 32, "%s", row[0]);
	db_res_free(r);
	return rc;
}

/* Whether job id went back to the queue after its death at at: it is
 * in jobs, or it has a run that started since.  DB_OK (yes),
 * QUEUE_NOT_FOUND (no) or a db_rc. */
static int
queued_since(struct db *db, uint64_t id, const char *at, char *err)
{
	struct db_res *r;
	char **row;
	int rc;

	r = db_query(db, &rc, err,
	    "SELECT EXISTS (SELECT 1 FROM jobs WHERE id = %U)"
	    " OR EXISTS (SELECT 1 FROM job_runs WHERE job_id = %U AND started_at >= %q)",
	    id, id, at);
	if (r == NULL)
		return rc;
	row = db_res_next(r);
	rc = row != NULL && row[0] != NULL && strcmp(row[0], "1") == 0 ? DB_OK : QUEUE_NOT_FOUND;
	db_res_free(r);
	return rc;
}

/* A retry (forget: 0) of the death of job id at at whose answer was
 * lost: whether it took, read once the session that sent it has ended.
 * The row still there with that time: it did not, and it is done now.
 * There with a later time: the retry took (the job died again since).
 * Gone: a retry took when the job went back to the queue since, a
 * forget when it did not (another person's forget of the same death
 * comes to the same).  DB_OK, QUEUE_NOT_FOUND or a db_rc. */
static int
settle_lost(struct db *db, int forget, uint64_t id, const char *at, const struct failed_edit *e,
    const struct audit_entry *a, char *err)
{
	char now[32], ignored[ERRSZ];
	int rc, back, same = 0;

	if ((rc = db_lost_settle(db, 3000, err)) != DB_OK || (rc = db_causal(db, 1, err)) != DB_OK)
		return rc;
	rc = dead_row_at(db, id, now, err);
	if (rc == DB_OK) /* the same death: not taken; a later one: the retry took */
		rc = (same = strcmp(now, at) == 0) || !forget ? DB_OK : QUEUE_NOT_FOUND;
	else if (rc == QUEUE_NOT_FOUND && (rc = queued_since(db, id, at, err)) == DB_OK)
		rc = forget ? QUEUE_NOT_FOUND : DB_OK;
	else if (rc == QUEUE_NOT_FOUND)
		rc = forget ? DB_OK : QUEUE_NOT_FOUND;
	back = db_causal(db, 0, rc == DB_OK || rc == QUEUE_NOT_FOUND ? err : ignored);
	if (rc != DB_OK && rc != QUEUE_NOT_FOUND)
		return rc;
	if (back != DB_OK)
		return back;
	return same ? act_once(db, forget, id, e, a, err) : rc;
}

/* One retry (forget: 0) of job id, and, when the connection was lost,
 * one more after a reconnect: each is one transaction, and a lost
 * answer to its COMMIT is settled (settle_lost) against the dead row
 * the first try was for, so that a job retried, run and dead again
 * meanwhile is not retried twice, and one another person forgot is not
 * called retried. */
static int
act_reconnecting(struct db *db, int forget, uint64_t id, const struct failed_edit *e,
    const struct audit_entry *a, char *err)
{
	char at[32];
	int rc;

	if ((rc = dead_row_at(db, id, at, err)) == DB_EGONE && db_connect(db, 1, err) == DB_OK)
		rc = dead_row_at(db, id, at, err);
	if (rc != DB_OK)
		return rc;
	if ((rc = act_once(db, forget, id, e, a, err)) != DB_EGONE)
		return rc;
	if (!db_unsure(db)) /* nothing that commits was sent: try again */
		return db_connect(db, 1, err) == DB_OK ? act_once(db, forget, id, e, a, err) : DB_EGONE;
	return db_connect(db, 1, err) == DB_OK ? settle_lost(db, forget, id, at, e, a, err) : DB_EGONE;
}

/* act (failed_retry_audited, failed_forget_audited or
 * failed_retry_check_act), audited with a when not NULL, once more
 * after a reconnect when the connection was lost; a lost answer is
 * settled against the dead row the first try was for (act_reconnecting). */
int
failed_act_reconnecting(struct db *db, failed_act_fn *act, uint64_t id, const struct audit_entry *a, char *err)
{
	int rc;

	if (act == failed_retry_audited)
		return (rc = act_reconnecting(db, 0, id, NULL, a, err)) == FAILED_HELD ? DB_EFAIL : rc;
	if (act == failed_forget_audited)
		return act_reconnecting(db, 1, id, NULL, a, err);
	rc = act(db, id, a, err); /* changes nothing: it may be asked again */
	if (rc == DB_EGONE && db_connect(db, 1, err) == DB_OK)
		rc = act(db, id, a, err);
	return rc;
}

static int each_matching(struct db *db, const struct failed_filter *f, failed_act_fn *act,
    failed_each_fn *each, void *arg, char *err);

/* Retries every dead-lettered job matching f, one transaction each, in
 * id order.  A job the server refuses to move (its id already in jobs, a
 * lock it cannot get) is passed to each() with its error and skipped:
 * one bad job never stops the others.  each() also hears of every job
 * moved (DB_OK) and every job that left meanwhile (QUEUE_NOT_FOUND).
 * Returns DB_OK when every matching job was tried, DB_EGONE when the
 * database could not be reached even after reconnecting, or
 * AUDIT_STOPPED when f->still refused before a job (err says why). */
int
failed_retry_matching(
    struct db *db, const struct failed_filter *f, failed_each_fn *each, void *arg, char *err)
{
	return each_matching(db, f, failed_retry_audited, each, arg, err);
}

/* failed_retry_check as a failed_act_fn: it changes nothing, so it has
 * nothing to audit. */
int
failed_retry_check_act(struct db *db, uint64_t id, const struct audit_entry *a, char *err)
{
	(void)a;
	return failed_retry_check(db, id, err);
}

/* What failed_retry_matching would do, changing nothing: each() hears
 * of every matching job with failed_retry_check's answer. */
int
failed_retry_check_matching(
    struct db *db, const struct failed_filter *f, failed_each_fn *each, void *arg, char *err)
{
	return each_matching(db, f, failed_retry_check_act, each, arg, err);
}

/* Forgets every dead-lettered job matching f, one statement each, in id
 * order, telling each() as failed_retry_matching does. */
int
failed_forget_matching(
    struct db *db, const struct failed_filter *f, failed_each_fn *each, void *arg, char *err)
{
	return each_matching(db, f, failed_forget_audited, each, arg, err);
}

/* Applies act to every job matching f, a page of ids at a time. */
static int
each_matching(struct db *db, const struct failed_filter *f, failed_act_fn *act, failed_each_fn *each,
    void *arg, char *err)
{
	struct buf where;
	uint64_t last = 0;
	int rc = DB_OK;

	buf_init(&where);
	filter_sql(db, &where, f);
	for (;;) {
		struct db_res *r = next_ids(db, where.data, last, &rc, err);
		char **row;
		size_t got = 0;

		if (r == NULL)
			break;
		while ((row = db_res_next(r)) != NULL) {
			last = db_col_u64(row[0], last);
			got++;
			if ((rc = audit_still_ok(f->still, err)) != DB_OK ||
			    (rc = failed_act_reconnecting(db, act, last, f->audit, err)) == DB_EGONE)
				break;
			each(arg, last, rc, err);
		}
		db_res_free(r);
		if (rc == DB_EGONE || rc == AUDIT_STOPPED || got < RETRY_PAGE)
			break;
	}
	buf_free(&where);
	return rc == DB_EGONE || rc == AUDIT_STOPPED ? rc : DB_OK;
}

/* One try of failed_forget_audited's transaction. */
static int
forget_tx(struct db *db, uint64_t id, const struct audit_entry *a, char *err)
{
	int rc;

	if ((rc = db_begin(db, err)) != DB_OK)
		return rc;
	rc = db_exec(db, err, "DELETE FROM failed_jobs WHERE id = %U", id);
	if (rc == DB_OK && db_affected(db) == 0) {
		db_rollback(db);
		return QUEUE_NOT_FOUND;
	}
	/* What its death cancelled stays cancelled for good (park.c). */
	if (rc == DB_OK)
		rc = park_drop(db, id, err);
	if (rc == DB_OK && a != NULL)
		rc = audit_add_entry(db, a, id, err);
	if (rc == DB_OK)
		rc = db_commit(db, err);
	if (rc != DB_OK)
		db_rollback(db);
	return rc;
}

/* Deletes one dead-lettered job for good, with what its death parked,
 * and the audit row a (NULL: none) of the forget in its transaction. */
int
failed_forget_audited(struct db *db, uint64_t id, const struct audit_entry *a, char *err)
{
	int rc, attempt = 0;

	do
		rc = forget_tx(db, id, a, err);
	while (db_retry_after(rc, ++attempt));
	return rc;
}

static int clear(struct db *db, int64_t older_than_ms, int count_only, const struct audit_entry *a,
    const struct audit_still *still, uint64_t *removed, char *err);

/* Deletes dead-lettered jobs that failed more than older_than_ms ago
 * (all of them when older_than_ms < 0), in chunks; with count_only,
 * counts them. */
int
failed_clear(struct db *db, int64_t older_than_ms, int count_only, uint64_t *removed, char *err)
{
	return clear(db, older_than_ms, count_only, NULL, NULL, removed, err);
}

/* failed_clear of every dead-lettered job, each chunk's transaction with
 * an audit row of a counting the jobs it deleted (delete_in_chunks_audited;
 * a->detail follows the count: " jobs"), still asked before each chunk
 * (AUDIT_STOPPED when it refused; *removed counts the chunks before). */
int
failed_clear_audited(struct db *db, const struct audit_entry *a, const struct audit_still *still,
    uint64_t *removed, char *err)
{
	return clear(db, -1, 0, a, still, removed, err);
}

/* failed_clear, audited by a when a is not NULL (and asking still). */
static int
clear(struct db *db, int64_t older_than_ms, int count_only, const struct audit_entry *a,
    const struct audit_still *still, uint64_t *removed, char *err)
{
	struct buf where;
	int rc;

	buf_init(&where);
	if (older_than_ms >= 0)
		db_sql(db, &where, "failed_at < UTC_TIMESTAMP(6) - INTERVAL %I MICROSECOND",
		    older_than_ms * 1000);
	else
		buf_adds(&where, "1 = 1");
	if (a != NULL)
		rc = delete_in_chunks_audited(db, "failed_jobs", where.data, a, still, removed, err);
	else
		rc = delete_in_chunks(db, "failed_jobs", where.data, count_only, removed, err);
	buf_free(&where);
	/* What their deaths parked no retry can reach any more: dropped
	 * after a clear that stopped too, for the jobs it did remove. */
	if ((rc == DB_OK || rc == AUDIT_STOPPED) && !count_only && *removed > 0) {
		uint64_t dropped;
		char cerr[ERRSZ];
		int crc = park_collect(db, &dropped, rc == DB_OK ? err : cerr);

		if (rc == DB_OK)
			rc = crc;
		else if (crc != DB_OK)
			log_warn("clear failed jobs: drop what their deaths parked: %s", cerr);
	}
	return rc;
}
