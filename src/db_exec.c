/* db_exec.c -- statements and transactions on a connection.
 *
 * Sends SQL built with the formatting language (db_sql.c) through the
 * client calls (db_nb.c), reads every result, and keeps what the last
 * call did (rows changed, statements completed) for the caller.
 *
 * Several statements go in one round trip, but on a Galera node a
 * transaction's go one at a time (send_all).  There, a transaction that
 * an applier aborts (a "brute force" abort, when a write set from
 * another node needs its locks) is rolled back at once, yet the server
 * went on running the statements left in the same packet, each as a
 * transaction of its own that it committed, and reported the abort only
 * at a later one: MariaDB 10.11.19 with galera-4 26.4.23, measured by
 * contrib/galera-split-check.  A job's run row committed without the
 * DELETE that ended it, a group's count without its job.  Sent one at a
 * time, every statement after the abort answers 1213, and nothing of
 * the transaction stays. */
#include "config.h"

#include <ctype.h>
#include <errmsg.h>
#include <mysqld_error.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "db_int.h"

#define BEGIN_TX "START TRANSACTION"

/* Whether the statement at sql (n bytes, its leading blanks skipped)
 * starts with word, a whole keyword. */
static int
starts_with(const char *sql, size_t n, const char *word)
{
	size_t w = strlen(word);

	return n >= w && strncasecmp(sql, word, w) == 0 &&
	    (n == w || !(isalnum((unsigned char)sql[w]) || sql[w] == '_'));
}

/* Whether sending sql may commit a change, so that an answer lost to it
 * leaves "it may have been applied" (db_unsure): a COMMIT; a START
 * TRANSACTION inside a transaction (it commits that one); outside a
 * transaction, any statement but a read or a session setting (SELECT,
 * SHOW, SET), which commits by itself.  Inside one, only those commit
 * (jobq sends nothing there that commits implicitly): its writes are
 * rolled back with the lost connection.  A statement not recognised
 * counts as a change. */
static int
commits(const struct db *db, const char *sql, size_t len)
{
	int tx = (db->my->server_status & SERVER_STATUS_IN_TRANS) != 0;
	size_t off, n;

	for (off = 0; off < len; off += n + 1) {
		const char *st;

		while (off < len && isspace((unsigned char)sql[off]))
			off++;
		st = sql + off;
		if ((n = db_stmt_len(st, len - off)) == 0)
			continue; /* nothing between two ';' */
		if (starts_with(st, n, "COMMIT"))
			return 1;
		if (starts_with(st, n, BEGIN_TX)) {
			if (tx)
				return 1;
			tx = 1;
		} else if (!tx && !starts_with(st, n, "SELECT") && !starts_with(st, n, "SHOW") &&
		    !starts_with(st, n, "SET"))
			return 1;
	}
	return 0;
}

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
	db->commits = commits(db, sql, len);
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

/* Whether sql must go one statement at a time (see the top): it is a
 * transaction's, on a Galera node, and holds more than one. */
static int
split_due(const struct db *db, const char *sql, size_t len)
{
	/* In a transaction, or autocommit off (scheduler.c): one will open. */
	int in_tx = db->my != NULL && ((db->my->server_status & SERVER_STATUS_IN_TRANS) ||
	                                  !(db->my->server_status & SERVER_STATUS_AUTOCOMMIT));

	if (!db->galera || !(in_tx || (len > strlen(BEGIN_TX) && strncasecmp(sql, BEGIN_TX ";", strlen(BEGIN_TX ";")) == 0)))
		return 0;
	return db_stmt_len(sql, len) < len;
}

/* Runs the statements of sql and reads their results as collect does,
 * one round trip for all of them, or one each where split_due says so:
 * then *first_set is the first result set of any of them, affected[i]
 * statement i's count, db->done and db->affected count across them, and
 * the first error stops the rest. */
static int
send_all(struct db *db, const char *sql, size_t len, MYSQL_RES **first_set, uint64_t *affected, size_t max,
    char *err)
{
	MYSQL_RES *set = NULL, **want;
	uint64_t first = 0;
	size_t off = 0, n, done = 0;
	int rc = DB_OK;

	if (!split_due(db, sql, len)) {
		rc = run(db, sql, len, err);
		return rc != DB_OK ? rc : collect(db, first_set, affected, max, err);
	}
	while (rc == DB_OK && off < len) {
		/* A piece starts at its keyword, which run() reads (COMMIT). */
		while (off < len && (sql[off] == ' ' || sql[off] == '\n' || sql[off] == '\t'))
			off++;
		if ((n = db_stmt_len(sql + off, len - off)) == 0) {
			off++;
			continue;
		}
		want = first_set != NULL && set == NULL ? &set : NULL;
		if ((rc = run(db, sql + off, n, err)) == DB_OK)
			rc = collect(db, want, done < max ? affected + done : NULL, done < max ? max - done : 0, err);
		if (done == 0)
			first = db->affected;
		done += db->done;
		db->done = done;
		db->affected = first;
		off += n + 1;
	}
	if (first_set != NULL)
		*first_set = rc == DB_OK ? set : NULL;
	if (rc != DB_OK && set != NULL)
		mysql_free_result(set);
	return rc;
}

/* Runs the statements in sql, which return no rows. */
int
db_exec_buf(struct db *db, const struct buf *sql, char *err)
{
	return send_all(db, sql->data, sql->len, NULL, NULL, 0, err);
}

/* Sends several statements separated by ';' in one round trip (one
 * each for a transaction on Galera: send_all); affected[i] gets the rows
 * statement i changed. */
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
	int rc;

	if (rows != NULL)
		*rows = NULL;
	rc = send_all(db, sql->data, sql->len, rows != NULL ? &res : NULL, affected, max, err);
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

	if ((*rc = send_all(db, sql->data, sql->len, &res, NULL, 0, err)) != DB_OK)
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
	int rc = run(db, BEGIN_TX, strlen(BEGIN_TX), err);

	return rc != DB_OK ? rc : collect(db, NULL, NULL, 0, err);
}

/* Opens a read-only transaction whose reads all see one snapshot, taken
 * as it opens: a view put together from several SELECTs (a group, its
 * queued jobs, its callbacks) then adds up, whatever commits meanwhile.
 * The session is READ COMMITTED (db_session.c), where every statement
 * reads a snapshot of its own, so this one transaction is REPEATABLE
 * READ; SET TRANSACTION holds for the next transaction only, and is sent
 * with it in one round trip (on a Galera node with wsrep_sync_wait too:
 * the wait is at the START).  Should the START fail after the SET, the
 * connection is closed rather than left to give the level to the next
 * transaction, a write's. */
int
db_begin_read(struct db *db, char *err)
{
	static const char sql[] =
	    "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ;" BEGIN_TX " WITH CONSISTENT SNAPSHOT, READ ONLY";
	int rc = run(db, sql, strlen(sql), err);

	if (rc == DB_OK && (rc = collect(db, NULL, NULL, 0, err)) != DB_OK && db->my != NULL)
		db_disconnect(db);
	return rc;
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
	/* A Galera node answers the ROLLBACK of a transaction another
	 * node's write aborted with the deadlock error: it is rolled back,
	 * and the connection is sound, so a rerun may go on with it. */
	if (db->my != NULL && db_nb_rollback(db) != 0 && mysql_errno(db->my) != ER_LOCK_DEADLOCK)
		db_disconnect(db);
	db_mend_triggers(db);
}
