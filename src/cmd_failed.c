/* cmd_failed.c -- `jobq failed`: its command line, and the listing and show
 * of the dead-letter table (cmd_failed_act.c acts on it). */
#include "config.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd_failed_act.h"
#include "duration.h"
#include "failed.h"
#include "queue.h"
#include "timefmt.h"
#include "wakeup.h"

static void
usage(void)
{
	printf(
	    "Usage: jobq failed [list] [-q QUEUE] [-t TYPE] [--limit N] [--after ID | --before ID] [--json]\n"
	    "       jobq failed show [--json] ID\n"
	    "       jobq failed retry [--dry-run] (ID... | - | --all [-q QUEUE] [-t TYPE])\n"
	    "       jobq failed retry [--dry-run] (--payload JSON | --payload-file FILE) ID\n"
	    "       jobq failed forget [--dry-run] [--yes] (ID... | - | --all [-q QUEUE] [-t TYPE])\n"
	    "       jobq failed clear [--older-than DURATION] [--dry-run] [--yes]\n\n"
	    "Dead-lettered jobs wait here for a person.  'list' shows the newest first with\n"
	    "the line of each error that names it, a page of --limit jobs (50; 0 for all) at a time:\n"
	    "--after ID shows the page after job ID (older), --before ID the page before it\n"
	    "(newer), and the last line says how many more there are and how to see them,\n"
	    "with the same -q, -t and --limit (with --json, stderr does); 'show' the whole\n"
	    "job and error; 'retry' moves jobs back to their queue, due now, with their\n"
	    "attempts reset (one transaction per job); 'forget' deletes them; 'clear'\n"
	    "deletes all of them, or those that failed more than DURATION ago, in chunks.\n"
	    "Each command says how many jobs it touched.\n"
	    "With --payload (or --payload-file, '-' for stdin) 'retry' moves one job back\n"
	    "with that payload in place of its own: it must be JSON within max_payload, and\n"
	    "the move and an audit row holding the old and the new payload (by cli:USER) are\n"
	    "one transaction.\n"
	    "On a terminal, control characters in stored text are shown as \\xHH.\n"
	    "-q is --queue, -t --type, -y --yes.\n"
	    "'-' in place of IDs reads them from stdin (blank-separated, any number of them).\n"
	    "An ID given twice is one job, retried or forgotten once.\n\n"
	    "A job that cannot be retried (say, its id is in the queue again) is named on\n"
	    "stderr and the others still are; 'retry --all' shows its progress on a\n"
	    "terminal.  A job whose type has no [handler] section is not retried, as\n"
	    "'enqueue' refuses that type (it would only be dead-lettered again): among\n"
	    "IDs it is named and nothing is done (65); with --all it stays, counted (1).\n"
	    "--dry-run says how many jobs would be touched and changes nothing;\n"
	    "with retry it names the jobs a retry would refuse, and why.\n\n"
	    "'clear' and a 'forget' of more than one job state the count and ask first on a\n"
	    "terminal; without one (scripts, cron) they delete nothing unless given --yes.\n\n"
	    "Exit status: 0; 1 when some jobs could not (with --dry-run, would not) be\n"
	    "retried or forgotten (named on stderr), or the question was not answered yes;\n"
	    "64 bad usage, or a bulk delete\n"
	    "with no terminal and no --yes; 65 when an ID is not in the dead-letter table,\n"
	    "or (retry) is of an unknown type, or the new payload is not JSON or too large\n"
	    "(nothing done);\n"
	    "66 the payload file, or the IDs on stdin, cannot be read; 69 database\n"
	    "unavailable (only then does a retry run stop early).\n");
}

static void
print_list_line(const struct timefmt *f, const struct failed_row *r, int tty)
{
	char t[TIMEFMT_HUMAN_MAX];
	char *queue = cli_visible(r->queue, tty), *type = cli_visible(r->type, tty),
	     *exit_status = cli_visible(r->exit_status, tty), *error = cli_visible(r->summary, tty);

	printf("%-8llu %-26s  %-10s %-16s %-3u %-18s %s\n", (unsigned long long)r->id,
	    timefmt_human(f, r->failed_at, 0, t, sizeof t), queue, type, r->attempts, exit_status, error);
	free(queue);
	free(type);
	free(exit_status);
	free(error);
}

