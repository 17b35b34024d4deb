/* cmd_schedule.c -- `jobq schedule`: the tick that enqueues due fires
 * (what a crontab line runs every minute), --list, --run, and the
 * add/edit/remove/enable/disable of schedules kept in the database. */
#include "config.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cron.h"
#include "duration.h"
#include "schedule_view.h"
#include "scheduler.h"
#include "schedules.h"
#include "timefmt.h"

static void
usage(void)
{
	printf("Usage: jobq schedule [--dry-run] [--quiet]       enqueue every fire that is due\n"
	       "       jobq schedule --run NAME [--dry-run]      enqueue NAME now\n"
	       "       jobq schedule --list [--json] [--window D] show every schedule\n"
	       "       jobq schedule add NAME --cron EXPR --type TYPE [options]\n"
	       "       jobq schedule edit NAME [options]\n"
	       "       jobq schedule remove|enable|disable NAME\n\n"
	       "The tick enqueues each fire of each schedule exactly once, however many\n"
	       "hosts run it at once.  For cron:  * * * * * jobq schedule --quiet\n"
	       "(or run 'jobq work --schedule' and need no crontab at all).\n\n"
	       "  -n, --dry-run          print what would be enqueued; write nothing\n"
	       "      --quiet            print only late, missed and failed fires\n"
	       "      --run NAME         enqueue now, whatever the time and the overlap rule\n"
	       "  -l, --list             name, source, on/off, cron, next (none when disabled) and\n"
	       "                         last fire, outcome\n"
	       "      --json             --list as JSON\n"
	       "      --window D         count runs and failures over D (default 7d)\n\n"
	       "add/edit options (checked against the INI: exit 65 and nothing changed if bad):\n"
	       "  --cron EXPR  -t, --type TYPE  --payload JSON  -q, --queue Q  --priority N\n"
	       "  --timezone ZONE  --overlap skip|allow  --catch-up none|latest [D]|all [D]\n"
	       "  --alert-after D  --description TEXT\n"
	       "enable/disable work on INI schedules too: the switch lives in the database.\n"
	       "remove also deletes what a renamed INI section left (--list: next fire 'gone').\n\n"
	       "Exit status: 0; 1 a schedule could not fire (its type or queue left the INI);\n"
	       "64 bad usage; 65 bad add/edit input or no such schedule; 69 database\n"
	       "unavailable; 78 configuration error (a name both in the INI and the database).\n");
}

/* ---- the tick ---- */

struct say_ctx {
	int quiet;
};

static void
say_stdout(void *arg, int important, const char *line)
{
	const struct say_ctx *s = arg;

	if (important || !s->quiet)
		printf("%s\n", line);
	fflush(stdout);
}

/* Where a change whose answer was lost can be seen (cli_write_failed). */
#define LOOK "jobq schedule --list"

static int
db_status(const char *err)
{
	cli_error("%s", err);
	return EX_UNAVAILABLE;
}

static int
tick(const struct conf *c, struct db *db, int dry_run, int quiet)
{
	struct say_ctx ctx = { quiet };
	struct scheduler_opts o = { dry_run, say_stdout, &ctx };
	struct scheduler_counts n;
	char err[ERRSZ];
	int rc;

	if ((rc = scheduler_tick(c, db, &o, &n, err)) != DB_OK)
		return db_status(err);
	return n.failed > 0 ? EXIT_FAIL : 0;
}

static int
run_now(const struct conf *c, struct db *db, const char *name, int dry_run)
{
	struct say_ctx ctx = { 0 };
	struct scheduler_opts o = { dry_run, say_stdout, &ctx };
	struct schedule **v;
	const struct schedule *s;
	char err[ERRSZ];
	uint64_t job;
	size_t n;
	int rc;

	if ((rc = schedules_load(c, db, &v, &n, err)) != DB_OK)
		return db_status(err);
	if ((s = schedules_find(v, n, name)) == NULL) {
		cli_error("schedule --run: no schedule '%s' (in %s or in the database)", name, c->path);
		rc = EX_DATAERR;
	} else if ((rc = scheduler_run_now(c, db, s, &o, NULL, &job, err)) != DB_OK) {
		/* A lost answer to the fire's COMMIT may have enqueued the job:
		 * run again blind, it would be enqueued twice. */
		if (s->problem != NULL) {
			cli_error("schedule --run %s: %s", name, err);
			rc = EX_DATAERR;
		} else
			rc = cli_write_failed(
			    db, "jobq schedule --list, jobq status", "schedule --run %s: %s", name, err);
	}
	schedules_free(v, n);
	return rc;
}

