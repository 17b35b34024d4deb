/* db_error.c -- the server's errors, recorded and classified.
 *
 * Every failed client call ends here: the error text says what was
 * being done, and the class (enum db_rc) tells the caller whether to
 * reconnect, rerun the transaction, try later, or give up. */
#include "config.h"

#include <errmsg.h>
#include <mysqld_error.h>

#include "db_int.h"

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

/* Records the server's error, closes a lost connection, and returns the
 * class. */
int
db_error_record(struct db *db, char *err, const char *what)
{
	int rc;

	db->last_errno = mysql_errno(db->my);
	rc = db_error_class(db, db->last_errno);
	errf(err, "%s: %s (error %u)", what, mysql_error(db->my), db->last_errno);
	if (rc == DB_EGONE && db->cancel != NULL && db->thread_id != 0 &&
	    (db->last_errno == CR_SERVER_LOST || db->last_errno == 2055))
		db->cancel(db, db->thread_id, err);
	if (rc == DB_EGONE)
		db_disconnect(db);
	return rc;
}
