/* serve_thread.c -- the database connection of each of the dashboard's
 * threads, part of the HTTP layer below the page handlers.
 *
 * libmicrohttpd runs a small pool of threads; each answers its requests
 * one at a time with a database connection of its own (thread-local,
 * opened on first use, closed when the thread ends), so a slow page does
 * not hold up the others.  The overview's refresher thread
 * (serve_overview.c) has one the same way. */
#include "config.h"

#include <pthread.h>

#include "log.h"
#include "serve_thread.h"

static pthread_key_t db_key;

static void
db_key_free(void *db)
{
	db_free(db);
}

/* Makes the thread-local slot; called once by serve_run before any
 * thread starts.  0, or -1 when the system is out of keys. */
int
serve_thread_init(void)
{
	return pthread_key_create(&db_key, db_key_free) != 0 ? -1 : 0;
}

/* Drops the slot once every thread has stopped. */
void
serve_thread_end(void)
{
	pthread_key_delete(db_key);
}

/* This thread's database connection, connected and answering; NULL
 * (logged) when the server cannot be reached.  A connection that died
 * while idle (server restart, wait_timeout, KILL) is found by a no-op
 * round trip and opened again, so it costs no request a 500.  Each
 * answer is noted with serve_db_mark, so the dashboard knows when an
 * outage began and when it ended. */
struct db *
serve_thread_db(struct serve *s)
{
	struct db *db = pthread_getspecific(db_key);
	char err[ERRSZ];

	if (db == NULL) {
		db = db_new(&s->conf->db);
		pthread_setspecific(db_key, db);
	}
	if (db_connected(db) && db_exec(db, err, "DO 1") != DB_OK)
		db_disconnect(db);
	if (!db_connected(db) && db_connect(db, 1, err) != DB_OK) {
		log_debug("serve: %s", err); /* serve_db_mark logs the outage once */
		serve_db_mark(s, 0, err);
		return NULL;
	}
	serve_db_mark(s, 1, NULL);
	return db;
}
