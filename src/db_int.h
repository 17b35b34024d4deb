/* db_int.h -- the connection's state, shared by the db*.c files only.
 *
 * Every other file reaches a connection through db.h.  The functions
 * here are the db layer's own steps, each in the file its prefix names. */
#ifndef JOBQ_DB_INT_H
#define JOBQ_DB_INT_H

#include <mysql.h>
#include <stdarg.h>

#include "db.h"

/* Stops on the server the statement that connection `thread` runs, and
 * adds what happened to err (db_cancel.c sets it: see
 * db_cancel_abandoned). */
typedef void db_canceller(struct db *db, unsigned long thread, char *err);

struct db {
	const struct db_conf *conf;
	MYSQL *my;
	uint64_t affected; /* rows changed by the first statement of the last call */
	size_t done;       /* statements of the last call that completed */
	unsigned last_errno;
	int commits;  /* what was sent last may commit a change (db_exec.c's commits()) */
	int unsure;   /* the answer to that was lost: it may have been applied (db_unsure) */
	size_t max_packet;        /* the server's max_allowed_packet, read at connect */
	unsigned long thread_id;  /* the server's id of this connection; 0: none */
	db_canceller *cancel;     /* see db_cancel_abandoned(); NULL: off */
	int64_t wait_limit_ms;    /* 0: the server's and the config's own limits */
	const char *stmt_timeout; /* the variable that bounds statements, or NULL */
	int galera;               /* the server is a Galera node (wsrep_on) */
	int stale_triggers;       /* the server's cached jobs has triggers that
	                           * failed to load: flush it (db_error.c) */
	db_waiter *waiter;        /* see db_set_waiter(); NULL: calls block */
	void *waiter_arg;
	int nonblock;   /* this connection was opened with a waiter */
	int waiting;    /* inside a waiter: no call may start */
	char host[256]; /* the host of the list we are (or were last) on */
	unsigned port;
	/* db_connect_step's round through the host list: the next host to
	 * try, and what the hosts tried so far answered. */
	size_t next_host;
	int round_gone;
	char round_err[ERRSZ];
	char target[300];
	/* The session that sent a commit whose answer was lost (unsure),
	 * and its server: db_lost_settle waits for it to end.  0: none. */
	unsigned long lost_thread;
	char lost_host[256];
	unsigned lost_port;
};

struct db_res {
	MYSQL_RES *res;
};

/* db.c: the handle */
void db_set_target(struct db *db, const char *host, unsigned port);

/* db_error.c: the server's errors, classified */
int db_error_class(const struct db *db, unsigned e);
int db_error_record(struct db *db, char *err, const char *what);
void db_mend_triggers(struct db *db);

/* db_limit.c: the wait limit */
void db_limit_timeouts(const struct db *db, unsigned *connect_s, unsigned *read_s);

/* db_session.c and db_galera.c: set-up after connecting */
int db_session_setup(struct db *db, char *err);
int db_galera_check(struct db *db, char *err);

/* db_sql.c: the SQL formatting language */
void db_sql_va(struct buf *b, const char *fmt, va_list ap);

/* db_nb.c: the client calls that wait for the server */
MYSQL *db_nb_connect(struct db *db, const char *host, const char *database, unsigned port,
    unsigned long flags);
int db_nb_query(struct db *db, const char *sql, unsigned long len);
MYSQL_RES *db_nb_store_result(struct db *db);
int db_nb_next_result(struct db *db);
int db_nb_commit(struct db *db);
int db_nb_rollback(struct db *db);

#endif