/* ---- --list ---- */

static char *
what_text(const struct schedule *s)
{
	char e2[ERRSZ];
	struct cron *cr;
	char *d;

	if (s->description != NULL && *s->description != '\0')
		return xstrdup(s->description);
	if ((cr = cron_parse(s->cron, e2)) == NULL)
		return xstrdup(e2);
	d = cron_describe(cr);
	cron_free(cr);
	return d;
}

/* The fire times of s, in its own zone (where its cron is read). */
static void
fire_texts(const struct schedule *s, const struct schedule_status *st, int64_t now, char *next, char *last,
    size_t len)
{
	char err[ERRSZ];
	struct timefmt *f = timefmt_new(s->timezone ? s->timezone : "UTC", now * 1000, err);

	snprintf(next, len, "%s", !s->enabled ? "disabled" : st->next == 0 ? "never" : "-");
	snprintf(last, len, "-");
	if (f != NULL && s->enabled && st->next != 0)
		timefmt_human_at(f, st->next * 1000, 0, next, len);
	if (f != NULL && st->last_fire[0] != '\0')
		timefmt_human_at(f, st->last_fire_t * 1000, 0, last, len);
	timefmt_free(f);
}

/* The widths of the NAME and CRON columns: the longest of each (names
 * run to 64 characters, expressions to 255), so that a long one pushes
 * its column out rather than the rest of its row. */
struct widths {
	int name, cron;
};

static struct widths
column_widths(struct schedule *const *v, size_t n)
{
	struct widths w = { 16, 15 };
	size_t i;

	for (i = 0; i < n; i++) {
		if ((int)strlen(v[i]->name) > w.name)
			w.name = (int)strlen(v[i]->name);
		if (v[i]->cron != NULL && (int)strlen(v[i]->cron) > w.cron)
			w.cron = (int)strlen(v[i]->cron);
	}
	return w;
}

/* One row of --list; gone: a gone name's (schedule_view_gone), with no
 * source, switch or next fire, and its problem as what it is. */
static void
print_row(const struct schedule *s, const struct schedule_status *st, int64_t now, struct widths w, int gone)
{
	char next[TIMEFMT_HUMAN_MAX], last[TIMEFMT_HUMAN_MAX], counts[48];
	char *what = gone ? xasprintf("GONE: %s", s->problem) : what_text(s);
	const char *problem = gone ? NULL : s->problem;

	fire_texts(s, st, now, next, last, sizeof next);
	if (gone)
		snprintf(next, sizeof next, "gone");
	snprintf(counts, sizeof counts, "%llu/%llu", (unsigned long long)st->runs,
	    (unsigned long long)st->failures);
	printf("%-*s %-3s %-3s %-*s %-26s %-26s %-9s %-9s %s%s%s\n", w.name, s->name,
	    gone ? "-" : s->source == SCHEDULE_INI ? "ini" : "db", gone ? "-" : s->enabled ? "on" : "off",
	    w.cron, s->cron, next, last, st->last_fire[0] ? st->outcome : "-", counts, what,
	    problem ? "  PROBLEM: " : "", problem ? problem : "");
	/* Why the last fire's job was dead-lettered, under its row: what an
	 * operator looking at a failed schedule asks next. */
	if (strcmp(st->outcome, "failed") == 0)
		printf("%-*s job %llu: %s\n", w.name, "", (unsigned long long)st->last_job, st->last_error);
	free(what);
}

