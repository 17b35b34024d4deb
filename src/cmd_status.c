/* cmd_status.c -- `jobq status`: counts per queue and state. */
#include "config.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "queue.h"
#include "registry.h"
#include "timefmt.h"

static void
usage(void)
{
	printf("Usage: jobq status [-q, --queue QUEUE] [--json]\n"
	       "Count the jobs of each queue by state:\n"
	       "  ready     due now, nobody holds it\n"
	       "  delayed   due later (delayed, or waiting out a retry backoff)\n"
	       "  waiting   waits for other jobs to end (see enqueue); a column of its own\n"
	       "            when some job waits\n"
	       "  reserved  a worker holds it and its lease is alive: it runs, or waits in\n"
	       "            the worker to start (reserve_ahead)\n"
	       "  stale     its lease expired (the worker died); it is taken again soon\n"
	       "  failed    dead-lettered: see 'jobq failed'\n"
	       "and how long the oldest ready job has waited; a queue 'jobq pause' paused\n"
	       "is marked paused.\n\n"
	       "A part the database does not answer within [database] read_timeout is\n"
	       "cancelled on the server and reported missing on stderr; the rest is printed.\n\n"
	       "Exit status: 0; 1 when a part is missing; 65 unknown queue; 69 when nothing\n"
	       "could be read.\n");
}

/* What status read; a part that could not be read is left out. */
struct report {
	struct queue_counts *q;
	size_t n;
	int have_q, have_mode, have_workers;
	enum reserve_mode mode;
	uint64_t workers;
};

static void
print_json(const struct conf *c, const struct report *r)
{
	cJSON *root = cJSON_CreateObject(), *queues, *missing = cJSON_CreateArray();
	char *s;
	size_t i;

	if (r->have_q) {
		queues = cJSON_AddObjectToObject(root, "queues");
		for (i = 0; i < r->n; i++) {
			const struct queue_counts *q = &r->q[i];
			cJSON *o = cJSON_AddObjectToObject(queues, q->queue);
			const char *d = conf_queue_description(c, q->queue);

			cJSON_AddNumberToObject(o, "ready", (double)q->ready);
			cJSON_AddNumberToObject(o, "delayed", (double)q->delayed);
			cJSON_AddNumberToObject(o, "reserved", (double)q->reserved);
			cJSON_AddNumberToObject(o, "stale", (double)q->stale);
			cJSON_AddNumberToObject(o, "failed", (double)q->failed);
			cJSON_AddNumberToObject(o, "waiting", (double)q->waiting);
			cJSON_AddBoolToObject(o, "paused", q->paused);
			if (d != NULL)
				cJSON_AddStringToObject(o, "description", d);
			else
				cJSON_AddNullToObject(o, "description");
			if (q->oldest_ready_s >= 0) /* null: nothing is ready */
				cJSON_AddNumberToObject(o, "oldest_ready_seconds", (double)q->oldest_ready_s);
			else
				cJSON_AddNullToObject(o, "oldest_ready_seconds");
		}
	} else {
		cJSON_AddNullToObject(root, "queues");
		cJSON_AddItemToArray(missing, cJSON_CreateString("queues"));
	}
	if (r->have_mode)
		cJSON_AddStringToObject(root, "reserve_mode", conf_reserve_mode_name(r->mode));
	else {
		cJSON_AddNullToObject(root, "reserve_mode");
		cJSON_AddItemToArray(missing, cJSON_CreateString("reserve_mode"));
	}
	if (r->have_workers)
		cJSON_AddNumberToObject(root, "workers", (double)r->workers);
	else {
		cJSON_AddNullToObject(root, "workers");
		cJSON_AddItemToArray(missing, cJSON_CreateString("workers"));
	}
	cJSON_AddItemToObject(root, "missing", missing);
	s = cJSON_Print(root);
	puts(s);
	cJSON_free(s);
	cJSON_Delete(root);
}

/* The queue column is as wide as its longest name (at least 16): a
 * name of 64 characters would push its row's counts out of their
 * columns. */
