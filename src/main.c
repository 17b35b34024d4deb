/* main.c -- `jobq [-c FILE] COMMAND [options]`: find the command, run it. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const struct cli_cmd commands[] = {
	{ "init", cmd_init, "create or upgrade the database schema" },
	{ "check", cmd_check, "check the configuration and the database" },
	{ "enqueue", cmd_enqueue, "add a job (or many, with --batch)" },
	{ "work", cmd_work, "run handlers for jobs until told to stop" },
	{ "status", cmd_status, "count jobs per queue and state" },
	{ "show", cmd_show, "show one job and its run history" },
	{ "failed", cmd_failed, "list, show, retry, forget or clear dead-lettered jobs" },
	{ "release-stale", cmd_release_stale, "return jobs whose lease expired" },
	{ "cancel", cmd_cancel, "cancel jobs, running ones included" },
	{ "group", cmd_group, "show a group of jobs and its callbacks" },
	{ "pause", cmd_pause, "stop workers taking jobs from a queue" },
	{ "resume", cmd_resume, "let workers take jobs from a paused queue again" },
	{ "workers", cmd_workers, "list the workers and what they run" },
	{ "prune", cmd_prune, "trim run history and old dead-letter rows" },
	{ "schedule", cmd_schedule, "enqueue due scheduled jobs; list, run, add, edit schedules" },
	{ "cron", cmd_cron, "check a cron expression: description and next fire times" },
	{ "serve", cmd_serve, "serve the web dashboard and /metrics" },
	{ "passwd", cmd_passwd, "hash a password for the dashboard's [user NAME]" },
	{ "audit", cmd_audit, "the audit trail: who did what and when, newest first" },
	{ "sessions", cmd_sessions, "list who is logged in to the dashboard; end a user's sessions" },
	{ "user", cmd_user, "list, add, change and remove the dashboard's users kept in the database" },
};

static void
usage(FILE *fp)
{
	size_t i;

	fprintf(fp,
	    "Usage: jobq [-c FILE] COMMAND [options]\n"
	    "A job queue that lives in your MySQL/MariaDB database.\n\n"
	    "Commands:\n");
	for (i = 0; i < ARRAY_LEN(commands); i++)
		fprintf(fp, "  %-14s %s\n", commands[i].name, commands[i].summary);
	fprintf(fp, "  %-14s %s\n", "help", "this list, or 'jobq help COMMAND': the command's help");
	fprintf(fp,
	    "\nOptions:\n"
	    "  -c, --config FILE  configuration file (default: $JOBQ_CONFIG or %s)\n"
	    "      --quiet        log only warnings and errors (for cron)\n"
	    "  -v, --verbose      log debugging detail as well\n"
	    "  -h, --help         show this help\n"
	    "  -V, --version      show the version\n\n"
	    "'jobq COMMAND --help' describes a command.  See jobq(1).\n",
	    SYSCONFDIR "/jobq.ini");
}

/* `jobq help [COMMAND]`: the list of commands, or what COMMAND --help
 * prints. */
static int
help(int argc, char **argv)
{
	static char opt_help[] = "--help";
	char *cargv[3];
	size_t i;

	/* help help, help --help, help -h: the list, which says what help does */
	if (argc < 2 || strcmp(argv[1], "help") == 0 || strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "-h") == 0) {
		usage(stdout);
		return 0;
	}
	if (argc > 2) {
		fprintf(stderr, "jobq help: one command at a time, not '%s' too\nTry 'jobq --help'.\n", argv[2]);
		return EX_USAGE;
	}
	for (i = 0; i < ARRAY_LEN(commands); i++)
		if (strcmp(argv[1], commands[i].name) == 0) {
			static char name[64];

			snprintf(name, sizeof name, "jobq %s", commands[i].name);
			cargv[0] = name;
			cargv[1] = opt_help;
			cargv[2] = NULL;
			optind = 0;
			return commands[i].run(2, cargv);
		}
	fprintf(stderr, "jobq help: unknown command '%s'\nTry 'jobq --help'.\n", argv[1]);
	return EX_USAGE;
}

/* Opens /dev/null on any of descriptors 0-2 that is closed (cron and
 * some supervisors start programs that way), so that no pipe or socket
 * we open later lands on them. */
static void
ensure_std_fds(void)
{
	int fd;

	for (fd = 0; fd < 3; fd++)
		if (fcntl(fd, F_GETFD) < 0 && open("/dev/null", O_RDWR) < 0)
			fatal("open /dev/null: %s", strerror(errno));
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "quiet", no_argument, NULL, 'Q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ NULL, 0, NULL, 0 },
	};
	size_t i;
	int opt;

	ensure_std_fds();
	argv[0] = (char *)"jobq"; /* getopt's messages name the program */
	while ((opt = getopt_long(argc, argv, "+c:hVv", longopts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			if (*optarg == '\0') {
				fprintf(stderr, "jobq: -c: an empty file name\nTry 'jobq --help'.\n");
				return EX_USAGE;
			}
			cli_config_path = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("jobq %s\n", PACKAGE_VERSION);
			return 0;
		case 'Q':
			cli_log_level = LOG_WARN;
			break;
		case 'v':
			cli_log_level = LOG_DEBUG;
			break;
		default:
			fprintf(stderr, "Try 'jobq --help'.\n");
			return EX_USAGE;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return EX_USAGE;
	}
	if (strcmp(argv[optind], "help") == 0)
		return help(argc - optind, argv + optind);
	for (i = 0; i < ARRAY_LEN(commands); i++)
		if (strcmp(argv[optind], commands[i].name) == 0) {
			static char name[64];

			argc -= optind;
			argv += optind;
			snprintf(name, sizeof name, "jobq %s", commands[i].name);
			argv[0] = name;
			optind = 0; /* 0 resets getopt for the command's own options */
			return commands[i].run(argc, argv);
		}
	fprintf(stderr, "jobq: unknown command '%s'\nTry 'jobq --help'.\n", argv[optind]);
	return EX_USAGE;
}
