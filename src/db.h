/* db.h -- one connection to MySQL/MariaDB and the SQL helpers on it. */
#ifndef JOBQ_DB_H
#define JOBQ_DB_H

#include <stddef.h>
#include <stdint.h>

#include "conf.h"
#include "util.h"

/* Results of every db_* call that talks to the server.  Callers branch on
 * the class, never on the server's error number. */
enum db_rc {
	DB_OK = 0,
	DB_EGONE = -1,  /* connection lost or server unreachable: reconnect, retry */
	DB_ERETRY = -2, /* deadlock or lock wait timeout: rerun the transaction */
	DB_EFAIL = -3,  /* anything else: the statement is wrong for this server */
	DB_EWAIT = -4,  /* a wait reached the session's wait limit (a lock held
	                 * elsewhere, a slow statement): try again later, not at once */
};

struct db;
struct db_res;

struct db *db_new(const struct db_conf *conf);
void db_free(struct db *db);
void db_thread_begin(void);
void db_thread_end(void);
int db_connect(struct db *db, int with_database, char *err);
int db_connect_step(struct db *db, int with_database, int *more, char *err);
int db_connected(const struct db *db);
void db_disconnect(struct db *db);
const char *db_target(const struct db *db);
unsigned long db_session_id(const struct db *db);
int db_galera(const struct db *db);
int db_causal(struct db *db, int on, char *err);
size_t db_max_packet(const struct db *db);
void db_cancel_abandoned(struct db *db, int on);
int db_session_gone(struct db *db, unsigned long id, int64_t ms);
int db_lost_settle(struct db *db, int64_t ms, char *err);
void db_set_wait_limit(struct db *db, int64_t ms);
int64_t db_wait_limit(const struct db *db);
int64_t db_call_bound(const struct db *db);
const char *db_statement_timeout(const struct db *db);
size_t db_quoted_len(const char *s, size_t len);
const char *db_ascii(const char *s);

int db_exec(struct db *db, char *err, const char *fmt, ...);
struct db_res *db_query(struct db *db, int *rc, char *err, const char *fmt, ...);
void db_sql(struct db *db, struct buf *b, const char *fmt, ...);
/* The length of the first statement of sql[0..len), up to its ';' (db_sql.c). */
size_t db_stmt_len(const char *sql, size_t len);
int db_exec_buf(struct db *db, const struct buf *sql, char *err);
int db_exec_many(struct db *db, const struct buf *sql, uint64_t *affected, size_t max, char *err);
int db_exec_many_rows(struct db *db, const struct buf *sql, uint64_t *affected, size_t max, struct db_res **rows,
    char *err);
struct db_res *db_query_buf(struct db *db, const struct buf *sql, int *rc, char *err);
uint64_t db_affected(const struct db *db);
size_t db_statements_done(const struct db *db);
uint64_t db_insert_id(const struct db *db);
unsigned db_errno(const struct db *db);
int db_unsure(const struct db *db);

int db_begin(struct db *db, char *err);
int db_begin_read(struct db *db, char *err);
int db_commit(struct db *db, char *err);
void db_rollback(struct db *db);

size_t db_res_rows(const struct db_res *r);
char **db_res_next(struct db_res *r);
void db_res_rewind(struct db_res *r);
const unsigned long *db_res_lengths(struct db_res *r);
int db_res_column(struct db_res *r, const char *name);
uint64_t db_col_u64(const char *v, uint64_t dflt);
int64_t db_col_i64(const char *v, int64_t dflt);
void db_res_free(struct db_res *r);

/* Reruns of a transaction that deadlocked: on Galera several writers
 * lose certification races in a row now and then. */
#define DB_TX_ATTEMPTS 8

int db_retryable(int rc);
int db_retry_after(int rc, int attempt);
/* Sleeps until fd has one of events, or timeout_ms (-1: no limit), or
 * earlier; returns fd's revents (0: none yet).  See db_set_waiter. */
typedef short db_waiter(void *arg, int fd, short events, int timeout_ms);
void db_set_waiter(struct db *db, db_waiter *fn, void *arg);
int db_in_flight(const struct db *db);
int64_t db_retry_pause_ms(int attempt);
int db_exec_retry(struct db *db, const struct buf *sql, uint64_t *affected, size_t max, char *err);
int db_exec_retry_rows(struct db *db, const struct buf *sql, uint64_t *affected, size_t max, struct db_res **rows,
    char *err);

#endif
