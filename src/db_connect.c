/* db_connect.c -- connecting, through a host list when there is one.
 *
 * Opens the connection with the client options (timeouts from the wait
 * limit, TLS), then sets up the session (db_session.c) and checks a
 * Galera node's readiness (db_galera.c); with a host list, the first
 * host that answers and is ready is kept. */
#include "config.h"

#include <stdio.h>

#include "db_int.h"

/* The client options of a new connection: timeouts (see db_limit.c),
 * the character set and TLS as configured. */
static void
set_options(struct db *db)
{
	const struct db_conf *c = db->conf;
	unsigned ct, rt;

	db_limit_timeouts(db, &ct, &rt);

	mysql_options(db->my, MYSQL_OPT_CONNECT_TIMEOUT, &ct);
	mysql_options(db->my, MYSQL_OPT_READ_TIMEOUT, &rt);
	mysql_options(db->my, MYSQL_OPT_WRITE_TIMEOUT, &rt);
	mysql_options(db->my, MYSQL_SET_CHARSET_NAME, "utf8mb4");
	if (c->tls == TLS_OFF)
		return;
	mysql_ssl_set(db->my, c->tls_key, c->tls_cert, c->tls_ca, NULL, NULL);
#if defined(LIBMARIADB) || defined(MARIADB_PACKAGE_VERSION_ID)
	{
		my_bool on = 1;

		mysql_optionsv(db->my, MYSQL_OPT_SSL_ENFORCE, &on);
		if (c->tls == TLS_VERIFY)
			mysql_optionsv(db->my, MYSQL_OPT_SSL_VERIFY_SERVER_CERT, &on);
	}
#else
	{
		unsigned mode = c->tls == TLS_VERIFY ? SSL_MODE_VERIFY_IDENTITY : SSL_MODE_REQUIRED;

		mysql_options(db->my, MYSQL_OPT_SSL_MODE, &mode);
	}
#endif
}

/* Connects to one host (NULL with the socket or the library's default). */
static int
connect_one(struct db *db, const char *host, unsigned port, int with_database, char *err)
{
	const struct db_conf *c = db->conf;
	int rc;

	db_disconnect(db);
	db_set_target(db, host, port);
	if ((db->my = mysql_init(NULL)) == NULL)
		fatal("mysql_init: out of memory");
	set_options(db);
	db->nonblock = 0;
#ifdef HAVE_MYSQL_REAL_QUERY_START
	if (db->waiter != NULL)
		db->nonblock = mysql_options(db->my, MYSQL_OPT_NONBLOCK, 0) == 0;
#endif
	if (mysql_real_connect(db->my, host, c->user, c->password, with_database ? c->database : NULL, port,
	        c->socket, CLIENT_FOUND_ROWS | CLIENT_MULTI_STATEMENTS) == NULL) {
		char what[400];

		snprintf(what, sizeof what, "connect to %s", db->target);
		rc = db_error_record(db, err, what);
		db_disconnect(db);
		/* Refused credentials or an unknown database will not get better
		 * by retrying, but a server that is down will. */
		return rc == DB_EGONE ? DB_EGONE : DB_EFAIL;
	}
	db->thread_id = mysql_thread_id(db->my);
	if ((rc = db_session_setup(db, err)) != DB_OK)
		return rc;
	return db_galera_check(db, err);
}

/* Opens the connection (closing any old one).  with_database = 0
 * connects without selecting the database, for `jobq init` to create it.
 *
 * With a host list (host = db1,db2:3307,db3) the hosts are tried in
 * their order, always from the first, and the first that answers and is
 * ready is kept: the list's order is the operator's preference (one node
 * takes the writes, the others stand by), so a worker goes back to the
 * first host once it is back.  err then says what each host answered.
 * DB_EGONE when any host was unreachable or not ready (trying later may
 * help), else the last host's error. */
int
db_connect(struct db *db, int with_database, char *err)
{
	const struct db_conf *c = db->conf;
	char host[256], one[ERRSZ];
	const char *why;
	size_t i, len = 0;
	unsigned port;
	int rc = DB_EFAIL, gone = 0;

	if (c->socket != NULL || c->host == NULL)
		return connect_one(db, NULL, c->port, with_database, err);
	for (i = 0; conf_db_host(c, i, host, sizeof host, &port, &why) == 1; i++) {
		snprintf(db->host, sizeof db->host, "%s", host);
		db->port = port;
		if ((rc = connect_one(db, host, port, with_database, one)) == DB_OK)
			return DB_OK;
		gone |= rc == DB_EGONE;
		if (i == 0)
			len = (size_t)snprintf(err, ERRSZ, "%s", one);
		else if (len < ERRSZ)
			len += (size_t)snprintf(err + len, ERRSZ - len, "; %s", one);
	}
	if (i == 0)
		errf(err, "host: no host to connect to");
	return gone ? DB_EGONE : rc;
}
