/* worker_conn.c -- step 2 of the worker's loop: the database connection
 * lost and restored.  A lost connection is logged once and retried with
 * a capped backoff; its restoration renews leases and writes at once. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "duration.h"
#include "log.h"
#include "metrics.h"
#include "worker_int.h"

#define RECONNECT_MIN_MS 100
#define RECONNECT_MAX_MS 5000

/* Notes a failed database call: a lost connection starts the reconnect
 * cycle (logged once), anything else is only logged. */
void
conn_failed(struct worker *w, int rc, const char *what, const char *err)
{
	metrics_db_error(rc);
	if (rc == DB_EGONE || !db_connected(w->db)) {
		if (w->db_up) {
			log_warn("database connection lost during %s: %s; reconnecting", what, err);
			w->db_up = 0;
			w->down_since = mono_ms();
			w->reconnect_delay = RECONNECT_MIN_MS;
			w->reconnect_at = w->down_since + RECONNECT_MIN_MS;
		}
		db_disconnect(w->db);
		return;
	}
	log_error("%s: %s", what, err);
}

/* Step 2: while the connection is lost, tries again when the backoff
 * allows (100 ms doubling to 5 s), logging each new error once; once it
 * is back, leases, writes and polls are due at once.  One host of a
 * host list per turn, the next on the next turn: between them
 * keep_time stops the handlers whose leases end, however many hosts
 * fail to answer (each connect is bounded by the wait limit, and goes
 * through the waiter, which keeps time too, when the client library
 * can). */
void
conn_reconnect(struct worker *w, int64_t now)
{
	char err[ERRSZ];
	int more;

	if (w->db_up || now < w->reconnect_at)
		return;
	if (db_connect_step(w->db, 1, &more, err) == DB_OK) {
		char d[32];

		duration_format(mono_ms() - w->down_since, d, sizeof d);
		log_info("database connection restored after %s (to %s)", d, db_target(w->db));
		w->db_up = 1;
		w->next_heartbeat = now; /* renew leases at once */
		w->next_write = now;
		w->next_poll = now;
		w->db_err[0] = '\0';
		return;
	}
	if (more)
		return; /* the next host on the next turn */
	if (strcmp(err, w->db_err) != 0) {
		log_warn("reconnect: %s", err);
		snprintf(w->db_err, sizeof w->db_err, "%s", err);
	}
	w->reconnect_delay *= 2;
	if (w->reconnect_delay > RECONNECT_MAX_MS)
		w->reconnect_delay = RECONNECT_MAX_MS;
	w->reconnect_at = now + w->reconnect_delay;
}
