/* cmd_init.c -- `jobq init`: create the database and schema, or upgrade. */
#include "config.h"

#include <mysqld_error.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "schema.h"

static void
usage(void)
{
	printf("Usage: jobq init [-c FILE] [--print-grants]\n"
	       "Create the database and the jobq tables, or upgrade them to this version's\n"
	       "schema.  Safe to run again, and from several hosts at once.\n\n"
	       "      --print-grants  print the SQL that creates the configured database user\n"
	       "                      with the least rights jobq needs (and what init needs\n"
	       "                      beyond them), for the server's administrator to run;\n"
	       "                      connects to nothing, changes nothing\n\n"
	       "Exit status: 0; 69 database unavailable; 78 configuration problem (also when\n"
	       "the server refuses the user or its password).\n");
}

/* s as an SQL string literal. */
static void
add_literal(struct buf *b, const char *s)
{
	buf_addc(b, '\'');
	for (; *s != '\0'; s++) {
		if (*s == '\'' || *s == '\\')
			buf_addc(b, *s);
		buf_addc(b, *s);
	}
	buf_addc(b, '\'');
}

/* name as an SQL identifier. */
static void
add_ident(struct buf *b, const char *name)
{
	buf_addc(b, '`');
	for (; *name != '\0'; name++) {
		if (*name == '`')
			buf_addc(b, '`');
		buf_addc(b, *name);
	}
	buf_addc(b, '`');
}

/* The account's host part: the server sees a socket connection, or one
 * to localhost, as 'localhost'; anything else comes from the network. */
static const char *
grant_host(const struct db_conf *d)
{
	if (d->socket != NULL || d->host == NULL || strcmp(d->host, "localhost") == 0)
		return "localhost";
	return "%";
}

/* Prints the statements that set up c's database user with the rights
 * jobq uses: rows only for the worker and the operator's commands,
 * schema changes in addition for `jobq init`.  Nothing is connected to:
 * the output is for the server's administrator. */
static void
print_grants(const struct conf *c)
{
	const struct db_conf *d = &c->db;
	const char *user = d->user != NULL ? d->user : "jobq";
	struct buf db, acct, pw;

	buf_init(&db);
	buf_init(&acct);
	buf_init(&pw);
	add_ident(&db, d->database);
	add_literal(&acct, user);
	buf_addc(&acct, '@');
	add_literal(&acct, grant_host(d));
	add_literal(&pw, d->password != NULL ? d->password : "CHANGE-ME");
	printf("-- The database user for [database] of %s.\n"
	       "-- Run as the server's administrator: jobq init --print-grants | sudo mariadb\n",
	    c->path);
	if (strcmp(grant_host(d), "%") == 0)
		printf("-- '%%' lets the user in from any host: narrow it to the workers' address.\n");
	if (d->password == NULL)
		printf("-- No password in the configuration: replace CHANGE-ME, and set password\n"
		       "-- (or password_file) in [database] to the same.\n");
	printf(
	    "CREATE DATABASE IF NOT EXISTS %s CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci;\n", db.data);
	printf("CREATE USER IF NOT EXISTS %s IDENTIFIED BY %s;\n", acct.data, pw.data);
	printf("-- What the worker and the operator's commands need: rows, nothing else.\n"
	       "GRANT SELECT, INSERT, UPDATE, DELETE ON %s.* TO %s;\n",
	    db.data, acct.data);
	printf("-- What 'jobq init' needs beyond that, to create and upgrade the tables and\n"
	       "-- the triggers that keep the counts of 'jobq status' (with binary logging\n"
	       "-- on, the server also needs log_bin_trust_function_creators = 1, or run init\n"
	       "-- as a user with SUPER).  The triggers run as the user that created them: keep\n"
	       "-- that user and its TRIGGER right, or every write to jobs fails.\n"
	       "-- To run init (and later upgrades) as another user, leave it out, or after\n"
	       "-- init run: REVOKE CREATE, ALTER, INDEX ON %s.* FROM %s;\n"
	       "GRANT CREATE, ALTER, INDEX, TRIGGER ON %s.* TO %s;\n",
	    db.data, acct.data, db.data, acct.data);
	buf_free(&db);
	buf_free(&acct);
	buf_free(&pw);
}

/* Creates the configured database when it does not exist yet. */
static int
create_database(const struct conf *c, struct db *db, char *err)
{
	struct buf ident;
	int rc;

	if (db_connect(db, 0, err) != DB_OK)
		return -1;
	buf_init(&ident);
	add_ident(&ident, c->db.database);
	rc = db_exec(db, err,
	    "CREATE DATABASE IF NOT EXISTS %s CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci", ident.data);
	buf_free(&ident);
	if (rc != DB_OK)
		return -1;
	return db_connect(db, 1, err) == DB_OK ? 0 : -1;
}

int
cmd_init(int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_COMMON_LONGOPTS,
		{ "print-grants", no_argument, NULL, 'G' },
		{ NULL, 0, NULL, 0 },
	};
	struct conf *c;
	struct db *db;
	char err[ERRSZ];
	unsigned from, to;
	int opt, rc, grants = 0;

	while ((opt = getopt_long(argc, argv, CLI_COMMON_SHORTOPTS, longopts, NULL)) != -1) {
		if (opt == 'G') {
			grants = 1;
			continue;
		}
		if ((rc = cli_common_opt(opt, "init", usage)) != -2)
			return rc < 0 ? EX_USAGE : rc;
	}
	if (optind < argc)
		return cli_usage_error("init", "unexpected argument '%s'", argv[optind]);
	if ((rc = cli_conf(0, &c)) != 0)
		return rc;
	if (grants) {
		print_grants(c);
		conf_free(c);
		return 0;
	}
	db = db_new(&c->db);
	rc = db_connect(db, 1, err);
	if (rc != DB_OK && db_errno(db) == ER_BAD_DB_ERROR && create_database(c, db, err) == 0)
		rc = DB_OK;
	if (rc != DB_OK) {
		rc = cli_connect_error(c, db, err);
		db_free(db);
		conf_free(c);
		return rc;
	}
	rc = schema_init(db, c->db.database, &from, &to, err);
	if (rc != DB_OK) {
		cli_error("init database '%s': %s", c->db.database, err);
		rc = rc == DB_EGONE ? EX_UNAVAILABLE : EXIT_FAIL;
	} else {
		if (from == to)
			printf("database '%s': schema is up to date (version %u)\n", c->db.database, to);
		else if (from == 0)
			printf("database '%s': schema created (version %u)\n", c->db.database, to);
		else
			printf("database '%s': schema upgraded from version %u to %u\n", c->db.database, from,
			    to);
		rc = 0;
	}
	db_free(db);
	conf_free(c);
	return rc;
}
