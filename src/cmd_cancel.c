/* cmd_cancel.c -- `jobq cancel`: end jobs for good, running ones
 * included.  A thin layer over cancel.c (one job) and bulk.c (a filter),
 * which the dashboard's buttons use too. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bulk.h"
#include "cancel.h"
#include "cli.h"
#include "duration.h"
#include "queue.h"
#include "queue_states.h"

#define WAIT_DEFAULT_MS 30000
#define WAIT_STEP_MS 200
#define SETTLED " before its next attempt (its handler had ended first, to be retried, or its worker died)"

struct opts {
	struct bulk_filter f;
	int yes, dry_run;
	int64_t wait_ms;
	char by[160];
};

static void
usage(void)
{
	printf("Usage: jobq cancel [--wait DURATION | --no-wait] ID...\n"
	       "       jobq cancel [--dry-run] [--yes] (-q QUEUE | -t TYPE) [--state STATE]\n"
	       "Cancel jobs: they end as 'cancelled', are never retried or dead-lettered, and no\n"
	       "on_success, on_dead or follow-up job comes of them.  A job no worker holds\n"
	       "(ready, delayed, stale) is cancelled at once.  A running job's worker, on any\n"
	       "host, stops its handler within a second: SIGTERM to its process group, SIGKILL\n"
	       "after kill_grace (a persistent handler is stopped and replaced).  A handler whose\n"
	       "outcome reached the database first keeps it; the command says which won.\n\n"
	       "  --wait DURATION   wait this long for running jobs to end (default 30s)\n"
	       "  --no-wait         return once the cancel is requested\n"
	       "  -q, --queue QUEUE, -t, --type TYPE\n"
	       "                    every job of that queue and/or type ...\n"
	       "  --state STATE     ... in that state only: ready, delayed, waiting, reserved or stale\n"
	       "  --dry-run         count the jobs a filter matches; change nothing\n"
	       "  --yes             do not ask (a filter asks on a terminal, and without one\n"
	       "                    refuses unless given --yes)\n\n"
	       "Exit status: 0 every job is cancelled or its cancel requested; 1 a job had\n"
	       "ended before (it is named, with how); 64 usage; 65 an ID no job has, an unknown\n"
	       "queue or type (nothing is cancelled); 69 database unavailable, or jobs of a\n"
	       "filter it could not cancel (each named; the others are cancelled).\n");
}

/* Each ID, parsed and known to the database, or nothing happens; *n
 * gets how many there are, as an id given twice is one job, cancelled
 * once (as `failed retry` takes them). */
static int
collect_ids(struct db *db, int argc, char **argv, uint64_t *ids, int *n)
{
	char err[ERRSZ], ended[32];
	struct buf unknown;
	int i, k, found, missing = 0;
	uint64_t id;

	for (i = 0, *n = 0; i < argc; i++) {
		if (cli_parse_id(argv[i], &id) < 0) /* parse() refused it already */
			return EX_USAGE;
		for (k = 0; k < *n && ids[k] != id; k++)
			;
		if (k == *n)
			ids[(*n)++] = id;
	}
	buf_init(&unknown);
	for (i = 0; i < *n; i++) {
		if (cancel_ended(db, ids[i], ended, sizeof ended, &found, err) != DB_OK) {
			cli_error("cancel: %s", err);
			buf_free(&unknown);
			return EX_UNAVAILABLE;
		}
		if (!found)
			buf_printf(&unknown, "%s%llu", missing++ ? ", " : "", (unsigned long long)ids[i]);
	}
	if (missing > 0) /* one line, every unknown id in it */
		cli_error("cancel: no job %s; nothing cancelled", unknown.data);
	buf_free(&unknown);
	return missing > 0 ? EX_DATAERR : 0;
}

/* Says how job id ended when it had before the cancel; 1 when it had.
 * since is NULL when it had ended before this command asked (cancelled
 * too: exit 1, as for any end), else what this command did meanwhile:
 * a cancel found is its own, said with since after it. */
