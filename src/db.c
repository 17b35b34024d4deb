/* db.c -- one connection to MySQL/MariaDB.
 *
 * Everything jobq says to the server goes through db_exec/db_query with a
 * small printf-like language that quotes values itself, so no caller ever
 * pastes a string into SQL:
 *
 *   %s  SQL text, pasted as is (table names, fragments we wrote)
 *   %q  a string value, quoted and escaped; NULL pointer -> NULL
 *   %b  a string value given as (const char *, size_t), may hold any byte
 *   %d  int          %u  unsigned
 *   %I  int64_t      %U  uint64_t
 *   %%  a percent sign
 *
 * Errors are classified (enum db_rc) so that callers can tell "reconnect
 * and try again" from "rerun the transaction" from "try later" from "this
 * is a bug".  A lost connection is closed at once; db_connect() opens a
 * new one with the same session settings (UTC, READ COMMITTED, strict
 * mode, and the wait limit when one is set). */
#include "config.h"

#include <errno.h>
#include <mysql.h>
#include <poll.h>
#include <mysqld_error.h>
#include <errmsg.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <strings.h>

#include "db.h"

struct db {
	const struct db_conf *conf;
	MYSQL *my;
	uint64_t affected; /* rows changed by the first statement of the last call */
	size_t done;       /* statements of the last call that completed */
	unsigned last_errno;
	size_t max_packet;        /* the server's max_allowed_packet, read at connect */
	unsigned long thread_id;  /* the server's id of this connection; 0: none */
	int cancel_abandoned;     /* see db_cancel_abandoned() */
	int64_t wait_limit_ms;    /* 0: the server's and the config's own limits */
	const char *stmt_timeout; /* the variable that bounds statements, or NULL */
	int galera;               /* the server is a Galera node (wsrep_on) */
	db_waiter *waiter;        /* see db_set_waiter(); NULL: calls block */
	void *waiter_arg;
	int nonblock;             /* this connection was opened with a waiter */
	int waiting;              /* inside a waiter: no call may start */
	char host[256];           /* the host of the list we are (or were last) on */
	unsigned port;
	char target[300];
};

struct db_res {
	MYSQL_RES *res;
};

/* Names the target "host:port" (or the socket) in db->target. */
static void
set_target(struct db *db, const char *host, unsigned port)
{
	const struct db_conf *conf = db->conf;

	if (conf->socket != NULL || host == NULL)
		snprintf(
		    db->target, sizeof db->target, "socket %s", conf->socket ? conf->socket : "(default)");
	else
		snprintf(db->target, sizeof db->target, "%s:%u", host, port);
}

struct db *
db_new(const struct db_conf *conf)
{
	struct db *db = xcalloc(1, sizeof *db);
	const char *why;

	db->conf = conf;
	db->port = conf->port;
	if (conf->host != NULL && conf_db_host(conf, 0, db->host, sizeof db->host, &db->port, &why) == 1)
		set_target(db, db->host, db->port);
	else
		set_target(db, NULL, 0);
	return db;
}

void
db_free(struct db *db)
{
	if (db == NULL)
		return;
	db_disconnect(db);
	free(db);
}

/* The server's max_allowed_packet as read at the last connect (0 before
 * the first one). */
size_t
db_max_packet(const struct db *db)
{
	return db->max_packet;
}

/* "socket /run/mysqld/mysqld.sock" or "db.example.com:3306": what error
 * messages say we were talking to. */
const char *
db_target(const struct db *db)
{
	return db->target;
}

void
db_disconnect(struct db *db)
{
	if (db->my != NULL)
		mysql_close(db->my);
	db->my = NULL;
	db->thread_id = 0;
}

/* With on set, a statement the client gives up on (read_timeout) is also
 * stopped on the server: see kill_abandoned(). */
void
db_cancel_abandoned(struct db *db, int on)
{
	db->cancel_abandoned = on;
}

/* Asks the server, over a second short-lived connection, to stop the
 * statement that connection `thread` runs (KILL QUERY).  The client's
 * read timeout only ends the wait on our side: the server would go on
 * running the query, or waiting for its locks, for a client that has
 * left.  A user may always kill its own statements, no privilege needed.
 * Adds what happened to err. */