/* The rows of --list for names, those the database keeps a switch or
 * fires of that are no schedule any more (schedules_orphans: an INI
 * section renamed or taken out of the file): source and switch "-",
 * next fire "gone", their last fire, and how to delete what is left. */
static int
list_orphans(struct db *db, char *const *names, int64_t now, int64_t window_s, struct widths w, char *err)
{
	struct schedule_status st;
	size_t i;
	int rc = DB_OK;

	for (i = 0; names != NULL && names[i] != NULL && rc == DB_OK; i++) {
		struct schedule *s = schedule_view_gone(names[i]);

		if ((rc = schedule_view_status(db, s, now, window_s, &st, err)) == DB_OK)
			print_row(s, &st, now, w, 1);
		schedule_free(s);
	}
	return rc;
}

static int
list(const struct conf *c, struct db *db, int json, int64_t window_s)
{
	struct schedule **v;
	struct schedule_status st;
	struct widths w;
	char err[ERRSZ], wtext[32], **gone = NULL;
	int64_t now;
	size_t n, i, ngone = 0;
	int rc;

	if (json) {
		cJSON *arr;
		char *text;

		if ((rc = schedule_view_list_json(c, db, window_s, &arr, err)) != DB_OK)
			return db_status(err);
		text = cJSON_Print(arr);
		printf("%s\n", text);
		cJSON_free(text);
		cJSON_Delete(arr);
		return 0;
	}
	if ((rc = schedules_now(db, &now, err)) != DB_OK ||
	    (rc = schedules_load(c, db, &v, &n, err)) != DB_OK)
		return db_status(err);
	if ((rc = schedules_orphans(db, v, n, &gone, &ngone, err)) != DB_OK) {
		schedules_free(v, n);
		return db_status(err);
	}
	duration_format(window_s * 1000, wtext, sizeof wtext);
	w = column_widths(v, n);
	for (i = 0; i < ngone; i++)
		if ((int)strlen(gone[i]) > w.name)
			w.name = (int)strlen(gone[i]);
	printf("%-*s %-3s %-3s %-*s %-26s %-26s %-9s %-9s %s\n", w.name, "NAME", "SRC", "ON", w.cron, "CRON",
	    "NEXT FIRE", "LAST FIRE", "OUTCOME", "RUNS/FAIL", "WHAT");
	for (i = 0; i < n && rc == DB_OK; i++) {
		if ((rc = schedule_view_status(db, v[i], now, window_s, &st, err)) != DB_OK)
			break;
		print_row(v[i], &st, now, w, 0);
	}
	if (rc == DB_OK)
		rc = list_orphans(db, gone, now, window_s, w, err);
	if (rc == DB_OK)
		printf("(RUNS/FAIL: jobs enqueued and jobs dead-lettered over the last %s)\n", wtext);
	strv_free(gone);
	schedules_free(v, n);
	return rc == DB_OK ? 0 : db_status(err);
}

/* ---- add, edit, remove, enable, disable ---- */

static const struct option edit_longopts[] = {
	CLI_COMMON_LONGOPTS,
	{ "cron", required_argument, NULL, 'C' },
	{ "type", required_argument, NULL, 'T' },
	{ "payload", required_argument, NULL, 'P' },
	{ "queue", required_argument, NULL, 'Q' },
	{ "priority", required_argument, NULL, 'R' },
	{ "timezone", required_argument, NULL, 'Z' },
	{ "overlap", required_argument, NULL, 'O' },
	{ "catch-up", required_argument, NULL, 'U' },
	{ "alert-after", required_argument, NULL, 'A' },
	{ "description", required_argument, NULL, 'D' },
	{ NULL, 0, NULL, 0 },
};

/* The schedule key of an add/edit option. */
static const char *
edit_key(int opt)
{
	switch (opt) {
	case 'C':
		return "cron";
	case 't': /* -t is --type, -q is --queue, as in every command */
	case 'T':
		return "type";
	case 'P':
		return "payload";
	case 'q':
	case 'Q':
		return "queue";
	case 'R':
		return "priority";
	case 'Z':
		return "timezone";
	case 'O':
		return "overlap";
	case 'U':
		return "catch_up";
	case 'A':
		return "alert_after";
	case 'D':
		return "description";
	default:
		return NULL;
	}
}

