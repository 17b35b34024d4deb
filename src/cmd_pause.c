/* cmd_pause.c -- `jobq pause QUEUE` and `jobq resume QUEUE`: stop and
 * restart claiming from a queue, for every worker, through the
 * database (flow.c). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "flow.h"

static void
usage_pause(void)
{
	printf("Usage: jobq pause QUEUE\n"
	       "Stop every worker, on every host, from taking jobs of QUEUE: they notice\n"
	       "within one poll.  Jobs already running finish; jobs can still be enqueued.\n"
	       "The pause is kept in the database until 'jobq resume QUEUE'.\n\n"
	       "Exit status: 0 (also when it was already paused); 65 unknown queue;\n"
	       "69 database unavailable.\n");
}

static void
usage_resume(void)
{
	printf("Usage: jobq resume QUEUE\n"
	       "Let workers take jobs of QUEUE again after 'jobq pause'.\n\n"
	       "A queue no [queue] section lists any more is resumed if it is paused.\n\n"
	       "Exit status: 0 (also when it was not paused); 65 unknown queue;\n"
	       "69 database unavailable.\n");
}

/* flow_pause, rerun while it loses a deadlock: on a Galera cluster two
 * pauses (or resumes) of one queue through two nodes write the same row,
 * and the one that loses certification gets error 1213 (jobq's sessions
 * turn off the server's own rerun, db_galera.c).  Rerun, it finds the
 * other's change made and says the queue was so already. */
static int
pause_retried(struct db *db, const char *queue, int pause, int *changed, char *err)
{
	int rc, attempt = 0;

	do
		rc = flow_pause(db, queue, pause, changed, err);
	while (db_retry_after(rc, ++attempt));
	return rc;
}

/* Both commands: pause is 1 for `pause`, 0 for `resume`. */
static int
pause_or_resume(int argc, char **argv, int pause)
{
	static const struct option longopts[] = { CLI_COMMON_LONGOPTS, { NULL, 0, NULL, 0 } };
	const char *cmd = pause ? "pause" : "resume";
	struct conf *c;
	struct db *db;
	char err[ERRSZ];
	int opt, rc, changed, known;

	while ((opt = getopt_long(argc, argv, CLI_COMMON_SHORTOPTS, longopts, NULL)) != -1)
		if ((rc = cli_common_opt(opt, cmd, pause ? usage_pause : usage_resume)) != -2)
			return rc < 0 ? EX_USAGE : rc;
	if (optind >= argc)
		return cli_usage_error(cmd, "which queue? (jobq %s QUEUE)", cmd);
	if (optind + 1 < argc)
		return cli_usage_error(cmd, "unexpected argument '%s'", argv[optind + 1]);
	if ((rc = cli_conf(0, &c)) != 0)
		return rc;
	/* The [queue] sections are the queues a pause may name, judged
	 * before connecting (65 whether or not the database is up).  A queue
	 * the configuration no longer lists may still be paused (status
	 * shows it so): resume lets it go, and only then; no row can have a
	 * name outside the rule. */
	known = conf_has_queue(c, argv[optind]);
	if (!known && (pause || !conf_valid_name(argv[optind]))) {
		cli_error("%s: unknown queue '%s' (no [queue %s] section in %s)", cmd, argv[optind],
		    argv[optind], c->path);
		conf_free(c);
		return EX_DATAERR;
	}
	if ((rc = cli_connect(c, &db)) != 0) {
		conf_free(c);
		return rc;
	}
	if (pause_retried(db, argv[optind], pause, &changed, err) != DB_OK)
		rc = cli_write_failed(db, "jobq status", "%s: %s", cmd, err);
	if (rc == 0 && !known && !changed) {
		cli_error("%s: unknown queue '%s' (no [queue %s] section in %s)", cmd, argv[optind],
		    argv[optind], c->path);
		rc = EX_DATAERR;
	} else if (rc == 0 && changed)
		printf("queue %s %s%s\n", argv[optind], pause ? "paused" : "resumed",
		    known ? "" : " (it has no [queue] section)");
	else if (rc == 0)
		printf("queue %s was %s\n", argv[optind], pause ? "already paused" : "not paused");
	db_free(db);
	conf_free(c);
	return rc;
}

int
cmd_pause(int argc, char **argv)
{
	return pause_or_resume(argc, argv, 1);
}

int
cmd_resume(int argc, char **argv)
{
	return pause_or_resume(argc, argv, 0);
}
