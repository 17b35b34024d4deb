/* cmd_group.c -- `jobq group show ID|NAME [--json]`: a group of jobs
 * (groups.c): its counts by how its jobs ended and by the state of those
 * still queued, the jobs of it that wait and what for, and its
 * callbacks. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "groups.h"
#include "queue_states.h"
#include "timefmt.h"

/* The most waiting jobs listed. */
#define WAITING_MAX 100

static void
usage(void)
{
	printf("Usage: jobq group show [--json] ID|NAME\n"
	       "Show a group of jobs (jobq enqueue --batch --group NAME): how many it holds,\n"
	       "how many ended done, dead, cancelled or expired, how many of the others are\n"
	       "ready, delayed, waiting, reserved or stale, the jobs of it that wait for other\n"
	       "jobs (up to 100) and which, and its callbacks: the job each is, and its state.\n"
	       "An ID is all digits (group names never are).\n\n"
	       "      --json   print JSON\n\n"
	       "Exit status: 0 shown; 64 usage; 65 no such group; 69 database unavailable.\n");
}

/* "fanin: job 12 (done)", "fanin: job 12 (dead, forgotten from the
 * dead letter)" (jobq show says forgotten of it), "fanin: not
 * enqueued", or "-". */
static void
callback_text(const char *type, uint64_t job, const char *state, int forgotten, char *out, size_t len)
{
	if (type[0] == '\0')
		snprintf(out, len, "-");
	else if (job == 0)
		snprintf(out, len, "%s: not enqueued", type);
	else
		snprintf(out, len, "%s: job %llu (%s%s)", type, (unsigned long long)job, state,
		    forgotten ? ", forgotten from the dead letter" : "");
}

static void
print_text(const struct timefmt *f, const struct group_view *v, const struct group_wait *w, size_t nw)
{
	static const char *const states[] = QUEUED_STATES;
	char cb[256], t[96];
	size_t i, k;

	printf("group %llu: %s\n", (unsigned long long)v->id, v->name);
	printf("state:       %s\n", v->ended_at[0] ? "ended"
	        : v->holds                          ? "open (being enqueued)"
	        : v->total == 0                     ? "open (empty: no job has joined it)"
	                                            : "open");
	printf("created:     %s\n", timefmt_human(f, v->created_at, 1, t, sizeof t));
	if (v->ended_at[0])
		printf("ended:       %s\n", timefmt_human(f, v->ended_at, 1, t, sizeof t));
	printf("jobs:        %llu: %llu done, %llu dead, %llu cancelled, %llu expired\n",
	    (unsigned long long)v->total, (unsigned long long)v->done, (unsigned long long)v->dead,
	    (unsigned long long)v->cancelled, (unsigned long long)v->expired);
	printf("queued:     ");
	for (i = 0; i < ARRAY_LEN(states); i++)
		printf(" %llu %s%s", (unsigned long long)v->queued[i], states[i],
		    i + 1 < ARRAY_LEN(states) ? "," : "\n");
	callback_text(v->on_complete, v->complete_job, v->complete_state, v->complete_forgotten, cb, sizeof cb);
	printf("on-complete: %s\n", cb);
	callback_text(v->on_success, v->success_job, v->success_state, v->success_forgotten, cb, sizeof cb);
	printf("on-success:  %s\n", cb);
	for (i = 0; i < nw; i++) {
		printf("%s job %llu waits for", i == 0 ? "waiting:    " : "            ", (unsigned long long)w[i].id);
		for (k = 0; k < w[i].nafter; k++)
			printf("%s %llu", k ? "," : "", (unsigned long long)w[i].after[k]);
		printf("\n");
	}
}

/* The same object the dashboard's GET /api/groups/ID answers with. */
static void
print_json(const struct group_view *v, const struct group_wait *w, size_t nw)
{
	cli_print_json(groups_json(v, w, nw)); /* frees it */
}

/* `group show`: reads the group and what it holds, and prints it. */
static int
show(const char *what, int json)
{
	struct group_view v;
	struct group_wait *w = NULL;
	struct timefmt *f = NULL;
	struct conf *c;
	struct db *db;
	char err[ERRSZ];
	size_t nw = 0;
	int rc, found;

	/* a name no group can have is refused before connecting (an id is
	 * all digits) */
	if ((what[0] == '\0' || strspn(what, "0123456789") != strlen(what)) &&
	    groups_name_check(what, err) < 0) {
		cli_error("group: no group '%s' (%s)", what, err);
		return EX_DATAERR;
	}
	if ((rc = cli_open(0, &c, &db)) != 0)
		return rc;
	rc = groups_show(db, what, WAITING_MAX, &v, &found, &w, &nw, err);
	if (rc != DB_OK) {
		cli_error("group: %s", err);
		rc = rc == DB_EGONE ? EX_UNAVAILABLE : EXIT_FAIL;
	} else if (!found) {
		cli_error("group: no group '%s'", what);
		rc = EX_DATAERR;
	} else if (json)
		print_json(&v, w, nw);
	else if ((f = cli_timefmt(c, db, "group")) == NULL)
		rc = EX_UNAVAILABLE;
	else
		print_text(f, &v, w, nw);
	timefmt_free(f);
	groups_waiting_free(w, nw);
	db_free(db);
	conf_free(c);
	return rc;
}

int
cmd_group(int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_COMMON_LONGOPTS,
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	int opt, rc, json = 0;

	while ((opt = getopt_long(argc, argv, CLI_COMMON_SHORTOPTS, longopts, NULL)) != -1) {
		if (opt == 'j')
			json = 1;
		else if ((rc = cli_common_opt(opt, "group", usage)) != -2)
			return rc < 0 ? EX_USAGE : rc;
	}
	if (optind >= argc || strcmp(argv[optind], "show") != 0)
		return cli_usage_error("group",
		    optind >= argc ? "expected 'show ID|NAME'" : "unknown action '%s' (expected show)",
		    optind < argc ? argv[optind] : "");
	if (argc - optind != 2)
		return cli_usage_error("group", "show takes one ID or NAME");
	return show(argv[optind + 1], json);
}