/* Sets key of s from an add/edit option as the INI's key would be set
 * (schedule_set refuses a cron expression that never fires, 0 0 31 2 *,
 * as it does in the INI).  Problems are reported with the option's own
 * name (--catch-up, not the INI's catch_up). */
static int
set_option(const struct conf *c, struct schedule *s, const char *cmd, const char *key)
{
	char err[ERRSZ], opt[32], *p;
	const char *why = err;
	size_t klen = strlen(key);
	int rc = schedule_set(c, s, key, optarg, err);

	if (rc == 0)
		return 0;
	snprintf(opt, sizeof opt, "%s", key);
	for (p = opt; (p = strchr(p, '_')) != NULL;)
		*p = '-';
	if (strncmp(err, key, klen) == 0 && strncmp(err + klen, ": ", 2) == 0)
		why = err + klen + 2;
	cli_error("schedule %s %s: --%s: %s", cmd, s->name, opt, why);
	return EX_DATAERR;
}

/* Applies the options to s, checking each; EX_DATAERR on the first bad
 * one, EX_USAGE on a bad option, 0. */
static int
apply_options(const struct conf *c, struct schedule *s, const char *cmd, int argc, char **argv)
{
	int opt, rc;

	/* getopt's messages name argv[0], which first_pass made the
	 * command as typed ("jobq schedule edit") */
	while ((opt = getopt_long(argc, argv, CLI_COMMON_SHORTOPTS "q:t:", edit_longopts, NULL)) != -1) {
		const char *key = edit_key(opt);

		if ((rc = cli_common_opt(opt, "schedule", usage)) >= 0)
			return rc == 0 ? -1 : rc;
		if (rc == -2 || key == NULL)
			continue;
		if ((rc = set_option(c, s, cmd, key)) != 0)
			return rc;
	}
	if (optind < argc)
		return cli_usage_error("schedule", "unexpected argument '%s'", argv[optind]);
	return 0;
}

/* An edit that changes a schedule's type, not its queue: a schedule
 * that used its old type's queue takes the new type's (the queue is
 * stored resolved, so "the type's queue" is recognised by its value);
 * one given a queue of its own keeps it. */
static void
follow_type_queue(const struct conf *c, struct schedule *s, const char *old_type, const char *old_queue)
{
	const struct handler *h = old_type != NULL ? conf_handler(c, old_type) : NULL;

	if (old_type == NULL || s->type == NULL || strcmp(old_type, s->type) == 0 || s->queue == NULL ||
	    old_queue == NULL || strcmp(s->queue, old_queue) != 0 || h == NULL ||
	    strcmp(h->queue, old_queue) != 0)
		return;
	free(s->queue);
	s->queue = NULL; /* schedule_finish takes the new type's */
}

/* add and edit, before the database is asked anything: the options are
 * checked against the INI alone, so that a bad value is refused (65, one
 * line) whether or not the database is up.  For add the schedule is
 * built whole (*out, the caller frees it); for edit each value is checked
 * on a scratch schedule, since the stored one is read only later.
 * Returns 0, -1 after --help, or the exit status after saying why. */
static int
check_options(const struct conf *c, const char *cmd, const char *name, int argc, char **argv,
    struct schedule **out)
{
	int adding = strcmp(cmd, "add") == 0, rc;
	struct schedule *s;
	char err[ERRSZ];

	*out = NULL;
	if (!adding && schedules_ini(c, name) != NULL) {
		cli_error("schedule edit: '%s' is defined in %s:%d; edit it there", name, c->path,
		    schedules_ini(c, name)->line);
		return EX_DATAERR;
	}
	s = schedule_new(name, SCHEDULE_DB);
	rc = apply_options(c, s, cmd, argc, argv);
	optind = 0; /* add_or_edit reads the options again */
	if (rc == 0 && adding && schedule_finish(c, s, err) < 0) {
		cli_error("schedule %s %s: %s", cmd, name, err);
		rc = EX_DATAERR;
	}
	if (rc == 0 && adding)
		*out = s;
	else
		schedule_free(s);
	return rc;
}

