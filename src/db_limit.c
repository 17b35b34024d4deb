/* db_limit.c -- the wait limit: how long one call on a connection may wait.
 *
 * The worker's leases depend on its single thread never waiting long for
 * the server.  The limit is set here; db_session.c applies it to the
 * server's own waits at connect, and the client's socket timeouts
 * (db_limit_timeouts) catch a server that stopped answering. */
#include "config.h"

#include "db_int.h"

/* Bounds every wait of this connection to about ms from the next
 * db_connect on (0: no bound beyond the configuration's): the worker's
 * leases depend on its single thread never waiting long for the server.
 * See setup_session for what is bounded and how. */
void
db_set_wait_limit(struct db *db, int64_t ms)
{
	db->wait_limit_ms = ms > 0 ? ms : 0;
}

/* The wait limit set, in ms (0: none). */
int64_t
db_wait_limit(const struct db *db)
{
	return db->wait_limit_ms;
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
void
db_limit_timeouts(const struct db *db, unsigned *connect_s, unsigned *read_s)
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

	db_limit_timeouts(db, &connect_s, &read_s);
	return (int64_t)(read_s > connect_s ? read_s : connect_s) * 1000;
}
