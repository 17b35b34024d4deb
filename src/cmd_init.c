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
	printf("Usage: jobq init [-c FILE]\n"
	       "Create the database and the jobq tables, or upgrade them to this version's\n"
	       "schema.  Safe to run again, and from several hosts at once.\n");
}

/* Creates the configured database when it does not exist yet. */
static int
create_database(const struct conf *c, struct db *db, char *err)
{
	struct buf ident;
	const char *p;
	int rc;

	if (db_connect(db, 0, err) != DB_OK)
		return -1;
	buf_init(&ident);
	buf_addc(&ident, '`');
	for (p = c->db.database; *p != '\0'; p++) {
		if (*p == '`')
			buf_addc(&ident, '`');
		buf_addc(&ident, *p);
	}
	buf_addc(&ident, '`');
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
	static const struct option longopts[] = { CLI_COMMON_LONGOPTS, { NULL, 0, NULL, 0 } };
	struct conf *c;
	struct db *db;
	char err[ERRSZ];
	unsigned from, to;
	int opt, rc;

	while ((opt = getopt_long(argc, argv, CLI_COMMON_SHORTOPTS, longopts, NULL)) != -1)
		if ((rc = cli_common_opt(opt, "init", usage)) != -2)
			return rc < 0 ? EX_USAGE : rc;
	if (optind < argc)
		return cli_usage_error("init", "unexpected argument '%s'", argv[optind]);
	if ((rc = cli_conf(0, &c)) != 0)
		return rc;
	db = db_new(&c->db);
	rc = db_connect(db, 1, err);
	if (rc != DB_OK && db_errno(db) == ER_BAD_DB_ERROR && create_database(c, db, err) == 0)
		rc = DB_OK;
	if (rc != DB_OK) {
		cli_error("%s", err);
		db_free(db);
		conf_free(c);
		return EX_UNAVAILABLE;
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