static void
print_list_json(const struct failed_row *rows, size_t n)
{
	cJSON *arr = cJSON_CreateArray();
	char *s, *iso;
	size_t i;

	for (i = 0; i < n; i++) {
		cJSON *r = cJSON_CreateObject();

		cJSON_AddNumberToObject(r, "id", (double)rows[i].id);
		cJSON_AddStringToObject(r, "queue", rows[i].queue);
		cJSON_AddStringToObject(r, "type", rows[i].type);
		cJSON_AddNumberToObject(r, "attempts", rows[i].attempts);
		iso = timefmt_json(rows[i].failed_at);
		cJSON_AddStringToObject(r, "failed_at", iso);
		free(iso);
		cJSON_AddStringToObject(r, "exit_status", rows[i].exit_status);
		cJSON_AddStringToObject(r, "reason", rows[i].reason);
		cJSON_AddStringToObject(r, "error", rows[i].summary);
		cJSON_AddItemToArray(arr, r);
	}
	s = cJSON_Print(arr);
	puts(s);
	cJSON_free(s);
	cJSON_Delete(arr);
}

/* The column titles above print_list_line's columns. */
static void
print_list_header(void)
{
	printf("%-8s %-26s  %-10s %-16s %-3s %-18s %s\n", "ID", "FAILED", "QUEUE", "TYPE", "TRY", "EXIT",
	    "ERROR");
}

/* Appends "OPT VALUE " to b, VALUE quoted for a shell unless it is
 * plain, so that a hint can be pasted as it is. */
static void
add_arg(struct buf *b, const char *opt, const char *val)
{
	const char *p = val;

	while (*p != '\0' && (isalnum((unsigned char)*p) || strchr("_.,:/@%+=-", *p) != NULL))
		p++;
	if (*val != '\0' && *p == '\0') {
		buf_printf(b, "%s %s ", opt, val);
		return;
	}
	buf_printf(b, "%s '", opt);
	for (p = val; *p != '\0'; p++)
		buf_add(b, *p == '\'' ? "'\\''" : p, *p == '\'' ? 4 : 1);
	buf_adds(b, "' ");
}

/* What a hint to the next page repeats of the options, each followed by
 * a blank ("" for none): -q, -t, and with with_limit a --limit given;
 * without them the hint would list every queue.  A string to free. */
static char *
page_args(const struct failed_opts *o, int with_limit)
{
	struct buf b;

	buf_init(&b);
	if (o->f.queue != NULL)
		add_arg(&b, "-q", o->f.queue);
	if (o->f.type != NULL)
		add_arg(&b, "-t", o->f.type);
	if (with_limit && o->limit_set)
		buf_printf(&b, "--limit %u ", o->f.limit);
	return b.len > 0 ? buf_steal(&b) : xstrdup("");
}

/* The last line of a page: the count, and where the rest is when there
 * is more on either side (the command for it, with the filters given). */
static int
print_list_footer(struct db *db, const struct failed_opts *o, const struct failed_row *rows, size_t n)
{
	uint64_t older = 0, newer = 0;
	char err[ERRSZ], *args;

	if (n > 0 && ((o->f.limit > 0 && n == o->f.limit) || o->f.before != 0) &&
	    failed_count_beyond(db, &o->f, rows[n - 1].id, 1, &older, err) != DB_OK)
		goto fail;
	if (n > 0 && (o->f.after != 0 || o->f.before != 0) &&
	    failed_count_beyond(db, &o->f, rows[0].id, 0, &newer, err) != DB_OK)
		goto fail;
	if (older == 0 && newer == 0) {
		printf("%zu failed job%s\n", n, n == 1 ? "" : "s");
		return 0;
	}
	args = page_args(o, 1);
	printf("%zu failed job%s shown", n, n == 1 ? "" : "s");
	if (newer > 0)
		printf("; %llu newer: jobq failed %s--before %llu", (unsigned long long)newer, args,
		    (unsigned long long)rows[0].id);
	if (older > 0)
		printf("; %llu older: jobq failed %s--after %llu", (unsigned long long)older, args,
		    (unsigned long long)rows[n - 1].id);
	printf("\n");
	free(args);
	return 0;
fail:
	cli_error("failed list: %s", err);
	return EX_UNAVAILABLE;
}