/* Writes the schedule check_options built (add), or applies the options
 * to the stored one (edit). */
static int
add_or_edit(const struct conf *c, struct db *db, const char *cmd, struct schedule *added, const char *name,
    int argc, char **argv)
{
	struct schedule **v = NULL, *s = added;
	const struct schedule *old;
	char err[ERRSZ], *old_type = NULL, *old_queue = NULL;
	size_t n = 0;
	int rc = 0, adding = added != NULL;

	if (!adding) {
		if ((rc = schedules_load(c, db, &v, &n, err)) != DB_OK)
			return db_status(err);
		if ((old = schedules_find(v, n, name)) == NULL) {
			cli_error("schedule edit: no schedule '%s' in the database", name);
			schedules_free(v, n);
			return EX_DATAERR;
		}
		s = (struct schedule *)old;
		free(s->problem);
		s->problem = NULL;
		old_type = xstrdup_or_null(s->type);
		old_queue = xstrdup_or_null(s->queue);
		if ((rc = apply_options(c, s, cmd, argc, argv)) == 0)
			follow_type_queue(c, s, old_type, old_queue);
		if (rc == 0 && schedule_finish(c, s, err) < 0) {
			cli_error("schedule %s %s: %s", cmd, name, err);
			rc = EX_DATAERR;
		}
	}
	if (rc == 0 && (rc = adding ? schedules_add(c, db, s, err) : schedules_update(db, s, err)) != DB_OK) {
		if (rc > 0)
			cli_error("schedule %s %s: %s", cmd, name, err);
		else
			cli_write_failed(db, LOOK, "schedule %s %s: %s", cmd, name, err);
		rc = rc > 0 ? EX_DATAERR : EX_UNAVAILABLE;
	} else if (rc == 0)
		printf("schedule '%s' %s\n", name, adding ? "added" : "changed");
	schedules_free(v, n);
	free(old_type);
	free(old_queue);
	return rc < 0 ? 0 : rc;
}

/* remove: schedules_remove() refuses an INI schedule and an unknown
 * name itself, as it does for the dashboard. */
static int
remove_one(const struct conf *c, struct db *db, const char *name)
{
	char err[ERRSZ];
	int rc = schedules_remove(c, db, name, err);

	if (rc == DB_OK) {
		printf("schedule '%s' removed\n", name);
		return 0;
	}
	if (rc < 0)
		return cli_write_failed(db, LOOK, "schedule remove: %s", err);
	cli_error("schedule remove: %s", err);
	return EX_DATAERR;
}

/* schedules_switch, rerun while it loses a deadlock: on a Galera
 * cluster a switch through one node and another node's switch or
 * scheduler tick write the same jobq_schedule_state row, and the one that
 * loses certification gets error 1213 (jobq's sessions turn off the
 * server's own rerun, db_galera.c). */
static int
switch_retried(struct db *db, const char *name, int on, char *err)
{
	int rc, attempt = 0;

	do
		rc = schedules_switch(db, name, on, err);
	while (db_retry_after(rc, ++attempt));
	return rc;
}

static int
switch_one(const struct conf *c, struct db *db, const char *cmd, const char *name)
{
	const struct schedule *s;
	struct schedule **v;
	char err[ERRSZ];
	size_t n;
	int rc, on = strcmp(cmd, "enable") == 0;

	if ((rc = schedules_load(c, db, &v, &n, err)) != DB_OK)
		return db_status(err);
	if ((s = schedules_find(v, n, name)) == NULL) {
		cli_error("schedule %s: no schedule '%s' (in %s or in the database)", cmd, name, c->path);
		rc = EX_DATAERR;
	} else if (on && schedules_ini_off(s)) {
		cli_error("schedule enable: '%s' says enabled = no in %s:%d: turn it on there", name, c->path,
		    s->line);
		rc = EX_DATAERR;
	} else if ((rc = switch_retried(db, name, on, err)) == DB_OK)
		printf("schedule '%s' %s\n", name, on ? "enabled" : "disabled");
	else
		rc = cli_write_failed(db, LOOK, "schedule %s: %s", cmd, err);
	schedules_free(v, n);
	return rc;
}