static void
kill_abandoned(struct db *db, unsigned long thread, char *err)
{
	struct db_conf conf = *db->conf;
	char kerr[ERRSZ];
	size_t len = strlen(err);
	struct db *k;
	int rc;

	/* The thread id is the node's own: never ask another host of a list. */
	if (conf.socket == NULL && db->host[0] != '\0') {
		conf.host = db->host;
		conf.port = db->port;
	}
	if (conf.connect_timeout_ms > 5000) /* the server may really be gone */
		conf.connect_timeout_ms = 5000;
	if (conf.read_timeout_ms > 5000)
		conf.read_timeout_ms = 5000;
	k = db_new(&conf);
	rc = db_connect(k, 0, kerr);
	if (rc == DB_OK)
		rc = db_exec(k, kerr, "KILL QUERY %U", (uint64_t)thread);
	if (rc != DB_OK && db_errno(k) == ER_NO_SUCH_THREAD)
		rc = DB_OK; /* it ended by itself */
	db_free(k);
	if (rc == DB_OK)
		snprintf(err + len, ERRSZ - len, "; the statement was cancelled on the server");
	else
		snprintf(err + len, ERRSZ - len, "; cancelling it on the server failed: %s", kerr);
}

int
db_connected(const struct db *db)
{
	return db->my != NULL;
}

unsigned
db_errno(const struct db *db)
{
	return db->last_errno;
}

#define ER_STATEMENT_TIMEOUT_MARIADB 1969 /* max_statement_time exceeded */
#define ER_QUERY_TIMEOUT_MYSQL 3024       /* max_execution_time exceeded */

static int
classify(const struct db *db, unsigned e)
{
	switch (e) {
	case ER_LOCK_DEADLOCK:
	case ER_ERROR_DURING_COMMIT: /* Galera: certification failed at COMMIT */
		return DB_ERETRY;
	case ER_LOCK_WAIT_TIMEOUT:
		/* Under a wait limit the wait was already as long as we allow:
		 * rerunning at once would only wait again. */
		return db->wait_limit_ms > 0 ? DB_EWAIT : DB_ERETRY;
	case ER_STATEMENT_TIMEOUT_MARIADB:
	case ER_QUERY_TIMEOUT_MYSQL:
		return DB_EWAIT;
	case CR_CONNECTION_ERROR:
	case CR_CONN_HOST_ERROR:
	case CR_UNKNOWN_HOST:
	case CR_SERVER_GONE_ERROR:
	case CR_SERVER_LOST:
	case ER_SERVER_SHUTDOWN:
	case ER_CON_COUNT_ERROR:
	case ER_UNKNOWN_COM_ERROR: /* Galera node not ready (left the primary
	                            * component): reconnect, to a ready host */
	case 1927:                 /* ER_CONNECTION_KILLED (MariaDB) */
	case 2055:                 /* CR_SERVER_LOST_EXTENDED */
	case 4031:                 /* ER_CLIENT_INTERACTION_TIMEOUT (MySQL) */
		return DB_EGONE;
	default:
		return e >= 2000 && e < 3000 ? DB_EGONE : DB_EFAIL;
	}
}

/* Records the server's error, closes a lost connection, and returns the
 * class. */
static int
fail(struct db *db, char *err, const char *what)
{
	int rc;

	db->last_errno = mysql_errno(db->my);
	rc = classify(db, db->last_errno);
	errf(err, "%s: %s (error %u)", what, mysql_error(db->my), db->last_errno);
	if (rc == DB_EGONE && db->cancel_abandoned && db->thread_id != 0 &&
	    (db->last_errno == CR_SERVER_LOST || db->last_errno == 2055))
		kill_abandoned(db, db->thread_id, err);
	if (rc == DB_EGONE)
		db_disconnect(db);
	return rc;
}

/* A pause of 1..10 ms times attempt before rerunning a transaction.
 * The draw comes from the kernel (getrandom), so two processes that
 * collided do not pause alike and collide again in lockstep. */
int64_t
db_retry_pause_ms(int attempt)
{
	return (int64_t)(1 + random_u32() % 10) * attempt;
}

/* Whether to rerun a transaction that ended with rc on its attempt-th
 * try (1-based): only deadlocks (and, without a wait limit, lock wait
 * timeouts) are rerun, at most DB_TX_ATTEMPTS times, after a short
 * random pause. */
