/* schema.c -- create and upgrade the jobq tables.
 *
 * The migrations are the files sql/NNN-*.sql, compiled into the binary
 * (schema_sql.c), so an installed jobq needs no data files to set up its
 * database.  jobq_schema records which versions were applied.  Two `jobq
 * init` running at once on one server serialise on a named lock.  On a
 * Galera cluster the lock does not reach the other nodes: two inits there
 * run the same migration side by side (the cluster orders their DDL), and
 * the later one's statement fails as a duplicate of the earlier one's
 * (table, column, key or trigger exists) or its version row does; that
 * init then waits for the other's version row and counts the migration
 * as done. */
#include "config.h"

#include <mysqld_error.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "schema.h"

unsigned
schema_latest(void)
{
	return schema_migrations[schema_nmigrations - 1].version;
}

/* The applied version: 0 when the schema was never installed.  On a
 * Galera node the read first waits for the node to apply what the
 * cluster has committed (wsrep_sync_wait): a `jobq init` that has just
 * returned on another node must not look undone here. */
int
schema_version(struct db *db, unsigned *version, char *err)
{
	struct db_res *r;
	char **row;
	int rc;

	*version = 0;
	r = db_query(db, &rc, err,
	    db_galera(db) ? "SET @jobq_sw = @@wsrep_sync_wait, SESSION wsrep_sync_wait = 1;"
	                    "SELECT COALESCE(MAX(version), 0) FROM jobq_schema;"
	                    "SET SESSION wsrep_sync_wait = @jobq_sw"
	                  : "SELECT COALESCE(MAX(version), 0) FROM jobq_schema");
	if (r == NULL)
		return db_errno(db) == ER_NO_SUCH_TABLE ? DB_OK : rc;
	if ((row = db_res_next(r)) != NULL && row[0] != NULL)
		*version = (unsigned)strtoul(row[0], NULL, 10);
	db_res_free(r);
	return DB_OK;
}

/* Replaces err with what to grant or set when a trigger could not be
 * made for want of a right: the server's message names neither the
 * migration nor the remedy. */
static void
trigger_hint(struct db *db, const char *database, const struct migration *m, const char *stmt, char *err)
{
	const char *s = stmt + strspn(stmt, " \n");

	while (strncmp(s, "--", 2) == 0 && strchr(s, '\n') != NULL)
		s = strchr(s, '\n') + 1;
	if (strncmp(s, "CREATE TRIGGER", 14) != 0 && strncmp(s, "DROP TRIGGER", 12) != 0)
		return;
	if (db_errno(db) == ER_BINLOG_CREATE_ROUTINE_NEED_SUPER)
		errf(err,
		    "%s: the server logs binary and the user lacks SUPER, so it may not create triggers: "
		    "set log_bin_trust_function_creators = 1 on the server (SET GLOBAL, and in its "
		    "configuration), or run init as a user with SUPER (error %u)",
		    m->name, ER_BINLOG_CREATE_ROUTINE_NEED_SUPER);
	else if (db_errno(db) == ER_TABLEACCESS_DENIED_ERROR ||
	    db_errno(db) == ER_SPECIFIC_ACCESS_DENIED_ERROR)
		errf(err,
		    "%s: creating the triggers on jobs needs the TRIGGER right: GRANT TRIGGER ON `%s`.* "
		    "TO the user init runs as ('jobq init --print-grants' prints it) (error %u)",
		    m->name, database, db_errno(db));
}

/* Runs each statement of one migration; statements end with ';' at the
 * end of a line. */