/* --json's word on stderr when the page is full and more jobs match:
 * how to ask for the next page and for all, with the filters given. */
static int
print_json_more(struct db *db, const struct failed_opts *o, const struct failed_row *rows, size_t n)
{
	uint64_t older = 0;
	char err[ERRSZ], *next, *all;

	if (n == 0 || n != o->f.limit)
		return 0;
	if (failed_count_beyond(db, &o->f, rows[n - 1].id, 1, &older, err) != DB_OK) {
		cli_error("failed list: %s", err);
		return EX_UNAVAILABLE;
	}
	if (older == 0)
		return 0;
	next = page_args(o, 1);
	all = page_args(o, 0);
	fprintf(stderr, "jobq: failed: %llu more: %s--after %llu for the next page, %s--limit 0 for all\n",
	    (unsigned long long)older, next, (unsigned long long)rows[n - 1].id, all);
	free(next);
	free(all);
	return 0;
}

static int
do_list(struct db *db, const struct conf *c, const struct failed_opts *o)
{
	struct failed_row *rows;
	struct timefmt *f;
	char err[ERRSZ];
	size_t n, i;
	int rc, tty = cli_isatty();

	if ((rc = failed_list(db, &o->f, CLI_DB_TZ, &rows, &n, err)) != DB_OK) {
		cli_error("failed list: %s", err);
		return rc == QUEUE_NOT_FOUND ? EX_DATAERR : EX_UNAVAILABLE;
	}
	if (n == 0 && o->f.after == 0 && o->f.before == 0)
		cmd_failed_note_unknown(c, o);
	if (o->json) {
		print_list_json(rows, n);
		rc = print_json_more(db, o, rows, n);
	} else if ((f = cli_timefmt(c, db, "failed list")) == NULL)
		rc = EX_UNAVAILABLE;
	else {
		if (n > 0)
			print_list_header();
		for (i = 0; i < n; i++)
			print_list_line(f, &rows[i], tty);
		rc = print_list_footer(db, o, rows, n);
		timefmt_free(f);
	}
	failed_rows_free(rows, n);
	return rc;
}

static int
do_show(struct db *db, const struct conf *c, const struct failed_opts *o, int argc, char **argv)
{
	uint64_t id;

	(void)argc; /* one, an id: check_id_args */
	cli_parse_id(argv[0], &id);
	return show_job(c, db, id, o->json, 1);
}

/* The job IDs the subcommand takes, checked before connecting: a typo
 * is a usage error whether or not the database answers. */
static int
check_id_args(const char *sub, const struct failed_opts *o, int nargs, char **args)
{
	int show = strcmp(sub, "show") == 0, one = show || o->payload != NULL || o->payload_file != NULL;

	if (strcmp(sub, "list") == 0 || strcmp(sub, "clear") == 0 || o->all)
		return 0;
	if (nargs == 0 && !one)
		return cli_usage_error("failed", "%s needs job IDs", sub);
	if (one && (nargs != 1 || strcmp(args[0], "-") == 0))
		return cli_usage_error("failed",
		    show ? "show takes one job ID" : "retry with --payload or --payload-file takes one job ID");
	if (nargs == 1 && strcmp(args[0], "-") == 0)
		return 0; /* read from stdin, and checked, before connecting (read_input) */
	return cmd_failed_act_ids_check(nargs, args, 0);
}

enum {
	OPT_ALL = 256,
	OPT_LIMIT,
	OPT_OLDER,
	OPT_JSON,
	OPT_DRY_RUN,
	OPT_AFTER,
	OPT_BEFORE,
	OPT_PAYLOAD,
	OPT_PAYLOAD_FILE
};

#define LIST_PAGE 50

/* --limit, --after, --before: which page `failed list` shows; -1 once
 * stored, else the exit status. */
static int
page_opt(int opt, struct failed_opts *o)
{
	int64_t v;

	if (opt == OPT_LIMIT) {
		if (str_to_int64(optarg, 0, 1000000000, &v) < 0)
			return cli_usage_error(
			    "failed", "--limit: expected 0 (all) to 1000000000, not '%s'", optarg);
		o->f.limit = (unsigned)v;
		o->limit_set = 1;
	} else if (cli_parse_id(optarg, opt == OPT_AFTER ? &o->f.after : &o->f.before) < 0)
		return cli_usage_error(
		    "failed", "--%s: '%s' is not a job id", opt == OPT_AFTER ? "after" : "before", optarg);
	return -1;
}