int
db_retry_after(int rc, int attempt)
{
	int64_t ms;
	struct timespec ts;

	if (rc != DB_ERETRY || attempt >= DB_TX_ATTEMPTS)
		return 0;
	ms = db_retry_pause_ms(attempt);
	ts.tv_sec = (time_t)(ms / 1000);
	ts.tv_nsec = (long)(ms % 1000) * 1000000L;
	nanosleep(&ts, NULL);
	return 1;
}

/* Sends sql (one statement, or a whole transaction ending in COMMIT)
 * and reruns it while it ends in a deadlock or lock wait timeout; a
 * failure rolls back whatever it left open.  affected[i] as for
 * db_exec_many. */
int
db_exec_retry(struct db *db, const struct buf *sql, uint64_t *affected, size_t max, char *err)
{
	int64_t start = mono_ms();
	int rc, attempt = 0;

	do {
		if ((rc = db_exec_many(db, sql, affected, max, err)) == DB_OK)
			return DB_OK;
		db_rollback(db);
		/* Under a wait limit, a deadlock found only after a long wait
		 * is not rerun either: the caller tries again later. */
		if (db->wait_limit_ms > 0 && mono_ms() - start >= db->wait_limit_ms / 2)
			break;
	} while (db_retry_after(rc, ++attempt));
	return rc;
}

int
db_retryable(int rc)
{
	return rc == DB_EGONE || rc == DB_ERETRY || rc == DB_EWAIT;
}

/* Bounds every wait of this connection to about ms from the next
 * db_connect on (0: no bound beyond the configuration's): the worker's
 * leases depend on its single thread never waiting long for the server.
 * See setup_session for what is bounded and how. */
void
db_set_wait_limit(struct db *db, int64_t ms)
{
	db->wait_limit_ms = ms > 0 ? ms : 0;
}

int64_t
db_wait_limit(const struct db *db)
{
	return db->wait_limit_ms;
}

/* The server variable that bounds each statement's run time under the
 * wait limit ("max_statement_time" on MariaDB, "max_execution_time" on
 * MySQL, which covers SELECT only), or NULL when the server has none. */
const char *
db_statement_timeout(const struct db *db)
{
	return db->stmt_timeout;
}

/* Whole seconds, rounded up, at least 1. */
static unsigned
ceil_s(int64_t ms)
{
	return ms <= 1000 ? 1 : (unsigned)((ms + 999) / 1000);
}

/* The client's socket timeouts in seconds.  Under a wait limit they
 * only catch a server (or network) that stopped answering: the server
 * ends its own waits at the limit, so no answer a second after it (in
 * whole seconds, their unit) means nobody is answering. */
static void
client_timeouts(const struct db *db, unsigned *connect_s, unsigned *read_s)
{
	const struct db_conf *c = db->conf;

	*connect_s = ceil_s(c->connect_timeout_ms);
	*read_s = ceil_s(c->read_timeout_ms);
	if (db->wait_limit_ms > 0) {
		unsigned bound = ceil_s(db->wait_limit_ms) + 1;

		if (*connect_s > bound)
			*connect_s = bound;
		if (*read_s > bound)
			*read_s = bound;
	}
}

/* The longest one call on this connection may block: the client's read
 * timeout, which under a wait limit is just above it (a server that does
 * answer ends its own waits at the limit). */
int64_t
db_call_bound(const struct db *db)
{
	unsigned connect_s, read_s;

	client_timeouts(db, &connect_s, &read_s);
	return (int64_t)(read_s > connect_s ? read_s : connect_s) * 1000;
}

static void
set_options(struct db *db)
{
	const struct db_conf *c = db->conf;
	unsigned ct, rt;

	client_timeouts(db, &ct, &rt);

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
		return fail(db, err, "read max_allowed_packet");
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
		if (classify(db, mysql_errno(db->my)) == DB_EGONE)
			return fail(db, err, "set up session (statement timeout)");
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
static int
setup_session(struct db *db, char *err)
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
		return fail(db, err, "set up session");
	if (db->wait_limit_ms > 0 && (rc = set_statement_timeout(db, err)) != DB_OK)
		return rc;
	return read_max_packet(db, err);
}

/* Reads SHOW output of (name, value) rows into value (size n) for the
 * one name wanted; "" when the server has no such variable. */
