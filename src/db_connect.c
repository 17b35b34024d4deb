/* db_connect.c -- connecting, through a host list when there is one.
 *
 * Opens the connection with the client options (timeouts from the wait
 * limit, TLS), then sets up the session (db_session.c) and checks a
 * Galera node's readiness (db_galera.c); with a host list, the first
 * host that answers and is ready is kept. */
#include "config.h"

#include <stdio.h>
#include <string.h>

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
	/* "localhost" would mean the default unix socket, which the library
	 * takes as secure and does not encrypt: TLS asks for TCP. */
	{
		unsigned tcp = MYSQL_PROTOCOL_TCP;

		mysql_options(db->my, MYSQL_OPT_PROTOCOL, &tcp);
	}
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
	if (db_nb_connect(db, host, with_database ? c->database : NULL, port,
	        CLIENT_FOUND_ROWS | CLIENT_MULTI_STATEMENTS) == NULL) {
		char what[400];

		snprintf(what, sizeof what, "connect to %s", db->target);
		rc = db_error_record(db, err, what);
		db_disconnect(db);
		/* Refused credentials or an unknown database will not get better
		 * by retrying, but a server that is down will. */
		return rc == DB_EGONE ? DB_EGONE : DB_EFAIL;
	}
	/* tls = yes does not check the server, and the client library may
	 * then go on unencrypted when the server offers no TLS: refused, or
	 * "encrypt the connection" would be a word anyone in the path can
	 * strip. */
	if (c->tls != TLS_OFF && mysql_get_ssl_cipher(db->my) == NULL) {
		errf(err, "connect to %s: tls = %s, but the server did not encrypt the connection (it offers no TLS)",
		    db->target, c->tls == TLS_VERIFY ? "verify" : "yes");
		db_disconnect(db);
		return DB_EFAIL;
	}
	db->thread_id = mysql_thread_id(db->my);
	if ((rc = db_session_setup(db, err)) != DB_OK)
		return rc;
	return db_galera_check(db, err);
}

/* Tries one host: the next of the list in this round (from the first),
 * or the socket or single host there is.  DB_OK when connected (the next
 * round starts from the first host again).  Otherwise *more says whether
 * hosts remain in this round; once none do, err says what each host of
 * the round answered and the return is DB_EGONE when any was unreachable
 * or not ready (trying later may help), else the last host's error.
 *
 * A caller with other work to do between hosts calls it once per turn:
 * the worker, whose handlers must be stopped before their leases end
 * however many silent hosts the list holds. */
int
db_connect_step(struct db *db, int with_database, int *more, char *err)
{
	const struct db_conf *c = db->conf;
	char host[256], one[ERRSZ];
	const char *why;
	unsigned port;
	size_t len;
	int rc;

	*more = 0;
	if (c->socket != NULL || c->host == NULL)
		return connect_one(db, NULL, c->port, with_database, err);
	if (db->next_host == 0) {
		db->round_gone = 0;
		db->round_err[0] = '\0';
	}
	if (conf_db_host(c, db->next_host, host, sizeof host, &port, &why) != 1) {
		db->next_host = 0;
		errf(err, "host: no host to connect to");
		return DB_EFAIL;
	}
	snprintf(db->host, sizeof db->host, "%s", host);
	db->port = port;
	if ((rc = connect_one(db, host, port, with_database, one)) == DB_OK) {
		db->next_host = 0;
		return DB_OK;
	}
	db->round_gone |= rc == DB_EGONE;
	len = strlen(db->round_err);
	if (len > 0 && len + 2 < sizeof db->round_err) {
		memcpy(db->round_err + len, "; ", 3);
		len += 2;
	}
	if (len + 1 < sizeof db->round_err) {
		size_t n = strnlen(one, sizeof db->round_err - len - 1);

		memcpy(db->round_err + len, one, n);
		db->round_err[len + n] = '\0';
	}
	db->next_host++;
	*more = conf_db_host(c, db->next_host, host, sizeof host, &port, &why) == 1;
	if (*more)
		return rc;
	db->next_host = 0;
	snprintf(err, ERRSZ, "%s", db->round_err);
	return db->round_gone ? DB_EGONE : rc;
}

/* Opens the connection (closing any old one).  with_database = 0
 * connects without selecting the database, for `jobq init` to create it.
 *
 * With a host list (host = db1,db2:3307,db3) the hosts are tried in
 * their order, always from the first, and the first that answers and is
 * ready is kept: the list's order is the operator's preference (one node
 * takes the writes, the others stand by), so a worker goes back to the
 * first host once it is back.  err then says what each host answered. */
int
db_connect(struct db *db, int with_database, char *err)
{
	int rc, more;

	db->next_host = 0;
	do
		rc = db_connect_step(db, with_database, &more, err);
	while (rc != DB_OK && more);
	return rc;
}