static int
apply(struct db *db, const char *database, const struct migration *m, char *err)
{
	const char *p = m->sql;
	struct buf stmt;
	int rc = DB_OK;

	buf_init(&stmt);
	while (*p != '\0' && rc == DB_OK) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		int last = len > 0 && p[len - 1] == ';';

		buf_add(&stmt, p, len);
		buf_addc(&stmt, '\n');
		p += len + (nl != NULL);
		if (last) {
			if ((rc = db_exec_buf(db, &stmt, err)) != DB_OK)
				trigger_hint(db, database, m, stmt.data, err);
			buf_reset(&stmt);
		}
	}
	buf_reset(&stmt);
	/* IGNORE and the rerun: another node's init may record it first. */
	db_sql(
	    db, &stmt, "INSERT IGNORE INTO jobq_schema (version, name) VALUES (%u, %q)", m->version, m->name);
	if (rc == DB_OK)
		rc = db_exec_retry(db, &stmt, NULL, 0, err);
	buf_free(&stmt);
	return rc;
}

/* Copies into stmt the first statement of migration version that begins
 * with start (after its comment lines): for a statement jobq reruns
 * outside init, so that it exists once.  -1 when there is none. */
int
schema_statement(unsigned version, const char *start, struct buf *stmt)
{
	const char *p = NULL, *first = NULL, *nl;
	size_t len;
	unsigned i;

	for (i = 0; i < schema_nmigrations; i++)
		if (schema_migrations[i].version == version)
			p = schema_migrations[i].sql;
	for (; p != NULL && *p != '\0'; p = nl != NULL ? nl + 1 : p + len) {
		nl = strchr(p, '\n');
		len = nl != NULL ? (size_t)(nl - p) : strlen(p);
		if (first == NULL && len > 0 && strncmp(p, "--", 2) != 0)
			first = p;
		if (len == 0 || p[len - 1] != ';')
			continue;
		if (first != NULL && strncmp(first, start, strlen(start)) == 0) {
			buf_reset(stmt);
			buf_add(stmt, first, (size_t)(p + len - 1 - first));
			return 0;
		}
		first = NULL;
	}
	return -1;
}

/* Whether a statement failed with err_no because another init made the
 * same change first, or (on Galera) because another node's init ran its
 * DDL in the cluster's total order over ours: the node aborts a local
 * statement that holds a lock such DDL needs, as a deadlock or as an
 * interrupted query (1317; seen with two inits creating the counting
 * triggers on jobs while the other altered it). */
static int
duplicate_change(unsigned err_no)
{
	switch (err_no) {
	case ER_TABLE_EXISTS_ERROR:
	case ER_DUP_FIELDNAME:
	case ER_DUP_KEYNAME:
	case ER_DUP_ENTRY:
	case ER_CANT_DROP_FIELD_OR_KEY:
	case ER_TRG_ALREADY_EXISTS:
	case ER_LOCK_DEADLOCK:
	case ER_QUERY_INTERRUPTED:
		return 1;
	default:
		return 0;
	}
}

/* Waits up to 10 s for another init's row for version (its DDL is done
 * by then, the row comes right after it). */
static int
applied_elsewhere(struct db *db, unsigned version)
{
	struct timespec tick = { 0, 100000000L };
	char ignored[ERRSZ];
	unsigned v;
	int i;

	for (i = 0; i < 100; i++) {
		if (schema_version(db, &v, ignored) != DB_OK)
			return 0;
		if (v >= version)
			return 1;
		nanosleep(&tick, NULL);
	}
	return 0;
}

static int
lock(struct db *db, int take, char *err)
{
	struct db_res *r;
	char **row;
	int rc, got = 0;

	r = db_query(db, &rc, err,
	    take ? "SELECT GET_LOCK(CONCAT('jobq.init.', DATABASE()), 60)"
	         : "SELECT RELEASE_LOCK(CONCAT('jobq.init.', DATABASE()))");
	if (r == NULL)
		return rc;
	if ((row = db_res_next(r)) != NULL && row[0] != NULL)
		got = strcmp(row[0], "1") == 0;
	db_res_free(r);
	if (take && !got) {
		errf(err, "another 'jobq init' has held the schema lock for 60 s");
		return DB_EFAIL;
	}
	return DB_OK;
}