static int
show_value(struct db *db, const char *sql, const char *name, char *value, size_t n, char *err)
{
	MYSQL_RES *res;
	MYSQL_ROW row;

	value[0] = '\0';
	if (mysql_query(db->my, sql) != 0 || (res = mysql_store_result(db->my)) == NULL)
		return fail(db, err, "read the node's state");
	while ((row = mysql_fetch_row(res)) != NULL)
		if (row[0] != NULL && row[1] != NULL && strcasecmp(row[0], name) == 0)
			snprintf(value, n, "%s", row[1]);
	mysql_free_result(res);
	return DB_OK;
}

/* On a Galera node (wsrep_on), whether it is fit for work: wsrep_ready
 * and Synced.  A joining, donor or non-primary node answers but refuses
 * or delays statements (error 1047), so it counts as unreachable
 * (DB_EGONE) and the caller goes on to the next host.  On a ready node the
 * session stops the server from rerunning by itself a statement whose
 * transaction another node's write aborted (wsrep_retry_autocommit): the
 * rerun would run outside our transaction, on rows this node may not yet
 * have seen change, and could claim a job another node holds.  jobq
 * reruns whole transactions itself. */
static int
check_ready(struct db *db, char *err)
{
	char on[16], ready[16], state[64];
	int rc;

	db->galera = 0;
	/* A server (or proxy) that refuses the SHOW is taken for no Galera
	 * node: only a lost connection fails the connect. */
	if ((rc = show_value(db, "SHOW GLOBAL VARIABLES LIKE 'wsrep_on'", "wsrep_on", on, sizeof on, err)) !=
	    DB_OK)
		return rc == DB_EGONE ? rc : DB_OK;
	if (strcasecmp(on, "ON") != 0)
		return DB_OK;
	db->galera = 1;
	if ((rc = show_value(db, "SHOW GLOBAL STATUS LIKE 'wsrep_ready'", "wsrep_ready", ready,
	         sizeof ready, err)) != DB_OK ||
	    (rc = show_value(db, "SHOW GLOBAL STATUS LIKE 'wsrep_local_state_comment'",
	         "wsrep_local_state_comment", state, sizeof state, err)) != DB_OK)
		return rc;
	if (strcasecmp(ready, "ON") != 0 || strcmp(state, "Synced") != 0) {
		errf(err, "%s is a Galera node not ready for work (wsrep_ready %s, state %s)", db->target,
		    *ready ? ready : "?", *state ? state : "?");
		db_disconnect(db);
		return DB_EGONE;
	}
	if (mysql_query(db->my, "SET SESSION wsrep_retry_autocommit = 0") != 0)
		return fail(db, err, "set up session (wsrep_retry_autocommit)");
	return DB_OK;
}

