/* cmd_check.c -- `jobq check`: is everything in place for a worker? */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "queue.h"
#include "schema.h"

static void
usage(void)
{
	printf("Usage: jobq check [-c FILE]\n"
	       "Load the configuration (every handler program must exist and be executable),\n"
	       "connect to the database, check the schema version and find out, by trying,\n"
	       "whether the server supports SELECT ... FOR UPDATE SKIP LOCKED.  Prints the\n"
	       "reservation mode workers will use.\n\n"
	       "Exit status: 0 ready, 78 configuration error, 69 database unavailable or\n"
	       "schema missing.\n");
}

static int
report_db(const struct conf *c, struct db *db)
{
	enum reserve_mode probed;
	char err[ERRSZ];
	unsigned version;

	if (schema_version(db, &version, err) != DB_OK) {
		cli_error("%s", err);
		return EX_UNAVAILABLE;
	}
	if (version != schema_latest()) {
		cli_error("database '%s' has schema version %u, this jobq needs %u: run 'jobq init'",
		    c->db.database, version, schema_latest());
		return EX_UNAVAILABLE;
	}
	printf(
	    "database: %s, database '%s', schema version %u: ok\n", db_target(db), c->db.database, version);
	if (queue_probe(db, &probed, err) != DB_OK) {
		cli_error("probe SKIP LOCKED: %s", err);
		return EX_UNAVAILABLE;
	}
	if (c->worker.reserve_mode == RESERVE_AUTO)
		printf("reservation mode: %s (probed: the server %s SKIP LOCKED)\n",
		    conf_reserve_mode_name(probed),
		    probed == RESERVE_SKIP_LOCKED ? "supports" : "does not support");
	else
		printf("reservation mode: %s (set by reserve_mode; the server %s SKIP LOCKED)\n",
		    conf_reserve_mode_name(c->worker.reserve_mode),
		    probed == RESERVE_SKIP_LOCKED ? "supports" : "does not support");
	if (c->worker.reserve_mode == RESERVE_SKIP_LOCKED && probed != RESERVE_SKIP_LOCKED) {
		cli_error("reserve_mode = skip-locked, but the server does not support SKIP LOCKED");
		return EX_CONFIG;
	}
	return 0;
}

int
cmd_check(int argc, char **argv)
{
	static const struct option longopts[] = { CLI_COMMON_LONGOPTS, { NULL, 0, NULL, 0 } };
	struct conf *c;
	struct db *db;
	int opt, rc;

	while ((opt = getopt_long(argc, argv, CLI_COMMON_SHORTOPTS, longopts, NULL)) != -1)
		if ((rc = cli_common_opt(opt, "check", usage)) != -2)
			return rc < 0 ? EX_USAGE : rc;
	if (optind < argc)
		return cli_usage_error("check", "unexpected argument '%s'", argv[optind]);
	if ((rc = cli_conf(CONF_CHECK_EXEC, &c)) != 0)
		return rc;
	printf("config: %s: ok (%zu queue%s, %zu handler%s, %zu schedule%s)\n", c->path, strv_len(c->queues),
	    strv_len(c->queues) == 1 ? "" : "s", c->nhandlers, c->nhandlers == 1 ? "" : "s", c->nschedules,
	    c->nschedules == 1 ? "" : "s");
	if ((rc = cli_db(c, &db)) == 0) {
		rc = report_db(c, db);
		db_free(db);
	}
	conf_free(c);
	return rc;
}
