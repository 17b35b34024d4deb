/* db_session.c -- the session settings every connection gets at connect.
 *
 * Run by db_connect.c on each new connection, before it is used: time
 * zone, SQL mode, isolation, lock waits and statement bounds under the
 * wait limit, and the largest statement the server takes. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "db_int.h"

/* The server's max_allowed_packet as read at the last connect (0 before
 * the first one). */
size_t
db_max_packet(const struct db *db)
{
	return db->max_packet;
}

/* The server variable that bounds each statement's run time under the
 * wait limit ("max_statement_time" on MariaDB, "max_execution_time" on
 * MySQL, which covers SELECT only), or NULL when the server has none. */
const char *
db_statement_timeout(const struct db *db)
{
	return db->stmt_timeout;
}

/* The largest statement the server takes (max_allowed_packet, in this
 * session's view: it can differ per server and change while we run, so it
 * is read on every connect).  Every statement jobq builds must stay under
 * it: past it the server drops the connection and the statement would be
 * resent forever. */
static int
read_max_packet(struct db *db, char *err)
{
	MYSQL_RES *res;
	MYSQL_ROW row;

	if (mysql_query(db->my, "SELECT @@max_allowed_packet") != 0 ||
	    (res = mysql_store_result(db->my)) == NULL)
		return db_error_record(db, err, "read max_allowed_packet");
	row = mysql_fetch_row(res);
	db->max_packet = row != NULL && row[0] != NULL ? (size_t)strtoull(row[0], NULL, 10) : 0;
	mysql_free_result(res);
	if (db->max_packet < 1024) /* unreadable: assume the oldest servers' default */
		db->max_packet = 1024 * 1024;
	return DB_OK;
}

/* Bounds this session's statements to the wait limit, with whichever of
 * the servers' variables exists: MariaDB's max_statement_time (every
 * statement), else MySQL's max_execution_time (SELECT only).  A server
 * (or proxy) that refuses both still has the lock wait timeouts and the
 * client's socket timeouts: only a lost connection is an error here. */
static int
set_statement_timeout(struct db *db, char *err)
{
	static const char *const vars[] = { "max_statement_time", "max_execution_time" };
	char sql[96];
	size_t i;

	db->stmt_timeout = NULL;
	for (i = 0; i < ARRAY_LEN(vars); i++) {
		if (i == 0)
			snprintf(sql, sizeof sql, "SET SESSION %s = %lld.%03lld", vars[i],
			    (long long)(db->wait_limit_ms / 1000), (long long)(db->wait_limit_ms % 1000));
		else
			snprintf(
			    sql, sizeof sql, "SET SESSION %s = %lld", vars[i], (long long)db->wait_limit_ms);
		if (mysql_query(db->my, sql) == 0) {
			db->stmt_timeout = vars[i];
			return DB_OK;
		}
		if (db_error_class(db, mysql_errno(db->my)) == DB_EGONE)
			return db_error_record(db, err, "set up session (statement timeout)");
	}
	return DB_OK;
}

/* Session settings every jobq connection relies on: times are UTC, a
 * reservation transaction sees committed rows only, bad values are
 * errors rather than warnings.
 *
 * Under a wait limit (the worker), no wait on the server outlasts it:
 * row lock waits (innodb_lock_wait_timeout) and metadata lock waits
 * (lock_wait_timeout) end after the limit in whole seconds, at least 1
 * (their unit), and each statement after the limit itself where the
 * server can bound statements.  Without one, lock waits end after 10 s
 * and the caller reruns the transaction. */
int
db_session_setup(struct db *db, char *err)
{
	char sql[400], waits[96];
	unsigned lock_s = (unsigned)(db->wait_limit_ms / 1000);
	int rc;

	if (db->wait_limit_ms == 0)
		snprintf(waits, sizeof waits, "SESSION innodb_lock_wait_timeout = 10");
	else
		snprintf(waits, sizeof waits,
		    "SESSION innodb_lock_wait_timeout = %u, SESSION lock_wait_timeout = %u",
		    lock_s > 0 ? lock_s : 1, lock_s > 0 ? lock_s : 1);
	snprintf(sql, sizeof sql,
	    "SET time_zone = '+00:00', "
	    "SESSION sql_mode = 'STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,"
	    "ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION', %s",
	    waits);
	if (mysql_query(db->my, sql) != 0 ||
	    mysql_query(db->my, "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED") != 0)
		return db_error_record(db, err, "set up session");
	if (db->wait_limit_ms > 0 && (rc = set_statement_timeout(db, err)) != DB_OK)
		return rc;
	return read_max_packet(db, err);
}