/* Connects to one host (NULL with the socket or the library's default). */
static int
connect_one(struct db *db, const char *host, unsigned port, int with_database, char *err)
{
	const struct db_conf *c = db->conf;
	int rc;

	db_disconnect(db);
	set_target(db, host, port);
	if ((db->my = mysql_init(NULL)) == NULL)
		fatal("mysql_init: out of memory");
	set_options(db);
	db->nonblock = 0;
#ifdef HAVE_MYSQL_REAL_QUERY_START
	if (db->waiter != NULL)
		db->nonblock = mysql_options(db->my, MYSQL_OPT_NONBLOCK, 0) == 0;
#endif
	if (mysql_real_connect(db->my, host, c->user, c->password, with_database ? c->database : NULL,
	        port, c->socket, CLIENT_FOUND_ROWS | CLIENT_MULTI_STATEMENTS) == NULL) {
		char what[400];

		snprintf(what, sizeof what, "connect to %s", db->target);
		rc = fail(db, err, what);
		db_disconnect(db);
		/* Refused credentials or an unknown database will not get better
		 * by retrying, but a server that is down will. */
		return rc == DB_EGONE ? DB_EGONE : DB_EFAIL;
	}
	db->thread_id = mysql_thread_id(db->my);
	if ((rc = setup_session(db, err)) != DB_OK)
		return rc;
	return check_ready(db, err);
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

/* Whether the server is a Galera node (read at connect). */
int
db_galera(const struct db *db)
{
	return db->galera;
}

static void
add_quoted(struct buf *b, const char *s, size_t len)
{
	size_t i;

	buf_reserve(b, len + 2);
	buf_addc(b, '\'');
	for (i = 0; i < len; i++) {
		switch (s[i]) {
		case '\0':
			buf_adds(b, "\\0");
			break;
		case '\n':
			buf_adds(b, "\\n");
			break;
		case '\r':
			buf_adds(b, "\\r");
			break;
		case '\\':
			buf_adds(b, "\\\\");
			break;
		case '\'':
			buf_adds(b, "\\'");
			break;
		case '"':
			buf_adds(b, "\\\"");
			break;
		case '\032':
			buf_adds(b, "\\Z");
			break;
		default:
			buf_addc(b, s[i]);
		}
	}
	buf_addc(b, '\'');
}

/* Bytes that s[0..len) takes inside the quotes of a %q or %b value:
 * what a statement that carries it grows by. */
size_t
db_quoted_len(const char *s, size_t len)
{
	size_t i, n = len;

	for (i = 0; i < len; i++)
		switch (s[i]) { /* the bytes add_quoted escapes */
		case '\0':
		case '\n':
		case '\r':
		case '\\':
		case '\'':
		case '"':
		case '\032':
			n++;
		}
	return n;
}

/* Escaping by hand is exact for utf8mb4 and ASCII (no multi-byte
 * character contains a quote or a backslash byte) and works on a closed
 * connection.  The session never sets NO_BACKSLASH_ESCAPES. */
static void
vsql(struct buf *b, const char *fmt, va_list ap)
{
	const char *p;

	for (p = fmt; *p != '\0'; p++) {
		const char *s;

		if (*p != '%') {
			buf_addc(b, *p);
			continue;
		}
		switch (*++p) {
		case 's':
			buf_adds(b, va_arg(ap, const char *));
			break;
		case 'q':
			s = va_arg(ap, const char *);
			if (s == NULL)
				buf_adds(b, "NULL");
			else
				add_quoted(b, s, strlen(s));
			break;
		case 'b':
			s = va_arg(ap, const char *);
			add_quoted(b, s, va_arg(ap, size_t));
			break;
		case 'd':
			buf_printf(b, "%d", va_arg(ap, int));
			break;
		case 'u':
			buf_printf(b, "%u", va_arg(ap, unsigned));
			break;
		case 'I':
			buf_printf(b, "%lld", (long long)va_arg(ap, int64_t));
			break;
		case 'U':
			buf_printf(b, "%llu", (unsigned long long)va_arg(ap, uint64_t));
			break;
		case '%':
			buf_addc(b, '%');
			break;
		default:
			fatal("db: bad conversion '%%%c' in \"%s\"", *p, fmt);
		}
	}
}

/* Appends formatted SQL to b (see the top of this file). */
void
db_sql(struct db *db, struct buf *b, const char *fmt, ...)
{
	va_list ap;

	(void)db;
	va_start(ap, fmt);
	vsql(b, fmt, ap);
	va_end(ap);
}

/* ---- calls that wait for the server ----
 *
 * With a waiter set (db_set_waiter), every call that talks to the server
 * goes through the client library's non-blocking interface: the library
 * says what it waits for on its socket, and the waiter sleeps on that
 * socket and on whatever else its program serves meanwhile (the worker:
 * its handlers' pipes), so that a commit's round trip and fsync never
 * hold up work that needs no database.  The waiter must not call into
 * this connection: a call made while one is in flight is a bug (fatal).
 * Timeouts are the library's own (the read and write timeouts set at
 * connect), passed back to it as MYSQL_WAIT_TIMEOUT: the failures look
 * exactly like those of the blocking calls.  Without a waiter, or with a
 * client library that has no non-blocking interface, the calls block. */
#ifdef HAVE_MYSQL_REAL_QUERY_START
static int
await(struct db *db, int status)
{
	int64_t deadline = -1;
	short events = 0;
	int fd = mysql_get_socket(db->my);

	if (status & MYSQL_WAIT_READ)
		events |= POLLIN;
	if (status & MYSQL_WAIT_WRITE)
		events |= POLLOUT;
	if (status & MYSQL_WAIT_EXCEPT)
		events |= POLLPRI;
	if (status & MYSQL_WAIT_TIMEOUT)
		deadline = mono_ms() + (int64_t)mysql_get_timeout_value_ms(db->my);
	for (;;) {
		int64_t now = mono_ms(), left = deadline < 0 ? -1 : deadline > now ? deadline - now : 0;
		short rev;
		int ready = 0;

		db->waiting = 1;
		rev = db->waiter(db->waiter_arg, fd, events, left > INT32_MAX ? INT32_MAX : (int)left);
		db->waiting = 0;
		if (rev & (POLLIN | POLLHUP | POLLERR | POLLNVAL))
			ready |= MYSQL_WAIT_READ;
		if (rev & (POLLOUT | POLLHUP | POLLERR | POLLNVAL))
			ready |= MYSQL_WAIT_WRITE;
		if (rev & POLLPRI)
			ready |= MYSQL_WAIT_EXCEPT;
		if ((ready &= status) != 0)
			return ready;
		if (deadline >= 0 && mono_ms() >= deadline)
			return MYSQL_WAIT_TIMEOUT;
	}
}
#endif

static void
not_waiting(const struct db *db)
{
	if (db->waiting)
		fatal("db: a call on a connection while one is in flight");
}

static int
my_query(struct db *db, const char *sql, unsigned long len)
{
	not_waiting(db);
#ifdef HAVE_MYSQL_REAL_QUERY_START
	if (db->nonblock && db->waiter != NULL) {
		int ret, st = mysql_real_query_start(&ret, db->my, sql, len);

		while (st != 0)
			st = mysql_real_query_cont(&ret, db->my, await(db, st));
		return ret;
	}
#endif
	return mysql_real_query(db->my, sql, len);
}

static MYSQL_RES *
my_store_result(struct db *db)
{
	not_waiting(db);
#ifdef HAVE_MYSQL_REAL_QUERY_START
	if (db->nonblock && db->waiter != NULL) {
		MYSQL_RES *ret;
		int st = mysql_store_result_start(&ret, db->my);

		while (st != 0)
			st = mysql_store_result_cont(&ret, db->my, await(db, st));
		return ret;
	}
#endif
	return mysql_store_result(db->my);
}

static int
my_next_result(struct db *db)
{
	not_waiting(db);
#ifdef HAVE_MYSQL_REAL_QUERY_START
	if (db->nonblock && db->waiter != NULL) {
		int ret, st = mysql_next_result_start(&ret, db->my);

		while (st != 0)
			st = mysql_next_result_cont(&ret, db->my, await(db, st));
		return ret;
	}
#endif
	return mysql_next_result(db->my);
}

/* Nonzero on failure, like mysql_commit (whose my_bool MySQL 8 no longer
 * has). */
static int
my_commit(struct db *db)
{
	not_waiting(db);
#ifdef HAVE_MYSQL_REAL_QUERY_START
	if (db->nonblock && db->waiter != NULL) {
		my_bool ret;
		int st = mysql_commit_start(&ret, db->my);

		while (st != 0)
			st = mysql_commit_cont(&ret, db->my, await(db, st));
		return ret != 0;
	}
#endif
	return mysql_commit(db->my) != 0;
}

static int
my_rollback(struct db *db)
{
	not_waiting(db);
#ifdef HAVE_MYSQL_REAL_QUERY_START
	if (db->nonblock && db->waiter != NULL) {
		my_bool ret;
		int st = mysql_rollback_start(&ret, db->my);

		while (st != 0)
			st = mysql_rollback_cont(&ret, db->my, await(db, st));
		return ret != 0;
	}
#endif
	return mysql_rollback(db->my) != 0;
}

/* Sets the waiter that the calls on this connection sleep in (see
 * above); takes effect from the next db_connect on.  NULL: they block. */
void
db_set_waiter(struct db *db, db_waiter *fn, void *arg)
{
	db->waiter = fn;
	db->waiter_arg = arg;
}

static int
run(struct db *db, const char *sql, size_t len, char *err)
{
	if (db->my == NULL) {
		errf(err, "not connected to %s", db->target);
		db->last_errno = CR_SERVER_GONE_ERROR;
		return DB_EGONE;
	}
	db->affected = 0;
	db->done = 0;
	if (my_query(db, sql, (unsigned long)len) != 0) {
		char what[200];
		size_t n = len < 60 ? len : 60;

		snprintf(what, sizeof what, "query \"%.*s%s\"", (int)n, sql, len > n ? "..." : "");
		return fail(db, err, what);
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
		MYSQL_RES *res = my_store_result(db);

		if (res == NULL && mysql_field_count(db->my) != 0)
			return fail(db, err, "read result");
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
		if ((status = my_next_result(db)) > 0) {
			char what[64];

			if (first_set != NULL && *first_set != NULL)
				mysql_free_result(*first_set), *first_set = NULL;
			snprintf(what, sizeof what, "statement %zu of a batch", i + 1);
			return fail(db, err, what);
		}
	} while (status == 0);
	return DB_OK;
}

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
	int rc = run(db, sql->data, sql->len, err);

	if (rc != DB_OK)
		return rc;
	return collect(db, NULL, affected, max, err);
}

