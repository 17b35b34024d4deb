/* db_galera.c -- whether the server is a Galera node, and fit for work.
 *
 * Run by db_connect.c after the session set-up: a node that is not
 * ready counts as unreachable, so that the host list moves on. */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "db_int.h"

/* Reads SHOW output of (name, value) rows into value (size n) for the
 * one name wanted; "" when the server has no such variable. */
static int
show_value(struct db *db, const char *sql, const char *name, char *value, size_t n, char *err)
{
	MYSQL_RES *res;
	MYSQL_ROW row;

	value[0] = '\0';
	if (mysql_query(db->my, sql) != 0 || (res = mysql_store_result(db->my)) == NULL)
		return db_error_record(db, err, "read the node's state");
	while ((row = mysql_fetch_row(res)) != NULL)
		if (row[0] != NULL && row[1] != NULL && strcasecmp(row[0], name) == 0)
			snprintf(value, n, "%s", row[1]);
	mysql_free_result(res);
	return DB_OK;
}

/* On a Galera node (wsrep_on), whether it is fit for work: wsrep_ready
 * and Synced.  A joining, donor or non-primary node answers but refuses
 * or delays statements (error 1047), so it counts as unreachable
 * (DB_EGONE) and the caller goes on to the next host.  On a ready node the
 * session stops the server from rerunning by itself a statement whose
 * transaction another node's write aborted (wsrep_retry_autocommit): the
 * rerun would run outside our transaction, on rows this node may not yet
 * have seen change, and could claim a job another node holds.  jobq
 * reruns whole transactions itself. */
int
db_galera_check(struct db *db, char *err)
{
	char on[16], ready[16], state[64];
	int rc;

	db->galera = 0;
	/* A server (or proxy) that refuses the SHOW is taken for no Galera
	 * node: only a lost connection fails the connect. */
	if ((rc = show_value(db, "SHOW GLOBAL VARIABLES LIKE 'wsrep_on'", "wsrep_on", on, sizeof on, err)) !=
	    DB_OK)
		return rc == DB_EGONE ? rc : DB_OK;
	if (strcasecmp(on, "ON") != 0)
		return DB_OK;
	db->galera = 1;
	if ((rc = show_value(db, "SHOW GLOBAL STATUS LIKE 'wsrep_ready'", "wsrep_ready", ready, sizeof ready,
	         err)) != DB_OK ||
	    (rc = show_value(db, "SHOW GLOBAL STATUS LIKE 'wsrep_local_state_comment'",
	         "wsrep_local_state_comment", state, sizeof state, err)) != DB_OK)
		return rc;
	if (strcasecmp(ready, "ON") != 0 || strcmp(state, "Synced") != 0) {
		errf(err, "%s is a Galera node not ready for work (wsrep_ready %s, state %s)", db->target,
		    *ready ? ready : "?", *state ? state : "?");
		db_disconnect(db);
		return DB_EGONE;
	}
	if (mysql_query(db->my, "SET SESSION wsrep_retry_autocommit = 0") != 0)
		return db_error_record(db, err, "set up session (wsrep_retry_autocommit)");
	return DB_OK;
}

/* Whether the server is a Galera node (read at connect). */
int
db_galera(const struct db *db)
{
	return db->galera;
}

/* On a Galera node, makes the session's reads causal (on: each waits
 * until the node has applied what the cluster committed before it,
 * wsrep_sync_wait = 1) or puts back what the session had (off).  A node
 * applies what the others committed a moment later, so a read that
 * must see such a commit (a job enqueued through another node, an
 * outcome written through a node that died) sets it around itself.
 * Does nothing on any other server.  Turning it off after a failure,
 * pass a buffer of no interest as err. */
int
db_causal(struct db *db, int on, char *err)
{
	if (!db->galera)
		return DB_OK;
	return db_exec(db, err,
	    on ? "SET @jobq_sw = @@SESSION.wsrep_sync_wait, SESSION wsrep_sync_wait = 1"
	       : "SET SESSION wsrep_sync_wait = @jobq_sw");
}
