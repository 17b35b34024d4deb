/* db_exec.c -- statements and transactions on a connection.
 *
 * Sends SQL built with the formatting language (db_sql.c) through the
 * client calls (db_nb.c), reads every result, and keeps what the last
 * call did (rows changed, statements completed) for the caller. */
#include "config.h"

#include <errmsg.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "db_int.h"

/* Sends sql, without reading its results (collect does); not being
 * connected is an error like a lost connection. */
static int
run(struct db *db, const char *sql, size_t len, char *err)
{
	db->unsure = 0;
	if (db->my == NULL) {
		errf(err, "not connected to %s", db->target);
		db->last_errno = CR_SERVER_GONE_ERROR;
		return DB_EGONE;
	}
	db->affected = 0;
	db->done = 0;
	/* Inside an open transaction only a COMMIT commits: the string's
	 * first statement, or its last (the rest of a transaction sent in
	 * one round trip after a locking read). */
	db->commits = !(db->my->server_status & SERVER_STATUS_IN_TRANS) ||
	    (len >= 6 && strncasecmp(sql, "COMMIT", 6) == 0) ||
	    (len >= 7 && strncasecmp(sql + len - 7, ";COMMIT", 7) == 0);
	if (db_nb_query(db, sql, (unsigned long)len) != 0) {
		char what[200];
		size_t n = len < 60 ? len : 60;

		snprintf(what, sizeof what, "query \"%.*s%s\"", (int)n, sql, len > n ? "..." : "");
		return db_error_record(db, err, what);
	}
	db->last_errno = 0;
	return DB_OK;
}

/* Reads every result of the statements sent in one go: *first_set gets
 * the first result set (when wanted; the caller frees it), affected[i]
 * the rows statement i changed (up to max).  On an error the remaining
 * statements were not run; the caller rolls back an open transaction. */
static int
collect(struct db *db, MYSQL_RES **first_set, uint64_t *affected, size_t max, char *err)
{
	size_t i = 0;
	int status;

	if (first_set != NULL)
		*first_set = NULL;
	do {
		MYSQL_RES *res = db_nb_store_result(db);

		if (res == NULL && mysql_field_count(db->my) != 0) {
			if (first_set != NULL && *first_set != NULL)
				mysql_free_result(*first_set), *first_set = NULL;
			return db_error_record(db, err, "read result");
		}
		if (res != NULL && first_set != NULL && *first_set == NULL)
			*first_set = res;
		else if (res != NULL)
			mysql_free_result(res);
		/* Read before mysql_next_result(), which resets the count. */
		if (i == 0)
			db->affected = (uint64_t)mysql_affected_rows(db->my);
		if (i < max)
			affected[i] = (uint64_t)mysql_affected_rows(db->my);
		db->done = ++i;
		if ((status = db_nb_next_result(db)) > 0) {
			char what[64];

			if (first_set != NULL && *first_set != NULL)
				mysql_free_result(*first_set), *first_set = NULL;
			snprintf(what, sizeof what, "statement %zu of a batch", i + 1);
			return db_error_record(db, err, what);
		}
	} while (status == 0);
	return DB_OK;
}

/* Runs the statements in sql, which return no rows. */
int
db_exec_buf(struct db *db, const struct buf *sql, char *err)
{
	int rc = run(db, sql->data, sql->len, err);

	if (rc != DB_OK)
		return rc;
	return collect(db, NULL, NULL, 0, err);
}

/* Sends several statements separated by ';' in one round trip;
 * affected[i] gets the rows statement i changed. */
int
db_exec_many(struct db *db, const struct buf *sql, uint64_t *affected, size_t max, char *err)
{
	return db_exec_many_rows(db, sql, affected, max, NULL, err);
}

/* db_exec_many, where one statement may return rows: when rows is not
 * NULL, *rows gets them (the first result set; NULL when none came, or
 * on an error). */
int
db_exec_many_rows(struct db *db, const struct buf *sql, uint64_t *affected, size_t max, struct db_res **rows,
    char *err)
{
	MYSQL_RES *res = NULL;
	int rc = run(db, sql->data, sql->len, err);

	if (rows != NULL)
		*rows = NULL;
	if (rc == DB_OK)
		rc = collect(db, rows != NULL ? &res : NULL, affected, max, err);
	if (rc != DB_OK || res == NULL) {
		if (res != NULL)
			mysql_free_result(res);
		return rc;
	}
	*rows = xcalloc(1, sizeof **rows);
	(*rows)->res = res;
	return DB_OK;
}

/* db_query, for SQL already built. */
struct db_res *
db_query_buf(struct db *db, const struct buf *sql, int *rc, char *err)
{
	MYSQL_RES *res;
	struct db_res *r;

	if ((*rc = run(db, sql->data, sql->len, err)) != DB_OK)
		return NULL;
	if ((*rc = collect(db, &res, NULL, 0, err)) != DB_OK)
		return NULL;
	if (res == NULL) {
		errf(err, "query returned no result set");
		*rc = DB_EFAIL;
		return NULL;
	}
	r = xcalloc(1, sizeof *r);
	r->res = res;
	return r;
}

/* Runs a query and returns all its rows, or NULL with *rc and err set.
 * Several statements may be sent at once: the rows are those of the
 * first one that returns any. */
struct db_res *
db_query(struct db *db, int *rc, char *err, const char *fmt, ...)
{
	struct buf b;
	struct db_res *r;
	va_list ap;

	buf_init(&b);
	va_start(ap, fmt);
	db_sql_va(&b, fmt, ap);
	va_end(ap);
	r = db_query_buf(db, &b, rc, err);
	buf_free(&b);
	return r;
}

/* How many statements of the last call completed: after an error in
 * statements sent together, those before it (each committed on its own
 * outside a transaction) and none after it, which the server skipped. */
size_t
db_statements_done(const struct db *db)
{
	return db->done;
}

/* Rows changed (with CLIENT_FOUND_ROWS: matched) by the last db_exec. */
uint64_t
db_affected(const struct db *db)
{
	return db->affected;
}

/* The AUTO_INCREMENT id the last INSERT gave its first row. */
uint64_t
db_insert_id(const struct db *db)
{
	return db->my != NULL ? (uint64_t)mysql_insert_id(db->my) : 0;
}

/* Opens a transaction. */
int
db_begin(struct db *db, char *err)
{
	int rc = run(db, "START TRANSACTION", strlen("START TRANSACTION"), err);

	return rc != DB_OK ? rc : collect(db, NULL, NULL, 0, err);
}

/* A claim or a move counts only once COMMIT has succeeded: on Galera a
 * deadlock can be reported by the COMMIT itself. */
int
db_commit(struct db *db, char *err)
{
	if (db->my == NULL)
		return run(db, "", 0, err);
	db->commits = 1;
	if (db_nb_commit(db) != 0)
		return db_error_record(db, err, "commit");
	return DB_OK;
}

/* Rolls back, on paths that already failed, and then mends a table
 * whose cached triggers failed to load (db_error.c).  When the ROLLBACK itself
 * fails (commands out of sync, a half-read result, a server error) the
 * connection is closed: the server then rolls back by itself, whereas a
 * transaction left open on a live connection would be committed, half
 * done, by the next START TRANSACTION -- a job's DELETE without its run
 * row, say.  Atomicity is worth a reconnect. */
void
db_rollback(struct db *db)
{
	if (db->my != NULL && db_nb_rollback(db) != 0)
		db_disconnect(db);
	db_mend_triggers(db);
}