static int
say_ended(struct db *db, uint64_t id, const char *since, int *rc)
{
	char err[ERRSZ], ended[32];
	int found;

	if (cancel_ended(db, id, ended, sizeof ended, &found, err) != DB_OK) {
		cli_error("cancel: job %llu: %s", (unsigned long long)id, err);
		*rc = EX_UNAVAILABLE;
		return 1;
	}
	if (strcmp(ended, "queued") == 0)
		return 0;
	if (strcmp(ended, "cancelled") == 0 && since != NULL)
		printf("job %llu: cancelled%s\n", (unsigned long long)id, since);
	else {
		printf("job %llu: had already ended as %s%s\n", (unsigned long long)id, ended,
		    since != NULL && *since ? "; its handler's outcome came first" : "");
		if (*rc == 0)
			*rc = 1;
	}
	return 1;
}

/* Waits up to o->wait_ms for the running jobs in ids[0..n) (0 where
 * settled) to end, saying how each did.  A connection lost meanwhile (a
 * server restart) is made again while the wait lasts; only a server
 * still gone at its end fails the command. */
static void
wait_running(struct db *db, const struct opts *o, uint64_t *ids, int n, int *rc)
{
	int64_t until = mono_ms() + o->wait_ms;
	int i, left = n, gone = 0;
	char err[ERRSZ];

	while (left > 0 && mono_ms() < until) {
		struct timespec ts = { 0, WAIT_STEP_MS * 1000000L };
		int settled, step;

		nanosleep(&ts, NULL);
		for (i = 0; i < n; i++) {
			if (ids[i] == 0)
				continue;
			if ((step = cancel_settle(db, ids[i], o->by, &settled, err)) == DB_EGONE) {
				gone = db_connect(db, 1, err) != DB_OK;
				break;
			}
			if (step != DB_OK) {
				cli_error("cancel: job %llu: %s", (unsigned long long)ids[i], err);
				*rc = EX_UNAVAILABLE;
				return;
			}
			gone = 0;
			/* Settled here: no worker stopped it; its handler's attempt had
			 * ended first with a retry (or its worker died). */
			if (say_ended(db, ids[i], settled ? SETTLED : " (its handler was stopped)", rc))
				ids[i] = 0, left--;
		}
	}
	if (gone && left > 0) {
		cli_error("cancel: %s", err);
		*rc = EX_UNAVAILABLE;
	}
	for (i = 0; i < n; i++)
		if (ids[i] != 0)
			printf("job %llu: still stopping; it ends as cancelled when its handler exits\n",
			    (unsigned long long)ids[i]);
}

static int
cancel_ids(struct db *db, const struct opts *o, int argc, char **argv)
{
	uint64_t *ids = xcalloc((size_t)argc + 1, sizeof *ids), *running = xcalloc((size_t)argc + 1, sizeof *ids);
	int i, n = 0, nids = 0, rc = collect_ids(db, argc, argv, ids, &nids);
	char err[ERRSZ];

	for (i = 0; rc == 0 && i < nids; i++) {
		enum cancel_state st;

		/* Its request is the same the second time: a first whose answer
		 * was lost either took (the second finds it done) or did not. */
		int step = queue_cancel(db, ids[i], o->by, &st, err), again = 0;

		if (step == DB_EGONE && db_connect(db, 1, err) == DB_OK)
			step = queue_cancel(db, ids[i], o->by, &st, err), again = 1;
		if (step != DB_OK) {
			cli_error("cancel: job %llu: %s", (unsigned long long)ids[i], err);
			rc = EX_UNAVAILABLE;
		} else if (st == CANCEL_DONE)
			printf("job %llu: cancelled\n", (unsigned long long)ids[i]);
		else if (st == CANCEL_ENDED) /* again: the first try may have cancelled it */
			say_ended(db, ids[i], again ? "" : NULL, &rc);
		else {
			printf("job %llu: running; its worker is stopping it\n", (unsigned long long)ids[i]);
			running[n++] = ids[i];
		}
	}
	if (n > 0 && o->wait_ms > 0 && rc != EX_UNAVAILABLE)
		wait_running(db, o, running, n, &rc);
	free(running);
	free(ids);
	return rc;
}

#define CHUNK 100 /* jobs a transaction of a filter's cancel */

/* A filter's cancel stopped by err after n jobs cancelled: says so, and
 * when the answer to a chunk's COMMIT was lost (db_unsure) that the
 * chunk may have been cancelled too.  EX_UNAVAILABLE. */