/* One option of failed's own: -1 once stored (or not one of them),
 * else the exit status. */
static int
parse_opt(int opt, struct failed_opts *o)
{
	char err[ERRSZ];

	switch (opt) {
	case 'q':
		o->f.queue = optarg;
		break;
	case 't':
		o->f.type = optarg;
		break;
	case OPT_LIMIT:
	case OPT_AFTER:
	case OPT_BEFORE:
		return page_opt(opt, o);
	case OPT_ALL:
		o->all = 1;
		break;
	case OPT_OLDER:
		if (duration_parse(optarg, &o->older_than_ms, err) < 0)
			return cli_usage_error("failed", "--older-than: %s", err);
		break;
	case OPT_JSON:
		o->json = 1;
		break;
	case OPT_DRY_RUN:
		o->dry_run = 1;
		break;
	case 'y':
		o->yes = 1;
		break;
	case OPT_PAYLOAD:
		o->payload = optarg;
		break;
	case OPT_PAYLOAD_FILE:
		o->payload_file = optarg;
		break;
	}
	return -1;
}

/* Fills *o from the command line; -1 to go on, else the exit status. */
static int
parse_opts(int argc, char **argv, struct failed_opts *o)
{
	static const struct option longopts[] = {
		CLI_COMMON_LONGOPTS,
		{ "queue", required_argument, NULL, 'q' },
		{ "type", required_argument, NULL, 't' },
		{ "limit", required_argument, NULL, OPT_LIMIT },
		{ "all", no_argument, NULL, OPT_ALL },
		{ "older-than", required_argument, NULL, OPT_OLDER },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
		{ "yes", no_argument, NULL, 'y' },
		{ "after", required_argument, NULL, OPT_AFTER },
		{ "before", required_argument, NULL, OPT_BEFORE },
		{ "payload", required_argument, NULL, OPT_PAYLOAD },
		{ "payload-file", required_argument, NULL, OPT_PAYLOAD_FILE },
		{ NULL, 0, NULL, 0 },
	};
	int opt, rc;

	memset(o, 0, sizeof *o);
	o->older_than_ms = -1;
	o->f.limit = LIST_PAGE;
	/* Options may follow the subcommand: jobq failed retry --all. */
	while ((opt = getopt_long(argc, argv, "c:hq:t:y", longopts, NULL)) != -1)
		if ((rc = cli_common_opt(opt, "failed", usage)) >= 0 || (rc = parse_opt(opt, o)) >= 0)
			return rc;
	return -1;
}

/* --dry-run, --yes, --older-than and --json only where they mean
 * something; a bulk delete (clear, a forget of more than one job) needs
 * --yes without a terminal. */
static int
check_bulk(const char *sub, const struct failed_opts *o, int nargs)
{
	int deletes = strcmp(sub, "clear") == 0 || (strcmp(sub, "forget") == 0 && (nargs > 1 || o->all));

	if (o->dry_run && strcmp(sub, "retry") && strcmp(sub, "forget") && strcmp(sub, "clear"))
		return cli_usage_error("failed", "--dry-run goes with retry, forget and clear");
	if (o->yes && strcmp(sub, "forget") && strcmp(sub, "clear"))
		return cli_usage_error("failed", "--yes goes with forget and clear");
	/* taken and ignored, forget --all --older-than 1d would delete every
	 * dead job, the newest too */
	if (o->older_than_ms >= 0 && strcmp(sub, "clear"))
		return cli_usage_error("failed", "--older-than goes with clear");
	if (o->json && strcmp(sub, "list") && strcmp(sub, "show"))
		return cli_usage_error("failed", "--json goes with list and show");
	return deletes ? cli_bulk_check("failed", "deletes rows", o->yes, o->dry_run) : 0;
}

/* What the input alone decides, read before connecting so that a
 * mistake in it is refused whether or not the database answers: the
 * ids a lone '-' reads from stdin, and an edited retry's payload. */
struct failed_input {
	char **ids; /* from stdin, to strv_free; args then points here */
	int from_stdin;
	char *text; /* the edited payload, to free */
	size_t len;
};