/* Whether -h or --help is among the arguments: help needs neither the
 * configuration nor the database, wherever the option stands. */
static int
wants_help(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
			return 1;
	return 0;
}

/* A first pass over a subcommand's arguments (argv[0] the subcommand),
 * by getopt_long itself so that it reads them exactly as the real pass
 * will (abbreviated long options, values that look like options): takes
 * the config option wherever it stands (every command accepts -c after
 * its name), so that the configuration is known before it is loaded, and
 * finds the NAME, the one argument that is no option, which it takes out
 * of argv.  An edit with nothing to change is refused here, before the
 * database is asked anything.  Returns 0, or the exit status of a usage
 * error. */
static int
first_pass(const char *cmd, int *argc, char **argv, const char **name)
{
	int opt, at, own = strcmp(cmd, "add") == 0 || strcmp(cmd, "edit") == 0, given = 0;
	static char prog[64]; /* argv[0] outlives this call */

	*name = NULL;
	optind = 0;
	/* add and edit: getopt names a bad option now, as the command typed,
	 * before the database is asked anything; the others name any
	 * argument but NAME below */
	snprintf(prog, sizeof prog, "jobq schedule %s", cmd);
	argv[0] = prog;
	opterr = own;
	for (at = 1; (opt = getopt_long(*argc, argv, "-" CLI_COMMON_SHORTOPTS "q:t:", edit_longopts, NULL)) != -1;
	     at = optind) {
		given += edit_key(opt) != NULL;
		if (own && (opt == '?' || opt == ':')) {
			opterr = 1;
			fprintf(stderr, "Try 'jobq schedule --help'.\n");
			return EX_USAGE;
		}
		if (opt == 'c')
			cli_config_path = optarg;
		else if (opt == 1 && *name == NULL) { /* out of argv, for the real pass */
			*name = optarg;
			at = optind - 1;
			memmove(argv + at, argv + at + 1, (size_t)(*argc - at) * sizeof *argv);
			(*argc)--;
			optind--;
		} else if (!own) { /* add and edit have a real pass to say it */
			opterr = 1;
			return cli_usage_error("schedule", "%s: unexpected argument '%s'", cmd,
			    opt == 1 ? optarg : argv[at < *argc ? at : *argc - 1]);
		}
	}
	opterr = 1;
	optind = 0;
	if (*name == NULL)
		return cli_usage_error("schedule", "%s: a schedule NAME is required", cmd);
	if (strcmp(cmd, "edit") == 0 && given == 0)
		return cli_usage_error(
		    "schedule", "edit %s: nothing to change (give --cron, --type, ...)", *name);
	return 0;
}

static int
manage(const char *cmd, int argc, char **argv)
{
	struct schedule *added = NULL;
	struct conf *c;
	struct db *db;
	const char *name;
	int rc, own = strcmp(cmd, "add") == 0 || strcmp(cmd, "edit") == 0;

	if (wants_help(argc, argv))
		return usage(), 0;
	if ((rc = first_pass(cmd, &argc, argv, &name)) != 0)
		return rc;
	if (!conf_valid_name(name)) {
		cli_error("schedule %s: bad name '%s' (1-64 of A-Z a-z 0-9 _ . -)", cmd, name);
		return EX_DATAERR;
	}
	if ((rc = cli_conf(0, &c)) != 0)
		return rc;
	/* what the INI alone refutes is refused before connecting */
	if (own && (rc = check_options(c, cmd, name, argc, argv, &added)) != 0) {
		conf_free(c);
		return rc < 0 ? 0 : rc;
	}
	if ((rc = cli_connect(c, &db)) != 0) {
		schedule_free(added);
		conf_free(c);
		return rc;
	}
	if (own)
		rc = add_or_edit(c, db, cmd, added, name, argc, argv);
	else if (strcmp(cmd, "remove") == 0)
		rc = remove_one(c, db, name);
	else
		rc = switch_one(c, db, cmd, name);
	schedule_free(added);
	db_free(db);
	conf_free(c);
	return rc;
}