static int
lost(const struct db *db, uint64_t n, const char *err)
{
	if (db_unsure(db))
		cli_error("cancel: %s (%llu job%s cancelled before it; the connection was lost before the answer to "
		          "the next chunk of up to %d came: they may have been cancelled too; look (jobq status) "
		          "before running it again)",
		    err, (unsigned long long)n, n == 1 ? "" : "s", CHUNK);
	else
		cli_error("cancel: %s (%llu job%s cancelled before it)", err, (unsigned long long)n, n == 1 ? "" : "s");
	return EX_UNAVAILABLE;
}

/* The jobs a filter matches: counted, confirmed, then cancelled a chunk
 * at a time, one transaction each.  t[0] counts the jobs cancelled (or
 * asked of their workers), t[1] those that had ended, t[2] those the
 * database would not let go (a lock held past its reruns): each named. */
static void
tally(void *arg, uint64_t id, int rc, const char *err)
{
	uint64_t *t = arg;

	if (rc != DB_OK && rc != QUEUE_NOT_FOUND)
		cli_error("cancel: job %llu: not cancelled: %s", (unsigned long long)id, err);
	t[rc == DB_OK ? 0 : rc == QUEUE_NOT_FOUND ? 1 : 2]++;
}

static int
cancel_filter(struct db *db, const struct opts *o)
{
	const struct bulk_kind *k = bulk_kind_find("cancel");
	struct bulk_filter f = o->f;
	uint64_t n, upto, after = 0, t[3] = { 0, 0, 0 }, down = 0;
	char err[ERRSZ];
	int more = 1;

	if (bulk_count(db, k, &o->f, &n, &upto, err) != DB_OK)
		goto fail;
	if (o->dry_run || n == 0) {
		printf("%llu job%s to cancel%s\n", (unsigned long long)n, n == 1 ? "" : "s",
		    o->dry_run ? " (dry run: nothing changed)" : "");
		return 0;
	}
	if (!o->yes && !cli_confirm("cancel %llu job%s?", (unsigned long long)n, n == 1 ? "" : "s")) {
		cli_error("cancel: not confirmed; nothing cancelled");
		return 1;
	}
	f.down = &down;
	while (more)
		if (bulk_step(db, k, &f, after, upto, CHUNK, tally, t, &after, &more, err) != DB_OK)
			return lost(db, t[0] + down, err);
	printf("%llu job%s cancelled (running ones: their workers stop them within a second)",
	    (unsigned long long)(t[0] + down), t[0] + down == 1 ? "" : "s");
	if (down > 0)
		printf("; %llu of them because a job they waited for was", (unsigned long long)down);
	if (t[1] > 0)
		printf("; %llu had ended meanwhile", (unsigned long long)t[1]);
	if (t[2] > 0)
		printf("; %llu not cancelled (named above): run the command again", (unsigned long long)t[2]);
	printf("\n");
	return t[2] > 0 ? EX_UNAVAILABLE : 0;
fail:
	cli_error("cancel: %s", err);
	return EX_UNAVAILABLE;
}

/* 1 when s is a state a filter's --state may name (a queued one). */
static int
known_state(const char *s)
{
	static const char *const states[] = QUEUED_STATES;
	size_t i;

	for (i = 0; i < ARRAY_LEN(states); i++)
		if (strcmp(s, states[i]) == 0)
			return 1;
	return 0;
}

/* The filter's names: each configured, or held by a job the filter
 * matches (plain SQL may write any queue and type, and `jobq status`
 * counts them: such jobs can be cancelled), else EX_DATAERR. */
static int
check_filter(struct db *db, const struct conf *c, const struct opts *o)
{
	int queue_known = o->f.queue == NULL || conf_has_queue(c, o->f.queue),
	    type_known = o->f.type == NULL || conf_handler(c, o->f.type) != NULL;
	uint64_t n = 0, upto;
	char err[ERRSZ];

	if (queue_known && type_known)
		return 0;
	if (bulk_count(db, bulk_kind_find("cancel"), &o->f, &n, &upto, err) != DB_OK) {
		cli_error("cancel: %s", err);
		return EX_UNAVAILABLE;
	}
	if (n > 0)
		return 0;
	if (!queue_known)
		cli_error("cancel: unknown queue '%s' (no [queue %s] section in %s, and no job matches)", o->f.queue,
		    o->f.queue, c->path);
	else
		cli_error("cancel: unknown job type '%s' (no [handler %s] section in %s, and no job matches)",
		    o->f.type, o->f.type, c->path);
	return EX_DATAERR;
}

