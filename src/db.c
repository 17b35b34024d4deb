/* db.c -- one connection to MySQL/MariaDB: the handle.
 *
 * Errors are classified (enum db_rc) so that callers can tell "reconnect
 * and try again" from "rerun the transaction" from "try later" from "this
 * is a bug".  A lost connection is closed at once; db_connect() opens a
 * new one with the same session settings (UTC, READ COMMITTED, strict
 * mode, and the wait limit when one is set).
 *
 * The db layer, from the bottom up: this file (the handle: create, name,
 * close), db_limit.c (the wait limit), db_sql.c (the SQL formatting
 * language), db_nb.c (client calls that wait for the server), db_res.c
 * (result rows), db_error.c (the server's errors, classified),
 * db_session.c and db_galera.c (set-up after connecting), db_connect.c
 * (connecting through a host list), db_exec.c (statements and
 * transactions), db_retry.c (rerunning a transaction that deadlocked),
 * db_cancel.c (stopping on the server a statement the client gave up
 * on).  The state they share is in db_int.h. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "db_int.h"

/* Names the target "host:port" (or the socket) in db->target. */
void
db_set_target(struct db *db, const char *host, unsigned port)
{
	const struct db_conf *conf = db->conf;

	if (conf->socket != NULL || host == NULL)
		snprintf(
		    db->target, sizeof db->target, "socket %s", conf->socket ? conf->socket : "(default)");
	else
		snprintf(db->target, sizeof db->target, "%s:%u", host, port);
}

/* A handle for conf, not yet connected; conf must outlive it.  Its
 * target names the first host of a list until a connect says more. */
struct db *
db_new(const struct db_conf *conf)
{
	struct db *db = xcalloc(1, sizeof *db);
	const char *why;

	db->conf = conf;
	db->port = conf->port;
	if (conf->host != NULL && conf_db_host(conf, 0, db->host, sizeof db->host, &db->port, &why) == 1)
		db_set_target(db, db->host, db->port);
	else
		db_set_target(db, NULL, 0);
	return db;
}

/* Closes the connection, if any, and frees db (NULL: nothing). */
void
db_free(struct db *db)
{
	if (db == NULL)
		return;
	db_disconnect(db);
	free(db);
}

/* "socket /run/mysqld/mysqld.sock" or "db.example.com:3306": what error
 * messages say we were talking to. */
const char *
db_target(const struct db *db)
{
	return db->target;
}

/* Closes the connection; the handle stays, for db_connect. */
void
db_disconnect(struct db *db)
{
	if (db->my != NULL)
		mysql_close(db->my);
	db->my = NULL;
	db->thread_id = 0;
}

/* Whether a connection is open (a lost one is closed at once). */
int
db_connected(const struct db *db)
{
	return db->my != NULL;
}

/* For a thread other than the one that made the connections it uses:
 * the client library's per-thread state, taken at its start and given
 * back at its end (with MariaDB Connector/C these do nothing; Oracle's
 * libmysqlclient needs them). */
void
db_thread_begin(void)
{
	mysql_thread_init();
}

void
db_thread_end(void)
{
	mysql_thread_end();
}

/* The server's id of this connection (its processlist id), 0 when not
 * connected. */
unsigned long
db_session_id(const struct db *db)
{
	return db->thread_id;
}
