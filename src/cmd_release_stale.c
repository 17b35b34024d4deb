/* cmd_release_stale.c -- `jobq release-stale`: expired leases, now. */
#include "config.h"

#include <stdio.h>

#include "cli.h"
#include "queue.h"

static void
usage(void)
{
	printf("Usage: jobq release-stale\n"
	       "Make every job whose lease expired (its worker died) ready again now, and\n"
	       "print how many there were.  Workers take such jobs by themselves once the\n"
	       "lease has expired; this command only makes the mechanism visible.\n");
}

int
cmd_release_stale(int argc, char **argv)
{
	static const struct option longopts[] = { CLI_COMMON_LONGOPTS, { NULL, 0, NULL, 0 } };
	struct conf *c;
	struct db *db;
	uint64_t n;
	char err[ERRSZ];
	int opt, rc, attempt = 0;

	while ((opt = getopt_long(argc, argv, CLI_COMMON_SHORTOPTS, longopts, NULL)) != -1)
		if ((rc = cli_common_opt(opt, "release-stale", usage)) != -2)
			return rc < 0 ? EX_USAGE : rc;
	if (optind < argc)
		return cli_usage_error("release-stale", "unexpected argument '%s'", argv[optind]);
	if ((rc = cli_open(0, &c, &db)) != 0)
		return rc;
	/* On a Galera cluster a claim or a release-stale through another
	 * node may take the same stale rows, and the one that loses
	 * certification gets error 1213 (the server's own rerun is off for
	 * jobq's sessions, db_galera.c): rerun, it releases what is left. */
	do
		rc = queue_release_stale(db, &n, err);
	while (db_retry_after(rc, ++attempt));
	if (rc != DB_OK) {
		cli_error("release-stale: %s", err);
		rc = EX_UNAVAILABLE;
	} else
		printf("released %llu stale job%s\n", (unsigned long long)n, n == 1 ? "" : "s");
	db_free(db);
	conf_free(c);
	return rc;
}