enum { OPT_RUN = 256, OPT_JSON, OPT_WINDOW, OPT_QUIET };

int
cmd_schedule(int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_COMMON_LONGOPTS,
		{ "dry-run", no_argument, NULL, 'n' },
		{ "quiet", no_argument, NULL, OPT_QUIET }, /* no -q: that is --queue */
		{ "run", required_argument, NULL, OPT_RUN },
		{ "list", no_argument, NULL, 'l' },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "window", required_argument, NULL, OPT_WINDOW },
		{ NULL, 0, NULL, 0 },
	};
	static const char *const subs[] = { "add", "edit", "remove", "enable", "disable" };
	const char *run = NULL;
	int dry_run = 0, quiet = 0, listing = 0, json = 0, opt, rc, k;
	int64_t window_ms = -1; /* -1: not given; 7d */
	struct conf *c;
	struct db *db;
	char err[ERRSZ];
	size_t i;

	/* The subcommand may follow the config option (schedule -c FILE
	 * add ...): the first argument that is no option, found as getopt
	 * reads them, is moved to the front, the option taken by manage. */
	optind = 0;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "-" CLI_COMMON_SHORTOPTS "nql", longopts, NULL)) != -1 && opt != 1)
		;
	opterr = 1;
	k = optind - 1;
	for (i = 0; opt == 1 && i < ARRAY_LEN(subs); i++)
		if (strcmp(argv[k], subs[i]) == 0) {
			memmove(argv + 2, argv + 1, (size_t)(k - 1) * sizeof *argv);
			argv[1] = (char *)subs[i];
			return manage(subs[i], argc - 1, argv + 1);
		}
	optind = 0;
	while ((opt = getopt_long(argc, argv, CLI_COMMON_SHORTOPTS "nql", longopts, NULL)) != -1) {
		if (opt == 'q') /* -q once meant --quiet here: say so, do not guess */
			return cli_usage_error(
			    "schedule", "-q is --queue (of add and edit); for a quiet tick, say --quiet");
		if ((rc = cli_common_opt(opt, "schedule", usage)) >= 0)
			return rc;
		if (opt == 'n')
			dry_run = 1;
		else if (opt == OPT_QUIET)
			quiet = 1;
		else if (opt == 'l')
			listing = 1;
		else if (opt == OPT_JSON)
			json = 1;
		else if (opt == OPT_RUN)
			run = optarg;
		else if (opt == OPT_WINDOW && duration_parse(optarg, &window_ms, err) < 0)
			return cli_usage_error("schedule", "--window: %s", err);
		else if (opt == OPT_WINDOW && window_ms < 1000)
			return cli_usage_error("schedule", "--window: at least 1s, not '%s'", optarg);
	}
	if (optind < argc)
		return cli_usage_error("schedule", "unexpected argument '%s'", argv[optind]);
	/* an option that would be taken and then ignored is refused */
	if (listing ? run != NULL || dry_run || quiet : json || window_ms >= 0 || (run != NULL && quiet))
		return cli_usage_error("schedule", listing ? "--list goes alone (with --json, --window)"
		                                   : json  ? "--json goes with --list"
		                                   : window_ms >= 0 ? "--window goes with --list"
		                                                    : "--quiet goes with a tick, not --run");
	if ((rc = cli_open(0, &c, &db)) != 0)
		return rc;
	if (listing)
		rc = list(c, db, json, window_ms >= 0 ? window_ms / 1000 : 7 * 86400);
	else if (run != NULL)
		rc = run_now(c, db, run, dry_run);
	else
		rc = tick(c, db, dry_run, quiet);
	db_free(db);
	conf_free(c);
	return rc;
}
