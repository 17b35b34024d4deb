/* cmd_work.c -- `jobq work`: options, then the worker loop. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "duration.h"
#include "otlp.h"
#include "queue.h"
#include "worker.h"

/* --help */
static void
usage(void)
{
	printf("Usage: jobq work [options]\n"
	       "Reserve jobs and run their handlers until stopped.\n\n"
	       "  -q, --queue LIST       queues to serve, drained in this order (default: [worker] queues)\n"
	       "  -j, --concurrency N    run up to N handlers at once (default: [worker] concurrency)\n"
	       "      --once             take one job (or none), finish it, exit\n"
	       "      --max N            exit after N jobs\n"
	       "      --max-time TIME    take no new job after TIME (seconds, or 90s, 5m...), then exit\n"
	       "      --stop-when-empty  exit as soon as no job is ready now\n"
	       "      --schedule         also enqueue due scheduled jobs (at most one tick a minute)\n"
	       "      --metrics-listen ADDR:PORT  serve this worker's /metrics there (default: [worker]\n"
	       "                         metrics_listen; 'off': none)\n"
	       "      --otlp-endpoint URL  export a span per run to this OTLP/HTTP collector (default:\n"
	       "                         [worker] otlp_endpoint; 'off': none)\n"
	       "      --log-format FMT   text (default) or json: one line per job outcome on stderr\n"
	       "      --quiet            log only warnings and errors (default: [worker] log_level)\n"
	       "  -v, --verbose          log debugging detail as well, such as each job's start\n\n"
	       "SIGTERM or SIGINT: take no new job, let running handlers finish, exit 0.\n"
	       "A second one: terminate the handlers and give their jobs back.\n"
	       "For cron (shared hosting): * * * * * jobq work --max-time 55 --stop-when-empty --quiet\n");
}

enum { OPT_ONCE = 256, OPT_MAX, OPT_MAX_TIME, OPT_STOP_WHEN_EMPTY, OPT_LOG_FORMAT, OPT_SCHEDULE, OPT_QUIET,
	OPT_METRICS_LISTEN, OPT_OTLP_ENDPOINT };

/* Every queue in queues has a [queue] section, and is named once;
 * EX_DATAERR (said) when one has not, as for enqueue -q and status -q,
 * EX_USAGE for one given twice (the same in [worker] queues is refused
 * as the configuration loads). */
static int
check_queues(const struct conf *c, char **queues)
{
	size_t i, k;

	for (i = 0; queues[i] != NULL; i++) {
		for (k = 0; k < i; k++)
			if (strcmp(queues[k], queues[i]) == 0)
				return cli_usage_error("work", "-q: '%s' is listed twice", queues[i]);
		if (!conf_has_queue(c, queues[i])) {
			cli_error("unknown queue '%s' (no [queue %s] section in %s)", queues[i], queues[i],
			    c->path);
			return EX_DATAERR;
		}
	}
	return 0;
}

/* What the command line asked for: the worker's options, and two that
 * are read once the configuration is loaded. */
struct work_args {
	struct worker_opts o;
	const char *queue_arg; /* NULL: [worker] queues */
	const char *log_arg;   /* NULL: text */
};

/* Takes one option of `jobq work` (not a common one); returns 0, or the
 * exit status of a usage error. */
static int
take_opt(int opt, struct work_args *a)
{
	char err[ERRSZ];
	int64_t v;

	switch (opt) {
	case 'q':
		a->queue_arg = optarg;
		break;
	case 'j':
		if (str_to_int64(optarg, 1, 1024, &v) < 0)
			return cli_usage_error("work", "--concurrency: expected 1 to 1024, not '%s'", optarg);
		a->o.concurrency = (unsigned)v;
		break;
	case OPT_ONCE:
		a->o.once = 1;
		break;
	case OPT_MAX:
		if (str_to_int64(optarg, 1, INT64_MAX, &v) < 0)
			return cli_usage_error("work", "--max: expected a positive number, not '%s'", optarg);
		a->o.max_jobs = (uint64_t)v;
		break;
	case OPT_MAX_TIME:
		/* duration_parse fills err only when it fails. */
		if (duration_parse(optarg, &a->o.max_time_ms, err) < 0)
			return cli_usage_error("work", "--max-time: %s", err);
		if (a->o.max_time_ms <= 0)
			return cli_usage_error("work",
			    "--max-time: expected a time above 0 (e.g. 55, 90s, 5m), not '%s'", optarg);
		break;
	case OPT_STOP_WHEN_EMPTY:
		a->o.stop_when_empty = 1;
		break;
	case OPT_SCHEDULE:
		a->o.schedule = 1;
		break;
	case OPT_LOG_FORMAT:
		a->log_arg = optarg;
		break;
	case OPT_METRICS_LISTEN:
		if (strcmp(optarg, "off") != 0 && (strrchr(optarg, ':') == NULL ||
		                                      str_to_int64(strrchr(optarg, ':') + 1, 0, 65535, &v) < 0))
			return cli_usage_error(
			    "work", "--metrics-listen: expected ADDR:PORT (port 0-65535) or off, not '%s'", optarg);
		a->o.metrics_listen = optarg;
		break;
	case OPT_OTLP_ENDPOINT:
		if (strcmp(optarg, "off") != 0 && otlp_endpoint_check(optarg, err) < 0)
			return cli_usage_error("work", "--otlp-endpoint: %s, not '%s'", err, optarg);
		a->o.otlp_endpoint = optarg;
		break;
	case 'v':
		cli_log_level = LOG_DEBUG;
		break;
	case OPT_QUIET:
		cli_log_level = LOG_WARN;
		break;
	}
	return 0;
}

