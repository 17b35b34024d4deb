/* db_error.c -- the server's errors, recorded and classified.
 *
 * Every failed client call ends here: the error text says what was
 * being done, and the class (enum db_rc) tells the caller whether to
 * reconnect, rerun the transaction, try later, or give up. */
#include "config.h"

#include <errmsg.h>
#include <mysqld_error.h>
#include <string.h>

#include "db_int.h"

/* Whether the last failure lost the answer to something that may have
 * committed a change (db_exec.c's commits(): a write sent outside a
 * transaction, a COMMIT, a batch that holds one; not a read): the server
 * may have applied it before the connection died, so "nothing was
 * written" cannot be said. */
int
db_unsure(const struct db *db)
{
	return db->unsure;
}

/* The server's error number of the last failed call (0 after success). */
unsigned
db_errno(const struct db *db)
{
	return db->last_errno;
}

#define ER_STATEMENT_TIMEOUT_MARIADB 1969 /* max_statement_time exceeded */
#define ER_QUERY_TIMEOUT_MYSQL 3024       /* max_execution_time exceeded */

/* The class of the server's (or the client library's) error e. */
int
db_error_class(const struct db *db, unsigned e)
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

/* Whether the last error says that a cached copy of a table holds
 * triggers that failed to load.  The server parses a table's triggers
 * when a statement opens the table.  On a Galera node (MariaDB 10.11), a
 * statement killed meanwhile (KILL QUERY, or the abort of a local
 * transaction that lost to a replicated one) has that parse cut short,
 * which the server takes for a body that does not parse ("Query was
 * empty", or a syntax error anywhere in it: error 1064), and it keeps
 * that copy of the table in its table cache: every later statement
 * handed that copy fails the same way until the table is flushed.  The
 * trigger text on disk is sound, so reopening the table mends it. */
static int
stale_triggers(struct db *db)
{
	return db->last_errno == ER_PARSE_ERROR &&
	    strstr(mysql_error(db->my), "has an error in its body") != NULL;
}

/* Drops this server's cached copies of jobs and failed_jobs (the tables
 * jobq gives triggers, sql/010 and sql/026), so that the next statement
 * reopens them and loads their triggers again.  Only outside a
 * transaction: FLUSH commits an open one.  LOCAL keeps it off the binary
 * log and, on Galera, on this node (the cache is each node's own).  The FLUSH waits for the transactions that
 * have either open elsewhere: at most 10 s (or the session's shorter lock
 * wait), then the rerun meets the copy again.  It needs the RELOAD right;
 * without it the rerun fails as before, saying so.  The calls are raw, so
 * that the error being reported stays the connection's last one. */
void
db_mend_triggers(struct db *db)
{
	static const char *const steps[] = {
		"SET @jobq_lwt = @@SESSION.lock_wait_timeout, "
		"SESSION lock_wait_timeout = LEAST(@@SESSION.lock_wait_timeout, 10)",
		"FLUSH LOCAL TABLES jobs, failed_jobs",
		"SET SESSION lock_wait_timeout = @jobq_lwt",
	};
	size_t i;

	if (!db->stale_triggers)
		return;
	db->stale_triggers = 0;
	for (i = 0; i < ARRAY_LEN(steps) && db->my != NULL; i++)
		(void)db_nb_query(db, steps[i], (unsigned long)strlen(steps[i]));
}

/* Records the server's error, closes a lost connection, and returns the
 * class.  A table whose cached triggers failed to load (stale_triggers)
 * is mended now when no transaction is open, else by the rollback
 * (db_rollback), and the transaction is to be rerun. */
int
db_error_record(struct db *db, char *err, const char *what)
{
	int rc, stale, lost;

	db->last_errno = mysql_errno(db->my);
	rc = db_error_class(db, db->last_errno);
	/* The connection went while a statement was out: the server may
	 * have run it (2055: lost at a socket call). */
	lost = rc == DB_EGONE && (db->last_errno == CR_SERVER_LOST || db->last_errno == 2055);
	db->unsure = lost && db->commits;
	if (db->unsure) {
		db->lost_thread = db->thread_id;
		memcpy(db->lost_host, db->host, sizeof db->lost_host);
		db->lost_port = db->port;
	}
	stale = stale_triggers(db);
	errf(err, "%s: %s (error %u%s)", what, mysql_error(db->my), db->last_errno,
	    stale ? "; a statement killed while it loaded them left the triggers broken in the "
	            "server's table cache: jobq flushes the table, which needs the RELOAD right, "
	            "and reruns"
	          : "");
	if (stale) {
		db->stale_triggers = 1; /* until mended, whatever fails meanwhile */
		if (!(db->my->server_status & SERVER_STATUS_IN_TRANS))
			db_mend_triggers(db);
		return DB_ERETRY;
	}
	if (lost && db->cancel != NULL && db->thread_id != 0)
		db->cancel(db, db->thread_id, err);
	if (rc == DB_EGONE)
		db_disconnect(db);
	return rc;
}
