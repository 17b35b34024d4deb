/* cmd_status.c -- `jobq status`: counts per queue and state. */
#include "config.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "queue.h"
#include "registry.h"

static void
usage(void)
{
	printf("Usage: jobq status [-q QUEUE] [--json]\n"
	       "Count the jobs of each queue by state:\n"
	       "  ready     due now, nobody holds it\n"
	       "  delayed   due later (delayed, or waiting out a retry backoff)\n"
	       "  reserved  a worker runs it and its lease is alive\n"
	       "  stale     its lease expired (the worker died); it is taken again soon\n"
	       "  failed    dead-lettered: see 'jobq failed'\n"
	       "and how long the oldest ready job has waited.\n");
}

static void
print_json(const struct queue_counts *q, size_t n, enum reserve_mode mode, uint64_t workers)
{
	cJSON *root = cJSON_CreateObject(), *queues = cJSON_AddObjectToObject(root, "queues");
	char *s;
	size_t i;

	for (i = 0; i < n; i++) {
		cJSON *o = cJSON_AddObjectToObject(queues, q[i].queue);

		cJSON_AddNumberToObject(o, "ready", (double)q[i].ready);
		cJSON_AddNumberToObject(o, "delayed", (double)q[i].delayed);
		cJSON_AddNumberToObject(o, "reserved", (double)q[i].reserved);
		cJSON_AddNumberToObject(o, "stale", (double)q[i].stale);
		cJSON_AddNumberToObject(o, "failed", (double)q[i].failed);
		cJSON_AddNumberToObject(
		    o, "oldest_ready_seconds", q[i].oldest_ready_s >= 0 ? (double)q[i].oldest_ready_s : 0.0);
	}
	cJSON_AddStringToObject(root, "reserve_mode", conf_reserve_mode_name(mode));
	cJSON_AddNumberToObject(root, "workers", (double)workers);
	s = cJSON_Print(root);
	puts(s);
	cJSON_free(s);
	cJSON_Delete(root);
}

static void
print_table(const struct queue_counts *q, size_t n, enum reserve_mode mode, uint64_t workers)
{
	int tty = cli_isatty();
	size_t i;

	printf("%-16s %9s %9s %9s %9s %9s  %s\n", "QUEUE", "READY", "DELAYED", "RESERVED", "STALE", "FAILED",
	    "OLDEST READY");
	for (i = 0; i < n; i++) {
		char oldest[32] = "-";

		if (q[i].oldest_ready_s >= 0)
			snprintf(oldest, sizeof oldest, "%llds", (long long)q[i].oldest_ready_s);
		printf("%-16s %9llu %9llu %9llu %s%9llu%s %9llu  %s\n", q[i].queue,
		    (unsigned long long)q[i].ready, (unsigned long long)q[i].delayed,
		    (unsigned long long)q[i].reserved, tty && q[i].stale ? "\033[1;31m" : "",
		    (unsigned long long)q[i].stale, tty && q[i].stale ? "\033[0m" : "",
		    (unsigned long long)q[i].failed, oldest);
	}
	printf("\nreserve mode: %s; workers alive: %llu\n", conf_reserve_mode_name(mode),
	    (unsigned long long)workers);
}

int
cmd_status(int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_COMMON_LONGOPTS,
		{ "queue", required_argument, NULL, 'q' },
		{ "json", no_argument, NULL, 'J' },
		{ NULL, 0, NULL, 0 },
	};
	const char *only = NULL;
	struct queue_counts *q;
	enum reserve_mode mode;
	struct conf *c;
	struct db *db;
	uint64_t workers = 0;
	char err[ERRSZ];
	size_t n;
	int opt, rc, json = 0;

	while ((opt = getopt_long(argc, argv, CLI_COMMON_SHORTOPTS "q:", longopts, NULL)) != -1) {
		if ((rc = cli_common_opt(opt, "status", usage)) >= 0)
			return rc;
		if (opt == 'q')
			only = optarg;
		else if (opt == 'J')
			json = 1;
	}
	if (optind < argc)
		return cli_usage_error("status", "unexpected argument '%s'", argv[optind]);
	if ((rc = cli_open(0, &c, &db)) != 0)
		return rc;
	mode = c->worker.reserve_mode;
	if (only != NULL && !conf_has_queue(c, only)) {
		cli_error("unknown queue '%s' (no [queue %s] section in %s)", only, only, c->path);
		rc = EX_DATAERR;
	} else if ((mode == RESERVE_AUTO && queue_probe(db, &mode, err) != DB_OK) ||
	    registry_count_alive(db, &workers, err) != DB_OK ||
	    queue_status(db, c, only, &q, &n, err) != DB_OK) {
		cli_error("status: %s", err);
		rc = EX_UNAVAILABLE;
	} else {
		if (json)
			print_json(q, n, mode, workers);
		else
			print_table(q, n, mode, workers);
		queue_counts_free(q, n);
	}
	db_free(db);
	conf_free(c);
	return rc;
}