static int
parse(int argc, char **argv, struct opts *o)
{
	static const struct option longopts[] = { CLI_COMMON_LONGOPTS, { "queue", required_argument, NULL, 'q' },
		{ "type", required_argument, NULL, 't' }, { "state", required_argument, NULL, 's' },
		{ "yes", no_argument, NULL, 'y' }, { "dry-run", no_argument, NULL, 'n' },
		{ "wait", required_argument, NULL, 'w' }, { "no-wait", no_argument, NULL, 'W' },
		{ NULL, 0, NULL, 0 } };
	char err[ERRSZ];
	int opt, rc, i, waits = 0;
	uint64_t id;

	o->wait_ms = WAIT_DEFAULT_MS;
	while ((opt = getopt_long(argc, argv, CLI_COMMON_SHORTOPTS "q:t:", longopts, NULL)) != -1) {
		if (opt == 'q')
			o->f.queue = optarg;
		else if (opt == 't')
			o->f.type = optarg;
		else if (opt == 's')
			o->f.state = optarg;
		else if (opt == 'y')
			o->yes = 1;
		else if (opt == 'n')
			o->dry_run = 1;
		else if (opt == 'W')
			o->wait_ms = 0, waits |= 1;
		else if (opt == 'w') {
			waits |= 2;
			if (duration_parse(optarg, &o->wait_ms, err) < 0)
				return cli_usage_error("cancel", "--wait: %s", err);
		} else if ((rc = cli_common_opt(opt, "cancel", usage)) != -2)
			return rc < 0 ? EX_USAGE : rc;
	}
	if (waits == 3)
		return cli_usage_error("cancel", "--wait DURATION or --no-wait, not both");
	if (o->f.queue == NULL && o->f.type == NULL && o->f.state != NULL)
		return cli_usage_error("cancel", "--state needs --queue or --type");
	/* checked here, before the filter asks for --yes, so that a script
	 * is told what is wrong with its command line first */
	if (o->f.state != NULL && !known_state(o->f.state))
		return cli_usage_error("cancel", "--state: ready, delayed, waiting, reserved or stale, not '%s'", o->f.state);
	if ((o->f.queue != NULL || o->f.type != NULL) == (optind < argc))
		return cli_usage_error(
		    "cancel", optind < argc ? "IDs or a filter (--queue, --type), not both" : "which jobs? (IDs, or --queue/--type)");
	if (optind < argc && (o->yes || o->dry_run))
		return cli_usage_error("cancel", "--yes and --dry-run go with a filter");
	/* before connecting: a typo is a usage error whether or not the
	 * database answers */
	for (i = optind; i < argc; i++)
		if (cli_parse_id(argv[i], &id) < 0)
			return cli_usage_error("cancel", "'%s' is not a job id", argv[i]);
	if (optind >= argc && waits != 0) /* a filter's cancel does not wait */
		return cli_usage_error("cancel", "--wait and --no-wait go with IDs, not a filter");
	return -1;
}

int
cmd_cancel(int argc, char **argv)
{
	struct opts o = { 0 };
	struct conf *c;
	struct db *db;
	int rc;

	if ((rc = parse(argc, argv, &o)) >= 0)
		return rc;
	if (optind >= argc && (rc = cli_bulk_check("cancel", "cancels jobs", o.yes, o.dry_run)) != 0)
		return rc;
	if ((rc = cli_open(0, &c, &db)) != 0)
		return rc;
	cli_who(o.by, sizeof o.by);
	o.f.by = o.by;
	if (optind < argc)
		rc = cancel_ids(db, &o, argc - optind, argv + optind);
	else if ((rc = check_filter(db, c, &o)) == 0)
		rc = cancel_filter(db, &o);
	db_free(db);
	conf_free(c);
	return rc;
}
