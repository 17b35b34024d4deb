/* db_retry.c -- rerunning a transaction that deadlocked, and db_exec,
 * which reruns a statement that is a transaction of its own.
 *
 * On Galera several writers lose certification races in a row now and
 * then; on any server two claims can deadlock.  Only those failures are
 * rerun, after a short random pause, and never past the wait limit. */
#include "config.h"

#include <stdarg.h>
#include <time.h>

#include "db_int.h"

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
	return db_exec_retry_rows(db, sql, affected, max, NULL, err);
}

/* db_exec_retry, where one statement may return rows (rows not NULL):
 * *rows gets those of the run that succeeded, or NULL (as for
 * db_exec_many_rows). */
int
db_exec_retry_rows(struct db *db, const struct buf *sql, uint64_t *affected, size_t max, struct db_res **rows,
    char *err)
{
	int64_t start = mono_ms();
	int rc, attempt = 0;

	do {
		rc = db_exec_many_rows(db, sql, affected, max, rows, err);
		if (rc == DB_OK)
			return DB_OK;
		db_rollback(db);
		/* Under a wait limit, a deadlock found only after a long wait
		 * is not rerun either: the caller tries again later. */
		if (db->wait_limit_ms > 0 && mono_ms() - start >= db->wait_limit_ms / 2)
			break;
	} while (db_retry_after(rc, ++attempt));
	return rc;
}

/* Whether a call that ended with rc may succeed when tried again later. */
int
db_retryable(int rc)
{
	return rc == DB_EGONE || rc == DB_ERETRY || rc == DB_EWAIT;
}

/* Runs a statement that returns no rows.  Outside a transaction the
 * statement is a transaction of its own, and is rerun whole, as
 * db_exec_retry reruns one, when it deadlocked or, on Galera, lost a
 * certification race to another node's write (1213): jobq turns the
 * server's own rerun off (db_galera.c), which would also rerun a piece
 * of a claim.  Only when nothing of it ran: of statements sent together
 * outside a transaction, each one before a failure committed on its
 * own.  Inside a transaction the caller reruns the whole of it. */
int
db_exec(struct db *db, char *err, const char *fmt, ...)
{
	struct buf b;
	va_list ap;
	int64_t start = mono_ms();
	int rc, attempt = 0, lone = db->my != NULL && !(db->my->server_status & SERVER_STATUS_IN_TRANS);

	buf_init(&b);
	va_start(ap, fmt);
	db_sql_va(&b, fmt, ap);
	va_end(ap);
	do {
		rc = db_exec_buf(db, &b, err);
		if (!lone || db->done > 0 || (db->wait_limit_ms > 0 && mono_ms() - start >= db->wait_limit_ms / 2))
			break;
	} while (db_retry_after(rc, ++attempt));
	buf_free(&b);
	return rc;
}