static void
print_queues(const struct queue_counts *q, size_t n)
{
	int tty = cli_isatty(), waits = 0, width = 16;
	size_t i;

	/* WAITING only when some job waits: the usual table keeps its shape. */
	for (i = 0; i < n; i++) {
		char *name = cli_visible(q[i].queue, tty);

		waits |= q[i].waiting > 0;
		if (strlen(name) > (size_t)width)
			width = (int)strlen(name);
		free(name);
	}
	printf("%-*s %9s %9s %s%9s %9s %9s  %s\n", width, "QUEUE", "READY", "DELAYED", waits ? "  WAITING " : "",
	    "RESERVED", "STALE", "FAILED", "OLDEST READY");
	for (i = 0; i < n; i++) {
		char oldest[32] = "-", w[32] = "";
		char *name = cli_visible(q[i].queue, tty);

		if (q[i].oldest_ready_s >= 0) /* "2m5s ago", as every relative time */
			timefmt_relative(-q[i].oldest_ready_s * 1000, oldest, sizeof oldest);
		if (waits)
			snprintf(w, sizeof w, "%9llu ", (unsigned long long)q[i].waiting);
		printf("%-*s %9llu %9llu %s%9llu %s%9llu%s %9llu  %s%s\n", width, name,
		    (unsigned long long)q[i].ready, (unsigned long long)q[i].delayed, w,
		    (unsigned long long)q[i].reserved, tty && q[i].stale ? "\033[1;31m" : "",
		    (unsigned long long)q[i].stale, tty && q[i].stale ? "\033[0m" : "",
		    (unsigned long long)q[i].failed, oldest, q[i].paused ? "  paused" : "");
		free(name);
	}
}

static void
print_table(const struct report *r)
{
	char workers[32] = "unknown";

	if (r->have_q)
		print_queues(r->q, r->n);
	else
		printf("queue counts: not available (the reason is on stderr)\n");
	if (r->have_workers)
		snprintf(workers, sizeof workers, "%llu", (unsigned long long)r->workers);
	printf("\nreserve mode: %s; workers alive: %s\n",
	    r->have_mode ? conf_reserve_mode_name(r->mode) : "unknown", workers);
}

/* Reads each part on its own, so that one slow part (a locked or huge
 * jobs table) costs only itself.  The probe touches jobs too: it is
 * skipped when the counts could not be read. */
static int
read_report(struct db *db, const struct conf *c, const char *only, struct report *r)
{
	char err[ERRSZ];

	memset(r, 0, sizeof *r);
	r->mode = c->worker.reserve_mode;
	r->have_workers = cli_part(
	    db, registry_count_alive(db, &r->workers, err), "status", "the count of live workers is", err);
	r->have_q = cli_part(
	    db, queue_status(db, c, only, &r->q, &r->n, err), "status", "the counts per queue are", err);
	r->have_mode = r->mode != RESERVE_AUTO;
	if (!r->have_mode && r->have_q)
		r->have_mode =
		    cli_part(db, queue_probe(db, &r->mode, err), "status", "the reservation mode is", err);
	else if (!r->have_mode)
		fprintf(stderr,
		    "jobq: status: the reservation mode is missing: not probed (jobs did not answer)\n");
	if (r->have_q && r->have_mode && r->have_workers)
		return 0;
	return r->have_q || r->have_workers ? EXIT_FAIL : EX_UNAVAILABLE;
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
	struct report r;
	struct conf *c;
	struct db *db;
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
	if ((rc = cli_open_cancelling(&c, &db)) != 0)
		return rc;
	/* A queue the configuration does not name is counted all the same
	 * when the tables hold it (plain SQL may write any queue, and the
	 * unfiltered table lists it), and unknown only when they do not. */
	rc = read_report(db, c, only, &r);
	if (only != NULL && !conf_has_queue(c, only) && r.have_q && r.n == 0) {
		cli_error("unknown queue '%s' (no [queue %s] section in %s, and no job in it)", only, only, c->path);
		rc = EX_DATAERR;
	} else if (r.have_q || r.have_workers) {
		if (json)
			print_json(c, &r);
		else
			print_table(&r);
	}
	if (r.have_q)
		queue_counts_free(r.q, r.n);
	db_free(db);
	conf_free(c);
	return rc;
}
