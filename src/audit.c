/* audit.c -- every administrator action is one row of jobq_audit. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"

/* The detail column holds 1024 characters: a longer detail keeps its
 * first 1021 and "...", cut on a character boundary.  Whatever can be
 * counted has its own column (job_count) or goes before text a person
 * typed, so the cut never hides what was done. */
#define DETAIL_CHARS 1024

static char *
detail_cut(const char *detail)
{
	size_t i, chars = 0, cut = 0;

	for (i = 0; detail[i] != '\0'; i++)
		if (((unsigned char)detail[i] & 0xC0) != 0x80 && ++chars == DETAIL_CHARS - 2)
			cut = i;
	if (chars <= DETAIL_CHARS)
		return xstrdup(detail);
	return xasprintf("%.*s...", (int)cut, detail);
}

/* Appends the INSERT (no ';') of one audit row whose job id, count and
 * detail are SQL expressions, written when cond (SQL) holds. */
static void
insert_sql(struct db *db, struct buf *sql, const struct audit_entry *e, const char *job_sql,
    const char *count_sql, const char *detail_sql, const char *cond)
{
	db_sql(db, sql,
	    "INSERT INTO jobq_audit (username, address, action, job_id, job_count, detail)"
	    " SELECT %q, %q, %q, %s, %s, %s FROM DUAL WHERE %s",
	    e->user, e->address, e->action, job_sql, count_sql, detail_sql, cond);
}

/* Appends the INSERT (no ';') of one audit row to sql, written only
 * when cond (SQL, evaluated as the INSERT runs; NULL: always) holds: a
 * caller puts the row in the transaction of the action it records, so
 * that the two are committed together or not at all, and cond says
 * whether the action did anything.  job_sql is the job's id as SQL:
 * "NULL" for an action on no one job, a number, or "LAST_INSERT_ID()"
 * for the job the statement before it inserted.  count 0 leaves
 * job_count NULL. */
void
audit_sql_when(
    struct db *db, struct buf *sql, const struct audit_entry *e, const char *job_sql, const char *cond)
{
	char *detail = detail_cut(e->detail != NULL ? e->detail : "");
	char count[24] = "NULL";
	struct buf quoted;

	if (e->count != 0)
		snprintf(count, sizeof count, "%llu", (unsigned long long)e->count);
	buf_init(&quoted);
	db_sql(db, &quoted, "%q", detail);
	insert_sql(db, sql, e, job_sql, count, quoted.data, cond != NULL ? cond : "TRUE");
	buf_free(&quoted);
	free(detail);
}

/* Appends the INSERT (no ';') of the audit row of an action on many
 * jobs, no one job, that counts them only as it runs: count_sql (SQL,
 * a session variable the statement before set, say) is the count, and
 * the detail is the count followed by e->detail (" jobs"); no row when
 * the count is 0. */
void
audit_sql_counted(struct db *db, struct buf *sql, const struct audit_entry *e, const char *count_sql)
{
	struct buf detail, cond;

	buf_init(&detail);
	buf_init(&cond);
	db_sql(db, &detail, "CONCAT(%s, %q)", count_sql, e->detail != NULL ? e->detail : "");
	buf_printf(&cond, "%s > 0", count_sql);
	insert_sql(db, sql, e, "NULL", count_sql, detail.data, cond.data);
	buf_free(&detail);
	buf_free(&cond);
}

/* audit_sql_when, always written. */
void
audit_sql(struct db *db, struct buf *sql, const struct audit_entry *e, const char *job_sql)
{
	audit_sql_when(db, sql, e, job_sql, NULL);
}

/* DB_OK when s is NULL (nobody asks) or its fn lets the action go on;
 * AUDIT_STOPPED, err saying why, when it does not. */
int
audit_still_ok(const struct audit_still *s, char *err)
{
	return s != NULL && s->fn(s->arg, err) != 0 ? AUDIT_STOPPED : DB_OK;
}

/* Records an action on job_id (0: on many jobs, or none) that was on
 * e->count jobs in all (0: only that one, or none). */
int
audit_add_entry(struct db *db, const struct audit_entry *e, uint64_t job_id, char *err)
{
	char id[24] = "NULL";
	struct buf sql;
	int rc;

	if (job_id != 0)
		snprintf(id, sizeof id, "%llu", (unsigned long long)job_id);
	buf_init(&sql);
	audit_sql(db, &sql, e, id);
	rc = db_exec_buf(db, &sql, err);
	buf_free(&sql);
	return rc;
}

/* One try of audit_tx's transaction. */
static int
audit_tx_once(
    struct db *db, const struct audit_entry *e, uint64_t job_id, audit_act_fn *act, void *arg, char *err)
{
	int rc;

	if ((rc = db_begin(db, err)) != DB_OK)
		return rc;
	if ((rc = act(db, arg, err)) == DB_OK && (rc = audit_add_entry(db, e, job_id, err)) == DB_OK &&
	    (rc = db_commit(db, err)) == DB_OK)
		return DB_OK;
	db_rollback(db);
	return rc;
}

/* Runs act and the audit row e of it on job_id (0: none) as one
 * transaction, rerun whole on a deadlock: the change and its row are
 * committed together or not at all.  act is one statement, or several
 * that open and retry no transaction of their own; what it returns but
 * DB_OK (it refused, or found nothing to change) rolls back, writes no
 * row and is returned.  DB_EGONE once the COMMIT was sent leaves it
 * unknown whether both happened or neither, never one. */
int
audit_tx(struct db *db, const struct audit_entry *e, uint64_t job_id, audit_act_fn *act, void *arg, char *err)
{
	int rc, attempt = 0;

	do
		rc = audit_tx_once(db, e, job_id, act, arg, err);
	while (db_retry_after(rc, ++attempt));
	return rc;
}

