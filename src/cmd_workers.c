/* cmd_workers.c -- `jobq workers`: the registry and recent timings. */
#include "config.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "duration.h"
#include "registry.h"
#include "runs.h"

#define STATS_WINDOW_MS (24LL * 3600 * 1000)
/* The statistics read at most this many of the newest runs: a few tens
 * of milliseconds through the job_runs_recent index, however many runs
 * the day had. */
#define STATS_MAX_RUNS 100000

static void
usage(void)
{
	printf("Usage: jobq workers [--json]\n"
	       "List the registered workers: host, pid, queues, concurrency, uptime, when last\n"
	       "seen, jobs done/retried/dead, the jobs they run now; a worker that stopped\n"
	       "heart-beating (crashed, killed, cut off) is marked 'gone': its uptime is how\n"
	       "long it ran, and it runs nothing (its jobs return when their leases expire).\n"
	       "Then, per job type, runs, failures (retried, dead, or interrupted by the\n"
	       "worker's stop; not cancelled, nor lost to another worker) and mean duration\n"
	       "over the last 24 hours from the run history; on a busier day, over the newest\n"
	       "%d runs (the header says how far back).\n\n"
	       "A part the database does not answer within [database] read_timeout is\n"
	       "cancelled on the server and reported missing on stderr; the rest is printed.\n\n"
	       "Exit status: 0; 1 when a part is missing; 69 when nothing could be read.\n",
	    STATS_MAX_RUNS);
}

static cJSON *
worker_json(const struct worker_row *w)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "id", w->id);
	cJSON_AddStringToObject(o, "host", w->host);
	cJSON_AddNumberToObject(o, "pid", w->pid);
	cJSON_AddStringToObject(o, "queues", w->queues);
	cJSON_AddNumberToObject(o, "concurrency", w->concurrency);
	cJSON_AddNumberToObject(o, "uptime_seconds", (double)w->uptime_s); /* gone: how long it ran */
	cJSON_AddNumberToObject(o, "last_seen_ms_ago", (double)w->seen_ago_ms);
	cJSON_AddStringToObject(o, "state", w->alive ? "alive" : "gone");
	cJSON_AddNumberToObject(o, "done", (double)w->done);
	cJSON_AddNumberToObject(o, "retried", (double)w->retried);
	cJSON_AddNumberToObject(o, "dead", (double)w->dead);
	cJSON_AddStringToObject(o, "current_jobs", w->current_jobs);
	cJSON_AddStringToObject(o, "version", w->version);
	return o;
}

/* A part that could not be read is null, and named in "missing". */
static void
print_json(const struct worker_row *w, size_t n, int have_w, const struct runs_stats *st, int have_st)
{
	cJSON *root = cJSON_CreateObject(), *missing = cJSON_CreateArray(), *types, *win;
	char *out;
	size_t i;

	if (have_w) {
		cJSON *arr = cJSON_AddArrayToObject(root, "workers");

		for (i = 0; i < n; i++)
			cJSON_AddItemToArray(arr, worker_json(&w[i]));
	} else {
		cJSON_AddNullToObject(root, "workers");
		cJSON_AddItemToArray(missing, cJSON_CreateString("workers"));
	}
	if (have_st) {
		types = cJSON_AddObjectToObject(root, "types_last_24h");
		for (i = 0; i < st->n; i++) {
			cJSON *o = cJSON_AddObjectToObject(types, st->types[i].type);

			cJSON_AddNumberToObject(o, "runs", (double)st->types[i].runs);
			cJSON_AddNumberToObject(o, "failures", (double)st->types[i].failures);
			cJSON_AddNumberToObject(o, "avg_ms", st->types[i].avg_ms);
			cJSON_AddNumberToObject(o, "max_ms", (double)st->types[i].max_ms);
		}
		win = cJSON_AddObjectToObject(root, "stats_window");
		cJSON_AddNumberToObject(win, "seconds", (double)(st->covered_ms / 1000));
		cJSON_AddBoolToObject(win, "capped", st->capped);
		cJSON_AddNumberToObject(win, "max_runs", STATS_MAX_RUNS);
	} else {
		cJSON_AddNullToObject(root, "types_last_24h");
		cJSON_AddItemToArray(missing, cJSON_CreateString("types_last_24h"));
	}
	cJSON_AddItemToObject(root, "missing", missing);
	out = cJSON_Print(root);
	puts(out);
	cJSON_free(out);
	cJSON_Delete(root);
}

