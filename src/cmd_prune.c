/* cmd_prune.c -- `jobq prune`: keep history tables from growing forever. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "duration.h"
#include "failed.h"
#include "registry.h"
#include "runs.h"
#include "schedules.h"

static void
usage(void)
{
	printf("Usage: jobq prune --older-than DURATION [--failed] [--dry-run] [--yes]\n"
	       "Delete, in chunks, run history older than DURATION of finished jobs (as\n"
	       "keep_done: the runs of jobs still queued, retrying or dead-lettered stay),\n"
	       "the registry rows of workers gone for longer than DURATION (a worker that\n"
	       "still heart-beats keeps its row, even with --older-than 0) and the\n"
	       "schedules' fires older than DURATION (each schedule keeps its last ones).\n"
	       "Prints what it deleted.\n\n"
	       "Dead-lettered jobs wait for a person and are kept unless asked:\n"
	       "  --failed       also delete dead-lettered jobs that failed more than\n"
	       "                 DURATION ago, with their runs\n"
	       "  --keep-failed  accepted for older scripts: keeping them is now the default\n"
	       "                 (an error together with --failed)\n"
	       "  --dry-run      print how many rows would go; change nothing\n"
	       "  -y, --yes      delete without asking\n\n"
	       "On a terminal prune states the counts and asks first.  Without one (cron,\n"
	       "scripts) it deletes nothing unless given --yes (or --dry-run).\n\n"
	       "Exit status: 0; 1 when the question was not answered yes; 64 bad usage, or no\n"
	       "terminal and no --yes; 69 database unavailable.\n");
}

struct prune_counts {
	uint64_t runs, failed, workers, fires;
};

/* Deletes (count_only: counts) everything prune covers; the counts
 * hold what was done before an error. */
static int
prune(struct db *db, int64_t older, int with_failed, int count_only, struct prune_counts *n, char *err)
{
	int rc;

	memset(n, 0, sizeof *n);
	if ((rc = runs_prune(db, older, with_failed, count_only, &n->runs, err)) != DB_OK)
		return rc;
	if (with_failed && (rc = failed_clear(db, older, count_only, &n->failed, err)) != DB_OK)
		return rc;
	if ((rc = schedules_prune(db, older, count_only, &n->fires, err)) != DB_OK)
		return rc;
	return registry_prune(db, older, count_only, &n->workers, err);
}

static void
print_counts(const char *verb, const struct prune_counts *n)
{
	printf("%s %llu run%s, %llu failed job%s, %llu gone worker%s, %llu schedule fire%s\n", verb,
	    (unsigned long long)n->runs, n->runs == 1 ? "" : "s", (unsigned long long)n->failed,
	    n->failed == 1 ? "" : "s", (unsigned long long)n->workers, n->workers == 1 ? "" : "s",
	    (unsigned long long)n->fires, n->fires == 1 ? "" : "s");
}

/* Counts first; deletes after a yes on the terminal, or at once with
 * --yes.  Returns the exit status. */
static int
run(struct db *db, int64_t older, int with_failed, int dry_run, int yes)
{
	struct prune_counts n;
	char err[ERRSZ], d[32];

	if (dry_run || !yes) {
		if (prune(db, older, with_failed, 1, &n, err) != DB_OK) {
			cli_error("prune: %s", err);
			return EX_UNAVAILABLE;
		}
		if (dry_run) {
			print_counts("would prune", &n);
			return 0;
		}
		duration_format(older, d, sizeof d);
		if (n.runs + n.failed + n.workers + n.fires > 0 &&
		    !cli_confirm("delete %llu run%s older than %s, %llu failed job%s, %llu gone worker%s and %llu "
		                 "schedule fire%s?",
		        (unsigned long long)n.runs, n.runs == 1 ? "" : "s", d, (unsigned long long)n.failed,
		        n.failed == 1 ? "" : "s", (unsigned long long)n.workers, n.workers == 1 ? "" : "s",
		        (unsigned long long)n.fires, n.fires == 1 ? "" : "s")) {
			cli_error("prune: not confirmed; nothing deleted");
			return EXIT_FAIL;
		}
	}
	if (prune(db, older, with_failed, 0, &n, err) != DB_OK) {
		/* The counts are of the chunks whose answer came: a chunk whose
		 * answer was lost (db_unsure) may have been deleted too. */
		cli_error("prune: %s%s", err,
		    db_unsure(db) ? " (the answer to the last chunk was lost: it may have been deleted too; "
		                    "look (jobq prune --dry-run))"
		                  : "");
		print_counts("pruned", &n);
		return EX_UNAVAILABLE;
	}
	print_counts("pruned", &n);
	return 0;
}

enum { OPT_OLDER = 256, OPT_FAILED, OPT_KEEP_FAILED, OPT_DRY_RUN, OPT_YES };

int
cmd_prune(int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_COMMON_LONGOPTS,
		{ "older-than", required_argument, NULL, OPT_OLDER },
		{ "failed", no_argument, NULL, OPT_FAILED },
		{ "keep-failed", no_argument, NULL, OPT_KEEP_FAILED },
		{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
		{ "yes", no_argument, NULL, 'y' },
		{ NULL, 0, NULL, 0 },
	};
	int64_t older = -1;
	struct conf *c;
	struct db *db;
	char err[ERRSZ];
	int opt, rc, with_failed = 0, keep_failed = 0, dry_run = 0, yes = 0;

	while ((opt = getopt_long(argc, argv, CLI_COMMON_SHORTOPTS "y", longopts, NULL)) != -1) {
		if ((rc = cli_common_opt(opt, "prune", usage)) >= 0)
			return rc;
		if (opt == OPT_OLDER && duration_parse(optarg, &older, err) < 0)
			return cli_usage_error("prune", "--older-than: %s", err);
		with_failed |= opt == OPT_FAILED;
		keep_failed |= opt == OPT_KEEP_FAILED;
		dry_run |= opt == OPT_DRY_RUN;
		yes |= opt == 'y';
	}
	if (optind < argc)
		return cli_usage_error("prune", "unexpected argument '%s'", argv[optind]);
	if (older < 0)
		return cli_usage_error("prune", "--older-than DURATION is required");
	if (with_failed && keep_failed)
		return cli_usage_error("prune", "--failed and --keep-failed contradict each other");
	if ((rc = cli_bulk_check("prune", "deletes rows", yes, dry_run)) != 0)
		return rc;
	if ((rc = cli_open_cancelling(&c, &db)) != 0)
		return rc;
	rc = run(db, older, with_failed, dry_run, yes);
	db_free(db);
	conf_free(c);
	return rc;
}
