/* db_cancel.c -- stopping on the server a statement the client gave up on.
 *
 * The top of the db layer: it opens a second connection (db_connect.c)
 * and sends KILL QUERY (db_exec.c).  db_error.c reaches it through the
 * handle's cancel hook, which db_cancel_abandoned sets, so that the
 * files below never call up into this one. */
#include "config.h"

#include <mysqld_error.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "db_int.h"

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
	int rc, gone;

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
	gone = rc != DB_OK && db_errno(k) == ER_NO_SUCH_THREAD;
	db_free(k);
	/* KILL QUERY stops a statement still running; one that had ended
	 * (its answer lost on the way) stands, applied or not. */
	if (gone)
		snprintf(err + len, ERRSZ - len, "; its session had already ended on the server");
	else if (rc == DB_OK)
		snprintf(err + len, ERRSZ - len, "; the server was told to stop it, if it was still running");
	else
		snprintf(err + len, ERRSZ - len, "; stopping it on the server failed: %s", kerr);
}

/* With on set, a statement the client gives up on (read_timeout) is also
 * stopped on the server: see kill_abandoned(). */
void
db_cancel_abandoned(struct db *db, int on)
{
	db->cancel = on ? kill_abandoned : NULL;
}

/* Waits up to ms for the session with server id `id` (of a connection
 * that was lost) to end on the server, asking over db every 50 ms: 1
 * once it has (whatever transaction it had open has committed or rolled
 * back, so what db reads next is final), 0 if it is still there or db
 * cannot ask.  A lost connection's session can outlive it by a moment:
 * the server notices the broken socket and rolls back (or finishes a
 * COMMIT it had begun) in its own time. */
int
db_session_gone(struct db *db, unsigned long id, int64_t ms)
{
	int64_t until = mono_ms() + ms;
	struct timespec pause = { 0, 50 * 1000000L };
	char err[ERRSZ];
	int rc;

	for (;;) {
		struct db_res *r = db_query(
		    db, &rc, err, "SELECT COUNT(*) FROM information_schema.processlist WHERE id = %U", (uint64_t)id);
		char **row = r != NULL ? db_res_next(r) : NULL;
		int gone = row != NULL && row[0] != NULL && db_col_u64(row[0], 1) == 0;

		db_res_free(r);
		if (gone)
			return 1;
		if (r == NULL || mono_ms() >= until)
			return 0;
		nanosleep(&pause, NULL);
	}
}

/* Before reading whether a commit whose answer was lost (db_unsure) was
 * applied: waits up to ms for the session that sent it to end, when db
 * is connected to the same server again (a session id is that server's
 * own), so that the commit has finished one way or the other.  On a
 * Galera node a session outlives its connection for seconds at times: a
 * COMMIT held by flow control (a node joining) replicates and commits
 * once it is let go, and a read made meanwhile finds nothing of it.
 * DB_OK once it ended, or when it was on another server (what of its
 * commit reached the cluster, a causal read sees); DB_EWAIT, err saying
 * so, while it is still there: the caller asks again later. */
int
db_lost_settle(struct db *db, int64_t ms, char *err)
{
	unsigned long id = db->lost_thread;

	if (id == 0)
		return DB_OK;
	if (db->port == db->lost_port && strcmp(db->host, db->lost_host) == 0 && !db_session_gone(db, id, ms)) {
		errf(err, "session %lu, which sent a commit whose answer was lost, is still running on %s", id,
		    db->target);
		return DB_EWAIT;
	}
	db->lost_thread = 0;
	return DB_OK;
}
