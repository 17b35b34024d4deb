/* cmd_workers.c -- `jobq workers`: the registry and recent timings. */
#include "config.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "duration.h"
#include "registry.h"
#include "runs.h"

#define STATS_WINDOW_MS (24LL * 3600 * 1000)

static void
usage(void)
{
	printf("Usage: jobq workers [--json]\n"
	       "List the registered workers: host, pid, queues, concurrency, uptime, when last\n"
	       "seen, jobs done/retried/dead, the jobs they run now; a worker that stopped\n"
	       "heart-beating (crashed, killed, cut off) is marked 'gone'.  Then, per job type,\n"
	       "runs and mean duration over the last 24 hours, from the run history.\n");
}

static void
print_json(const struct worker_row *w, size_t n, const struct type_stats *s, size_t ns)
{
	cJSON *root = cJSON_CreateObject(), *arr = cJSON_AddArrayToObject(root, "workers"), *types;
	char *out;
	size_t i;

	for (i = 0; i < n; i++) {
		cJSON *o = cJSON_CreateObject();

		cJSON_AddStringToObject(o, "id", w[i].id);
		cJSON_AddStringToObject(o, "host", w[i].host);
		cJSON_AddNumberToObject(o, "pid", w[i].pid);
		cJSON_AddStringToObject(o, "queues", w[i].queues);
		cJSON_AddNumberToObject(o, "concurrency", w[i].concurrency);
		cJSON_AddNumberToObject(o, "uptime_seconds", (double)w[i].uptime_s);
		cJSON_AddNumberToObject(o, "last_seen_ms_ago", (double)w[i].seen_ago_ms);
		cJSON_AddStringToObject(o, "state", w[i].alive ? "alive" : "gone");
		cJSON_AddNumberToObject(o, "done", (double)w[i].done);
		cJSON_AddNumberToObject(o, "retried", (double)w[i].retried);
		cJSON_AddNumberToObject(o, "dead", (double)w[i].dead);
		cJSON_AddStringToObject(o, "current_jobs", w[i].current_jobs);
		cJSON_AddStringToObject(o, "version", w[i].version);
		cJSON_AddItemToArray(arr, o);
	}
	types = cJSON_AddObjectToObject(root, "types_last_24h");
	for (i = 0; i < ns; i++) {
		cJSON *o = cJSON_AddObjectToObject(types, s[i].type);

		cJSON_AddNumberToObject(o, "runs", (double)s[i].runs);
		cJSON_AddNumberToObject(o, "failures", (double)s[i].failures);
		cJSON_AddNumberToObject(o, "avg_ms", s[i].avg_ms);
		cJSON_AddNumberToObject(o, "max_ms", (double)s[i].max_ms);
	}
	out = cJSON_Print(root);
	puts(out);
	cJSON_free(out);
	cJSON_Delete(root);
}

static void
print_text(const struct worker_row *w, size_t n, const struct type_stats *s, size_t ns)
{
	size_t i;

	printf("%-32s %-5s %4s %9s %9s %7s %7s %5s  %-22s %s\n", "WORKER", "STATE", "CONC", "UPTIME", "SEEN",
	    "DONE", "RETRIED", "DEAD", "QUEUES", "RUNNING");
	for (i = 0; i < n; i++) {
		char up[32], seen[32];

		duration_format(w[i].uptime_s * 1000, up, sizeof up);
		duration_format(w[i].seen_ago_ms / 1000 * 1000, seen, sizeof seen);
		printf("%-32s %-5s %4u %9s %5s ago %7llu %7llu %5llu  %-22s %s\n", w[i].id,
		    w[i].alive ? "alive" : "gone", w[i].concurrency, up, seen, (unsigned long long)w[i].done,
		    (unsigned long long)w[i].retried, (unsigned long long)w[i].dead, w[i].queues,
		    *w[i].current_jobs ? w[i].current_jobs : "-");
	}
	printf("%zu worker%s\n", n, n == 1 ? "" : "s");
	if (ns == 0)
		return;
	printf("\n%-24s %8s %8s %10s %10s   (last 24 hours)\n", "TYPE", "RUNS", "FAILED", "AVG MS", "MAX MS");
	for (i = 0; i < ns; i++)
		printf("%-24s %8llu %8llu %10.1f %10lld\n", s[i].type, (unsigned long long)s[i].runs,
		    (unsigned long long)s[i].failures, s[i].avg_ms, (long long)s[i].max_ms);
}

int
cmd_workers(int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_COMMON_LONGOPTS,
		{ "json", no_argument, NULL, 'J' },
		{ NULL, 0, NULL, 0 },
	};
	struct worker_row *w;
	struct type_stats *s;
	size_t n, ns;
	struct conf *c;
	struct db *db;
	char err[ERRSZ];
	int opt, rc, json = 0;

	while ((opt = getopt_long(argc, argv, CLI_COMMON_SHORTOPTS, longopts, NULL)) != -1) {
		if ((rc = cli_common_opt(opt, "workers", usage)) >= 0)
			return rc;
		if (opt == 'J')
			json = 1;
	}
	if (optind < argc)
		return cli_usage_error("workers", "unexpected argument '%s'", argv[optind]);
	if ((rc = cli_open(0, &c, &db)) != 0)
		return rc;
	if (registry_list(db, &w, &n, err) != DB_OK) {
		cli_error("workers: %s", err);
		rc = EX_UNAVAILABLE;
	} else {
		if (runs_stats(db, STATS_WINDOW_MS, &s, &ns, err) != DB_OK) {
			cli_error("workers: %s", err);
			rc = EX_UNAVAILABLE;
		} else {
			if (json)
				print_json(w, n, s, ns);
			else
				print_text(w, n, s, ns);
			type_stats_free(s, ns);
		}
		registry_rows_free(w, n);
	}
	db_free(db);
	conf_free(c);
	return rc;
}