/* Runs the struct audit_job arg: its fn on its id. */
int
audit_job_act(struct db *db, void *arg, char *err)
{
	const struct audit_job *j = arg;

	return j->fn(db, j->id, err);
}

/* Records an action; job_id 0 for one on many jobs (detail says which). */
int
audit_add(struct db *db, const char *user, const char *address, const char *action, uint64_t job_id,
    const char *detail, char *err)
{
	struct audit_entry e = { user, address, action, 0, detail };

	return audit_add_entry(db, &e, job_id, err);
}

/* The actions on one job, oldest first, times in tz. */
int
audit_for_job(struct db *db, uint64_t job_id, const char *tz, struct audit_row **rows, size_t *n, char *err)
{
	struct db_res *r;
	char **row;
	int rc;

	*rows = NULL;
	*n = 0;
	r = db_query(db, &rc, err,
	    "SELECT CONVERT_TZ(at, '+00:00', %q), username, address, action, detail, job_count"
	    " FROM jobq_audit"
	    " WHERE job_id = %U ORDER BY id LIMIT 200",
	    tz, job_id);
	if (r == NULL)
		return rc;
	*rows = xcalloc(db_res_rows(r) + 1, sizeof **rows);
	while ((row = db_res_next(r)) != NULL) {
		struct audit_row *a = &(*rows)[(*n)++];

		a->at = xstrdup_or_empty(row[0]);
		a->user = xstrdup(row[1]);
		a->address = xstrdup(row[2]);
		a->action = xstrdup(row[3]);
		a->detail = xstrdup(row[4]);
		a->count = db_col_u64(row[5], 0);
		a->job_id = job_id;
	}
	db_res_free(r);
	return DB_OK;
}

void
audit_rows_free(struct audit_row *rows, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(rows[i].at);
		free(rows[i].user);
		free(rows[i].address);
		free(rows[i].action);
		free(rows[i].detail);
	}
	free(rows);
}

/* Every action name any part of jobq writes (the dashboard's handlers,
 * `jobq sessions end`, the session reaper), so a filter on a misspelt
 * action is refused instead of silently matching nothing.  A new action
 * must be added here as well as where it is written. */
static const char *const actions[] = {
	"cancel",
	"clear",
	"delete",
	"end-sessions",
	"enqueue",
	"forget",
	"login",
	"logout",
	"queue-pause",
	"queue-resume",
	"release",
	"retry",
	"retry-all",
	"retry-edited",
	"run-now",
	"schedule-add",
	"schedule-disable",
	"schedule-edit",
	"schedule-enable",
	"schedule-remove",
	"schedule-run-now",
	"session-end",
	"user-add",
	"user-password",
	"user-remove",
	"user-role",
	NULL,
};

/* The known action names, NULL-terminated, in alphabetical order. */
const char *const *
audit_actions(void)
{
	return actions;
}

/* 1 when action is one of the names the audit table is written with. */
int
audit_action_known(const char *action)
{
	size_t i;

	for (i = 0; actions[i] != NULL; i++)
		if (strcmp(actions[i], action) == 0)
			return 1;
	return 0;
}

/* The WHERE of audit_list, with its keyset order and limit.  The
 * primary key orders the rows: ids grow with every insert, so "before
 * id" pages cannot skip or repeat a row, whatever rows arrive meanwhile
 * and however many share a time. */
static void
list_sql(struct db *db, struct buf *where, const struct audit_filter *f)
{
	buf_adds(where, "1 = 1");
	if (f->user != NULL)
		db_sql(db, where, " AND username = %q", f->user);
	if (f->action != NULL)
		db_sql(db, where, " AND action = %q", db_ascii(f->action));
	if (f->since != NULL)
		db_sql(db, where, " AND at >= %q", f->since);
	if (f->until != NULL)
		db_sql(db, where, " AND at < %q", f->until);
	if (f->before != 0)
		db_sql(db, where, " AND id < %U", f->before);
	buf_printf(where, " ORDER BY id DESC LIMIT %u", f->limit);
}

/* The actions f selects, newest first, at most f->limit of them, times
 * in tz.  The caller validates the filter (a known action, UTF-8 text,
 * parsed times); this only builds the query and reads it. */
int
audit_list(struct db *db, const struct audit_filter *f, const char *tz, struct audit_row **rows, size_t *n,
    char *err)
{
	struct buf where;
	struct db_res *r;
	char **row;
	int rc;

	*rows = NULL;
	*n = 0;
	buf_init(&where);
	list_sql(db, &where, f);
	r = db_query(db, &rc, err,
	    "SELECT id, CONVERT_TZ(at, '+00:00', %q), username, address, action, detail, job_count, job_id"
	    " FROM jobq_audit WHERE %s",
	    tz, where.data);
	buf_free(&where);
	if (r == NULL)
		return rc;
	*rows = xcalloc(db_res_rows(r) + 1, sizeof **rows);
	while ((row = db_res_next(r)) != NULL) {
		struct audit_row *a = &(*rows)[(*n)++];

		a->id = db_col_u64(row[0], 0);
		a->at = xstrdup_or_empty(row[1]);
		a->user = xstrdup_or_empty(row[2]);
		a->address = xstrdup_or_empty(row[3]);
		a->action = xstrdup_or_empty(row[4]);
		a->detail = xstrdup_or_empty(row[5]);
		a->count = db_col_u64(row[6], 0);
		a->job_id = db_col_u64(row[7], 0);
	}
	db_res_free(r);
	return DB_OK;
}