/* On Galera, GET_LOCK does not reach the other nodes, and two inits
 * that create the same trigger at once on two nodes can hang the node
 * for good (its applier waits for the trigger's metadata lock, which the
 * local CREATE TRIGGER holds while it waits to run in total order).  So
 * inits there take turns through a row: version 0 of jobq_schema, which
 * no migration uses (versions start at 1, and MAX(version) ignores it).
 * The insert that commits first holds it; the other fails with a
 * duplicate key (or at certification, as a deadlock) and waits for the
 * row to go, up to 120 s; a row older than that was left by an init
 * that died, and is taken over. */
#define CLUSTER_LOCK_S 120
static int
cluster_lock(struct db *db, int take, char *err)
{
	struct timespec tick = { 0, 100000000L };
	int i, rc;

	if (!db_galera(db))
		return DB_OK;
	if (!take)
		return db_exec(db, err,
		    "DELETE FROM jobq_schema WHERE version = 0 AND name = CONCAT('init lock ', "
		    "CONNECTION_ID(), '@', @@hostname, ':', @@port)");
	for (i = 0; i < CLUSTER_LOCK_S * 10; i++) {
		rc = db_exec(db, err,
		    "INSERT INTO jobq_schema (version, name) VALUES (0, CONCAT('init lock ', "
		    "CONNECTION_ID(), '@', @@hostname, ':', @@port))");
		if (rc == DB_OK)
			return DB_OK;
		if (db_errno(db) != ER_DUP_ENTRY && db_errno(db) != ER_LOCK_DEADLOCK &&
		    db_errno(db) != ER_ERROR_DURING_COMMIT)
			return rc;
		if ((rc = db_exec(db, err,
		         "DELETE FROM jobq_schema WHERE version = 0 AND applied_at < UTC_TIMESTAMP(6) - "
		         "INTERVAL %d SECOND",
		         CLUSTER_LOCK_S)) != DB_OK &&
		    !db_retryable(rc))
			return rc;
		nanosleep(&tick, NULL);
	}
	errf(err, "another 'jobq init' in the cluster has held the schema lock for %d s", CLUSTER_LOCK_S);
	return DB_EFAIL;
}

/* Brings the schema up to the latest version; *from and *to say what it
 * did.  A schema newer than this binary is an error. */
int
schema_init(struct db *db, const char *database, unsigned *from, unsigned *to, char *err)
{
	unsigned i;
	int rc, locked = 0;

	if ((rc = lock(db, 1, err)) != DB_OK)
		return rc;
	rc = db_exec(db, err,
	    "CREATE TABLE IF NOT EXISTS jobq_schema ("
	    " version INT UNSIGNED NOT NULL PRIMARY KEY,"
	    " name VARCHAR(255) NOT NULL,"
	    " applied_at DATETIME(6) NOT NULL DEFAULT (UTC_TIMESTAMP(6))"
	    ") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4");
	if (rc == DB_OK && (rc = cluster_lock(db, 1, err)) == DB_OK)
		locked = 1;
	if (rc == DB_OK)
		rc = schema_version(db, from, err);
	*to = *from;
	if (rc == DB_OK && *from > schema_latest()) {
		errf(err, "the database has schema version %u, newer than this jobq knows (%u): upgrade jobq",
		    *from, schema_latest());
		rc = DB_EFAIL;
	}
	for (i = 0; rc == DB_OK && i < schema_nmigrations; i++)
		if (schema_migrations[i].version > *from) {
			rc = apply(db, database, &schema_migrations[i], err);
			if (rc != DB_OK && duplicate_change(db_errno(db)) &&
			    applied_elsewhere(db, schema_migrations[i].version))
				rc = DB_OK;
			if (rc == DB_OK)
				*to = schema_migrations[i].version;
		}
	if (db_connected(db)) {
		char ignored[ERRSZ];

		if (locked)
			cluster_lock(db, 0, ignored);
		lock(db, 0, ignored);
	}
	return rc;
}
