/* db_nb.c -- the client calls that wait for the server.
 *
 * db_exec.c sends statements and reads results through these.
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
#include "config.h"

#include <poll.h>

#include "db_int.h"

#ifdef HAVE_MYSQL_REAL_QUERY_START
/* Sleeps in the waiter until the socket is ready for what status asks
 * (or its timeout passed), and says what it is ready for. */
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

/* Whether a call on db is in flight, so that its waiter is running and
 * no other call may be made on it now. */
int
db_in_flight(const struct db *db)
{
	return db->waiting;
}

/* Refuses a call made from inside the waiter (see above). */
static void
not_waiting(const struct db *db)
{
	if (db->waiting)
		fatal("db: a call on a connection while one is in flight");
}

/* mysql_real_connect with the configuration's user, password and
 * socket: through the waiter too, so that a host that accepts but never
 * greets holds up nothing but this connection. */
MYSQL *
db_nb_connect(struct db *db, const char *host, const char *database, unsigned port, unsigned long flags)
{
	const struct db_conf *c = db->conf;

	not_waiting(db);
#ifdef HAVE_MYSQL_REAL_QUERY_START
	if (db->nonblock && db->waiter != NULL) {
		MYSQL *ret;
		int st = mysql_real_connect_start(
		    &ret, db->my, host, c->user, c->password, database, port, c->socket, flags);

		while (st != 0)
			st = mysql_real_connect_cont(&ret, db->my, await(db, st));
		return ret;
	}
#endif
	return mysql_real_connect(db->my, host, c->user, c->password, database, port, c->socket, flags);
}

/* mysql_real_query. */
int
db_nb_query(struct db *db, const char *sql, unsigned long len)
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

/* mysql_store_result. */
MYSQL_RES *
db_nb_store_result(struct db *db)
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

/* mysql_next_result. */
int
db_nb_next_result(struct db *db)
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
int
db_nb_commit(struct db *db)
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

/* Nonzero on failure, like mysql_rollback. */
int
db_nb_rollback(struct db *db)
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