static int
read_input(
    const struct conf *c, const struct failed_opts *o, int *nargs, char ***args, struct failed_input *in)
{
	int rc;

	if (*nargs == 1 && strcmp((*args)[0], "-") == 0) {
		if ((rc = cmd_failed_act_stdin_ids(&in->ids, nargs)) != 0)
			return rc;
		*args = in->ids;
		in->from_stdin = 1;
	}
	if (o->payload != NULL || o->payload_file != NULL)
		return cmd_failed_act_edit_read(c, o, (*args)[0], &in->text, &in->len);
	return 0;
}

/* Runs subcommand sub, connected. */
static int
act(struct db *db, const struct conf *c, const char *sub, const struct failed_opts *o, int nargs, char **args,
    const struct failed_input *in)
{
	int rc;

	if (strcmp(sub, "list") == 0)
		return do_list(db, c, o);
	if (strcmp(sub, "show") == 0)
		return do_show(db, c, o, nargs, args);
	if (strcmp(sub, "clear") == 0)
		return cmd_failed_act_clear(db, o);
	if (strcmp(sub, "forget") == 0)
		return o->all ? cmd_failed_act_all(db, c, o, 0)
		              : cmd_failed_act_each(db, c, o, nargs, args, in->from_stdin, 0);
	if (o->all)
		rc = cmd_failed_act_all(db, c, o, 1);
	else if (o->payload != NULL || o->payload_file != NULL)
		rc = cmd_failed_act_edit(db, c, o, args[0], in->text, in->len);
	else
		rc = cmd_failed_act_each(db, c, o, nargs, args, in->from_stdin, 1);
	wakeup_send(c, NULL); /* retried jobs are due now */
	return rc;
}

int
cmd_failed(int argc, char **argv)
{
	struct failed_input in = { NULL, 0, NULL, 0 };
	struct failed_opts o;
	const char *sub = "list";
	struct conf *c;
	struct db *db;
	int rc, nargs;
	char **args;

	if ((rc = parse_opts(argc, argv, &o)) >= 0)
		return rc;
	args = argv + optind;
	nargs = argc - optind;
	if (nargs > 0)
		sub = args[0], args++, nargs--;
	if (strcmp(sub, "list") && strcmp(sub, "show") && strcmp(sub, "retry") && strcmp(sub, "forget") &&
	    strcmp(sub, "clear"))
		return cli_usage_error(
		    "failed", "unknown subcommand '%s' (list, show, retry, forget, clear)", sub);
	if (o.all && strcmp(sub, "retry") != 0 && strcmp(sub, "forget") != 0)
		return cli_usage_error("failed", "--all goes with retry and forget");
	if ((strcmp(sub, "list") == 0 || strcmp(sub, "clear") == 0 || o.all) && nargs > 0)
		return cli_usage_error("failed", "%s%s takes no job IDs", sub, o.all ? " --all" : "");
	if (!o.all && (o.f.queue || o.f.type) && strcmp(sub, "list") != 0)
		return cli_usage_error(
		    "failed", "--queue and --type go with list, retry --all and forget --all");
	if ((o.f.after || o.f.before || o.limit_set) && strcmp(sub, "list") != 0)
		return cli_usage_error("failed", "--limit, --after and --before go with list");
	if ((o.payload || o.payload_file) && (strcmp(sub, "retry") != 0 || o.all))
		return cli_usage_error("failed", "--payload and --payload-file go with retry of one job ID");
	if (o.payload && o.payload_file)
		return cli_usage_error("failed", "--payload or --payload-file: one payload, give one");
	if (o.f.after && o.f.before)
		return cli_usage_error("failed", "--after and --before: one page at a time, give one");
	if ((rc = check_id_args(sub, &o, nargs, args)) != 0)
		return rc;
	if ((rc = check_bulk(sub, &o, nargs == 1 && strcmp(args[0], "-") == 0 ? 2 : nargs)) != 0)
		return rc;
	if ((rc = cli_conf(0, &c)) != 0)
		return rc;
	if ((rc = read_input(c, &o, &nargs, &args, &in)) == 0 && (rc = cli_connect_cancelling(c, &db)) == 0) {
		rc = act(db, c, sub, &o, nargs, args, &in);
		db_free(db);
	}
	strv_free(in.ids);
	free(in.text);
	conf_free(c);
	return rc;
}