/* Reads the command line into a.  Returns -1 to go on, or the exit
 * status (--help, --version, a usage error). */
static int
parse_args(int argc, char **argv, struct work_args *a)
{
	static const struct option longopts[] = {
		CLI_COMMON_LONGOPTS,
		{ "queue", required_argument, NULL, 'q' },
		{ "concurrency", required_argument, NULL, 'j' },
		{ "once", no_argument, NULL, OPT_ONCE },
		{ "max", required_argument, NULL, OPT_MAX },
		{ "max-time", required_argument, NULL, OPT_MAX_TIME },
		{ "stop-when-empty", no_argument, NULL, OPT_STOP_WHEN_EMPTY },
		{ "log-format", required_argument, NULL, OPT_LOG_FORMAT },
		{ "schedule", no_argument, NULL, OPT_SCHEDULE },
		{ "metrics-listen", required_argument, NULL, OPT_METRICS_LISTEN },
		{ "otlp-endpoint", required_argument, NULL, OPT_OTLP_ENDPOINT },
		{ "verbose", no_argument, NULL, 'v' },
		{ "quiet", no_argument, NULL, OPT_QUIET },
		{ NULL, 0, NULL, 0 },
	};
	int opt, rc;

	memset(a, 0, sizeof *a);
	while ((opt = getopt_long(argc, argv, CLI_COMMON_SHORTOPTS "q:j:v", longopts, NULL)) != -1) {
		if ((rc = cli_common_opt(opt, "work", usage)) >= 0)
			return rc;
		if (rc == -2)
			continue;
		if ((rc = take_opt(opt, a)) != 0)
			return rc;
	}
	if (optind < argc)
		return cli_usage_error("work", "unexpected argument '%s'", argv[optind]);
	if (a->o.once && a->o.max_jobs > 0)
		return cli_usage_error("work", "--once or --max N, not both (--once is --max 1)");
	return -1;
}

/* Applies the options that need the configuration (log format, queues,
 * concurrency) and checks them against it, before the database is asked
 * anything: a mistake the input shows is refused whether or not it is
 * up.  Returns 0 or the exit status. */
static int
apply_args(const struct conf *c, struct work_args *a)
{
	if (a->log_arg != NULL) {
		enum log_format f;

		if (log_format_parse(a->log_arg, &f) < 0)
			return cli_usage_error(
			    "work", "--log-format: expected text or json, not '%s'", a->log_arg);
		log_set_format(f);
	}
	if (a->queue_arg != NULL) {
		if (split_list(a->queue_arg, &a->o.queues) <= 0)
			return cli_usage_error("work", "--queue: expected a comma-separated list of queues");
	} else
		a->o.queues = c->worker.queues;
	if (a->o.concurrency == 0)
		a->o.concurrency = c->worker.concurrency;
	return check_queues(c, a->o.queues);
}

/* Output limits the server cannot store are a configuration error,
 * refused here like in `jobq check`, rather than clamped with a warning:
 * the operator asked for that much output to be kept, and a warning in a
 * log nobody reads would silently keep less.  (If the server's limit
 * shrinks while the worker runs, queue_write cuts the texts to fit and
 * says so for each job.) */
static int
check_limits(const struct conf *c, struct db *db)
{
	char err[ERRSZ];

	if (queue_check_limits(c, db_max_packet(db), err) < 0) {
		cli_error("%s", err);
		return EX_CONFIG;
	}
	return 0;
}

/* `jobq work`: the options, then the worker's loop until it stops. */
int
cmd_work(int argc, char **argv)
{
	struct work_args a;
	struct conf *c;
	struct db *db;
	int rc;

	if ((rc = parse_args(argc, argv, &a)) >= 0)
		return rc;
	worker_hold_signals();
	if ((rc = cli_conf(CONF_CHECK_EXEC, &c)) != 0)
		return rc;
	if ((rc = apply_args(c, &a)) == 0 && (rc = cli_connect(c, &db)) == 0) {
		if ((rc = check_limits(c, db)) == 0)
			rc = worker_run(c, db, &a.o);
		db_free(db);
	}
	if (a.o.queues != c->worker.queues)
		strv_free(a.o.queues);
	conf_free(c);
	return rc;
}