/* Runs a statement that returns no rows. */
int
db_exec(struct db *db, char *err, const char *fmt, ...)
{
	struct buf b;
	va_list ap;
	int rc;

	buf_init(&b);
	va_start(ap, fmt);
	vsql(&b, fmt, ap);
	va_end(ap);
	rc = db_exec_buf(db, &b, err);
	buf_free(&b);
	return rc;
}

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
	vsql(&b, fmt, ap);
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

uint64_t
db_insert_id(const struct db *db)
{
	return db->my != NULL ? (uint64_t)mysql_insert_id(db->my) : 0;
}

int
db_begin(struct db *db, char *err)
{
	return db_exec(db, err, "START TRANSACTION");
}

/* A claim or a move counts only once COMMIT has succeeded: on Galera a
 * deadlock can be reported by the COMMIT itself. */
int
db_commit(struct db *db, char *err)
{
	if (db->my == NULL)
		return run(db, "", 0, err);
	if (my_commit(db) != 0)
		return fail(db, err, "commit");
	return DB_OK;
}

/* Rolls back, on paths that already failed.  When the ROLLBACK itself
 * fails (commands out of sync, a half-read result, a server error) the
 * connection is closed: the server then rolls back by itself, whereas a
 * transaction left open on a live connection would be committed, half
 * done, by the next START TRANSACTION -- a job's DELETE without its run
 * row, say.  Atomicity is worth a reconnect. */
