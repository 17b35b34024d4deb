/* cmd_prune.c -- `jobq prune`: keep history tables from growing forever. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "duration.h"
#include "failed.h"
#include "registry.h"
#include "runs.h"

static void
usage(void)
{
	printf("Usage: jobq prune --older-than DURATION [--keep-failed]\n"
	       "Delete, in chunks, run history older than DURATION, dead-lettered jobs that\n"
	       "failed more than DURATION ago (unless --keep-failed), and registry rows of\n"
	       "workers gone for longer than DURATION.  Prints what it deleted.\n");
}

enum { OPT_OLDER = 256, OPT_KEEP_FAILED };

int
cmd_prune(int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_COMMON_LONGOPTS,
		{ "older-than", required_argument, NULL, OPT_OLDER },
		{ "keep-failed", no_argument, NULL, OPT_KEEP_FAILED },
		{ NULL, 0, NULL, 0 },
	};
	int64_t older = -1;
	uint64_t runs = 0, failed = 0, workers = 0;
	struct conf *c;
	struct db *db;
	char err[ERRSZ];
	int opt, rc, keep_failed = 0;

	while ((opt = getopt_long(argc, argv, CLI_COMMON_SHORTOPTS, longopts, NULL)) != -1) {
		if ((rc = cli_common_opt(opt, "prune", usage)) >= 0)
			return rc;
		if (opt == OPT_OLDER && duration_parse(optarg, &older, err) < 0)
			return cli_usage_error("prune", "--older-than: %s", err);
		if (opt == OPT_KEEP_FAILED)
			keep_failed = 1;
	}
	if (optind < argc)
		return cli_usage_error("prune", "unexpected argument '%s'", argv[optind]);
	if (older < 0)
		return cli_usage_error("prune", "--older-than DURATION is required");
	if ((rc = cli_open(0, &c, &db)) != 0)
		return rc;
	if (runs_prune(db, older, &runs, err) != DB_OK ||
	    (!keep_failed && failed_clear(db, older, &failed, err) != DB_OK) ||
	    registry_prune(db, older, &workers, err) != DB_OK) {
		cli_error("prune: %s", err);
		rc = EX_UNAVAILABLE;
	}
	printf("pruned %llu run%s, %llu failed job%s, %llu gone worker%s\n", (unsigned long long)runs,
	    runs == 1 ? "" : "s", (unsigned long long)failed, failed == 1 ? "" : "s",
	    (unsigned long long)workers, workers == 1 ? "" : "s");
	db_free(db);
	conf_free(c);
	return rc;
}
