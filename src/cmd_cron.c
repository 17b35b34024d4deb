/* cmd_cron.c -- `jobq cron EXPR`: check an expression, describe it and
 * list its next fire times.  Needs no configuration and no database. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "cron.h"

static void
usage(void)
{
	printf("Usage: jobq cron EXPR [--from TIME] [--count N] [--timezone ZONE]\n"
	       "Check a cron expression: print its description, then its next N fire\n"
	       "times strictly after TIME, one a line with the zone's offset, or 'never'\n"
	       "(none is after 9999-12-31 23:59:59 UTC: no later time can be stored).\n\n"
	       "      --from TIME      ISO 8601 (2025-03-30T01:30:00Z; without an offset it is\n"
	       "                       a local time in ZONE); default: now\n"
	       "  -n, --count N        how many fire times (default 5, at most 1000)\n"
	       "      --timezone ZONE  IANA time zone (default UTC), e.g. Europe/Berlin\n\n"
	       "EXPR is five fields, MIN HOUR DAY-OF-MONTH MONTH DAY-OF-WEEK, or @hourly,\n"
	       "@daily (@midnight), @weekly, @monthly, @yearly (@annually).  Exit status 65\n"
	       "when EXPR is invalid or names no date that exists (0 0 31 2 *: it would\n"
	       "never fire); 64 for a bad option (--from, --count, --timezone).\n\n"
	       "Clock changes (as Vixie cron and cronie): a job at a fixed time that the\n"
	       "clocks skip runs once at the end of the gap; one in a repeated hour runs\n"
	       "once, the first time; a job whose minute or hour starts with '*' follows\n"
	       "the wall clock (hourly stays 60 real minutes apart).\n");
}

enum { OPT_FROM = 256, OPT_TZ };

/* Prints the description and the fire times; the expression is valid.
 * One that names no date that exists is described as "never" once, and
 * is an error (EX_DATAERR): a schedule written with it would never run. */
static int
print_fires(const struct cron *cr, const struct cron_zone *z, int64_t from, int64_t count)
{
	char *desc = cron_describe(cr), when[64];
	int64_t t = from, i;

	printf("%s\n", desc);
	free(desc);
	if (cron_never(cr)) {
		cli_error("cron: the expression names no date that exists: it never fires");
		return EX_DATAERR;
	}
	for (i = 0; i < count; i++) {
		/* past 9999-12-31 23:59:59 UTC no time can be stored (DATETIME),
		 * nor given with --from: none is a fire time */
		if (cron_next(cr, z, t, &t) != CRON_FOUND || t > 253402300799LL) {
			printf("never\n");
			break;
		}
		cron_format(z, t, when, sizeof when);
		printf("%s\n", when);
	}
	return 0;
}

int
cmd_cron(int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_COMMON_LONGOPTS,
		{ "from", required_argument, NULL, OPT_FROM },
		{ "count", required_argument, NULL, 'n' },
		{ "timezone", required_argument, NULL, OPT_TZ },
		{ NULL, 0, NULL, 0 },
	};
	const char *from_arg = NULL, *tz_arg = "UTC";
	int64_t count = 5, from;
	struct cron_zone *z;
	struct cron *cr;
	char err[ERRSZ];
	int opt, rc;

	while ((opt = getopt_long(argc, argv, CLI_COMMON_SHORTOPTS "n:", longopts, NULL)) != -1) {
		if ((rc = cli_common_opt(opt, "cron", usage)) >= 0)
			return rc;
		if (rc == -2)
			continue;
		if (opt == OPT_FROM)
			from_arg = optarg;
		else if (opt == OPT_TZ)
			tz_arg = optarg;
		else if (opt == 'n' && str_to_int64(optarg, 1, 1000, &count) < 0)
			return cli_usage_error("cron", "--count: expected 1 to 1000, not '%s'", optarg);
	}
	if (optind + 1 != argc)
		return cli_usage_error("cron",
		    optind < argc ? "expected one expression (quote it)" : "an expression is required");
	/* A bad option value is a usage error (64), as --count's is; 65
	 * is for the expression, the command's input. */
	if ((z = cron_zone_open(tz_arg, err)) == NULL)
		return cli_usage_error("cron", "--timezone: %s", err);
	from = (int64_t)time(NULL);
	if (from_arg != NULL && cron_parse_time(z, from_arg, &from, err) < 0) {
		cron_zone_free(z);
		return cli_usage_error("cron", "--from: %s", err);
	}
	if ((cr = cron_parse(argv[optind], err)) == NULL) {
		cli_error("cron: %s", err);
		cron_zone_free(z);
		return EX_DATAERR;
	}
	rc = print_fires(cr, z, from, count);
	cron_free(cr);
	cron_zone_free(z);
	return rc;
}