void
db_rollback(struct db *db)
{
	if (db->my != NULL && my_rollback(db) != 0)
		db_disconnect(db);
}

size_t
db_res_rows(const struct db_res *r)
{
	return (size_t)mysql_num_rows(r->res);
}

/* The next row (NULL fields are NULL pointers), or NULL after the last. */
char **
db_res_next(struct db_res *r)
{
	return mysql_fetch_row(r->res);
}

/* Reads the rows again from the first. */
void
db_res_rewind(struct db_res *r)
{
	mysql_data_seek(r->res, 0);
}

/* Index of the column called name, or -1. */
int
db_res_column(struct db_res *r, const char *name)
{
	unsigned i, n = mysql_num_fields(r->res);
	MYSQL_FIELD *f = mysql_fetch_fields(r->res);

	for (i = 0; i < n; i++)
		if (strcasecmp(f[i].name, name) == 0)
			return (int)i;
	return -1;
}

const unsigned long *
db_res_lengths(struct db_res *r)
{
	return mysql_fetch_lengths(r->res);
}

/* One column of a result row read as a number.  SQL NULL, or text that
 * is not a whole number, gives dflt: a column may be NULL wherever the
 * schema does not forbid it, and a computed one (SUM over no rows,
 * TIMESTAMPDIFF of a zero date) even where it does, so readers never
 * hand a column to strtoull unchecked. */
uint64_t
db_col_u64(const char *v, uint64_t dflt)
{
	char *end;
	uint64_t x;

	if (v == NULL || *v == '\0' || *v == '-')
		return dflt;
	errno = 0;
	x = strtoull(v, &end, 10);
	return errno != 0 || (*end != '\0' && *end != '.') ? dflt : x;
}

int64_t
db_col_i64(const char *v, int64_t dflt)
{
	char *end;
	int64_t x;

	if (v == NULL || *v == '\0')
		return dflt;
	errno = 0;
	x = strtoll(v, &end, 10);
	return errno != 0 || (*end != '\0' && *end != '.') ? dflt : x;
}

void
db_res_free(struct db_res *r)
{
	if (r == NULL)
		return;
	mysql_free_result(r->res);
	free(r);
}