static void
print_workers(const struct worker_row *w, size_t n)
{
	int tty = cli_isatty();
	size_t i;

	/* Two blanks between columns, and room for the longest usual value
	 * ("23h59m59s", "1d 3h ago"): a wider one pushes the rest along
	 * but never runs into its neighbour. */
	printf("%-32s  %-5s  %4s  %-10s  %-14s  %7s  %7s  %5s  %-22s  %s\n", "WORKER", "STATE", "CONC",
	    "UPTIME", "SEEN", "DONE", "RETRIED", "DEAD", "QUEUES", "RUNNING");
	for (i = 0; i < n; i++) {
		char up[32], d[32], seen[48];
		char *id = cli_visible(w[i].id, tty), *running = cli_visible(w[i].current_jobs, tty);

		duration_format(w[i].uptime_s * 1000, up, sizeof up);
		duration_format(w[i].seen_ago_ms / 1000 * 1000, d, sizeof d);
		snprintf(seen, sizeof seen, "%s ago", d);
		printf("%-32s  %-5s  %4u  %-10s  %-14s  %7llu  %7llu  %5llu  %-22s  %s\n", id,
		    w[i].alive ? "alive" : "gone", w[i].concurrency, up, seen, (unsigned long long)w[i].done,
		    (unsigned long long)w[i].retried, (unsigned long long)w[i].dead, w[i].queues,
		    *running ? running : "-");
		free(id);
		free(running);
	}
	printf("%zu worker%s\n", n, n == 1 ? "" : "s");
}

/* The runs by type; the type column as wide as its longest name (at
 * least 24), each name made visible (plain SQL may write any type). */
static void
print_stats(const struct runs_stats *st)
{
	int tty = cli_isatty(), width = 24;
	char d[32], **name;
	size_t i;

	if (st->n == 0)
		return;
	name = xcalloc(st->n, sizeof *name);
	for (i = 0; i < st->n; i++) {
		name[i] = cli_visible(st->types[i].type, tty);
		if (strlen(name[i]) > (size_t)width)
			width = (int)strlen(name[i]);
	}
	duration_format(st->covered_ms / 1000 * 1000, d, sizeof d);
	if (st->capped)
		printf("\n%-*s %8s %8s %10s %10s   (newest %d runs: last %s)\n", width, "TYPE", "RUNS", "FAILED",
		    "AVG MS", "MAX MS", STATS_MAX_RUNS, d);
	else
		printf("\n%-*s %8s %8s %10s %10s   (last 24 hours)\n", width, "TYPE", "RUNS", "FAILED", "AVG MS",
		    "MAX MS");
	for (i = 0; i < st->n; i++) {
		printf("%-*s %8llu %8llu %10.1f %10lld\n", width, name[i], (unsigned long long)st->types[i].runs,
		    (unsigned long long)st->types[i].failures, st->types[i].avg_ms, (long long)st->types[i].max_ms);
		free(name[i]);
	}
	free(name);
}

/* Reads both parts, each on its own: a slow statistics query does not
 * cost the worker list already read. */
static int
report(struct db *db, int json)
{
	struct worker_row *w = NULL;
	struct runs_stats st;
	size_t n = 0;
	char err[ERRSZ];
	int have_w, have_st;

	have_w = cli_part(db, registry_list(db, &w, &n, err), "workers", "the worker list is", err);
	have_st = cli_part(db, runs_stats(db, STATS_WINDOW_MS, STATS_MAX_RUNS, &st, err), "workers",
	    "the statistics per job type are", err);
	if (json)
		print_json(w, n, have_w, &st, have_st);
	else {
		if (have_w)
			print_workers(w, n);
		if (have_st)
			print_stats(&st);
	}
	if (have_w)
		registry_rows_free(w, n);
	if (have_st)
		runs_stats_free(&st);
	return have_w && have_st ? 0 : have_w || have_st ? EXIT_FAIL : EX_UNAVAILABLE;
}

int
cmd_workers(int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_COMMON_LONGOPTS,
		{ "json", no_argument, NULL, 'J' },
		{ NULL, 0, NULL, 0 },
	};
	struct conf *c;
	struct db *db;
	int opt, rc, json = 0;

	while ((opt = getopt_long(argc, argv, CLI_COMMON_SHORTOPTS, longopts, NULL)) != -1) {
		if ((rc = cli_common_opt(opt, "workers", usage)) >= 0)
			return rc;
		if (opt == 'J')
			json = 1;
	}
	if (optind < argc)
		return cli_usage_error("workers", "unexpected argument '%s'", argv[optind]);
	if ((rc = cli_open_cancelling(&c, &db)) != 0)
		return rc;
	rc = report(db, json);
	db_free(db);
	conf_free(c);
	return rc;
}
