/* cmd_failed.c -- `jobq failed`: read and act on the dead-letter table. */
#include "config.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "duration.h"
#include "failed.h"
#include "json.h"
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
	    "'-' in place of IDs reads them from stdin (blank-separated, any number of them).\n"
	    "An ID given twice is one job, retried or forgotten once.\n\n"
	    "A job that cannot be retried (say, its id is in the queue again) is named on\n"
	    "stderr and the others still are; 'retry --all' shows its progress on a\n"
	    "terminal.  --dry-run says how many jobs would be touched and changes nothing;\n"
	    "with retry it names the jobs a retry would refuse, and why.\n\n"
	    "'clear' and a 'forget' of more than one job state the count and ask first on a\n"
	    "terminal; without one (scripts, cron) they delete nothing unless given --yes.\n\n"
	    "Exit status: 0; 1 when some jobs could not (with --dry-run, would not) be\n"
	    "retried or forgotten (named on stderr), or the question was not answered yes;\n"
	    "64 bad usage, or a bulk delete\n"
	    "with no terminal and no --yes; 65 when an ID is not in the dead-letter table\n"
	    "(nothing done), or the new payload is not JSON or too large (nothing done);\n"
	    "66 the payload file, or the IDs on stdin, cannot be read; 69 database\n"
	    "unavailable (only then does a retry run stop early).\n");
}

struct opts {
	struct failed_filter f;
	int all, json, dry_run, yes, limit_set;
	int64_t older_than_ms;
	const char *payload, *payload_file; /* retry with an edited payload */
};

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
page_args(const struct opts *o, int with_limit)
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
print_list_footer(struct db *db, const struct opts *o, const struct failed_row *rows, size_t n)
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
print_json_more(struct db *db, const struct opts *o, const struct failed_row *rows, size_t n)
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
do_list(struct db *db, const struct conf *c, const struct opts *o)
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
do_show(struct db *db, const struct conf *c, const struct opts *o, int argc, char **argv)
{
	uint64_t id;

	if (argc != 1)
		return cli_usage_error("failed", "show takes one job ID");
	if (cli_parse_id(argv[0], &id) < 0)
		return cli_usage_error("failed", "'%s' is not a job id", argv[0]);
	return show_job(c, db, id, o->json, 1);
}

/* qsort's order of job ids, ascending. */
static int
id_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Parses every ID first and checks each is dead-lettered, so that a
 * typo changes nothing.  *ids gets each id once, in id order, and *n
 * their number: an id given twice is one job, acted on once. */
static int
collect_ids(struct db *db, int argc, char **argv, uint64_t **ids, size_t *n)
{
	char err[ERRSZ];
	struct buf unknown;
	size_t i;
	int missing = 0;

	*ids = xcalloc((size_t)argc + 1, sizeof **ids);
	for (i = 0; i < (size_t)argc; i++)
		if (cli_parse_id(argv[i], &(*ids)[i]) < 0) {
			free(*ids);
			return cli_usage_error("failed", "'%s' is not a job id", argv[i]);
		}
	qsort(*ids, (size_t)argc, sizeof **ids, id_cmp);
	for (*n = 0, i = 0; i < (size_t)argc; i++)
		if (*n == 0 || (*ids)[*n - 1] != (*ids)[i])
			(*ids)[(*n)++] = (*ids)[i];
	buf_init(&unknown);
	for (i = 0; i < *n; i++) {
		int exists;

		if (failed_exists(db, (*ids)[i], &exists, err) != DB_OK) {
			cli_error("%s", err);
			free(*ids);
			buf_free(&unknown);
			return EX_UNAVAILABLE;
		}
		if (!exists)
			buf_printf(&unknown, "%s%llu", missing++ ? ", " : "", (unsigned long long)(*ids)[i]);
	}
	if (missing > 0) /* one line, every unknown id in it */
		cli_error("no failed job %s; nothing done", unknown.data);
	buf_free(&unknown);
	if (missing > 0) {
		free(*ids);
		return EX_DATAERR;
	}
	return 0;
}

/* What a run over many jobs did: the jobs it could not do are named at
 * the end, the first few with the reason. */
struct tally {
	const char *verb; /* "retried", "forgot", "would retry" (a dry run) */
	const char *what; /* "retried", "forgotten" */
	const char *could; /* "could", "would" (a dry run) */
	uint64_t done, gone, failed, total;
	struct buf failed_ids;
	struct cli_progress progress;
};

#define TALLY_REASONS 20

/* A tally of a retry (or its dry run) or a forget of total jobs. */
static void
tally_init(struct tally *t, int retry, int dry_run, uint64_t total)
{
	memset(t, 0, sizeof *t);
	t->verb = !retry ? "forgot" : dry_run ? "would retry" : "retried";
	t->what = retry ? "retried" : "forgotten";
	t->could = retry && dry_run ? "would" : "could";
	t->total = total;
	buf_init(&t->failed_ids);
	cli_progress_init(&t->progress);
}

/* Counts one job's result (failed_each_fn). */
static void
tally_add(void *arg, uint64_t id, int rc, const char *err)
{
	struct tally *t = arg;

	if (rc == DB_OK)
		t->done++;
	else if (rc == QUEUE_NOT_FOUND)
		t->gone++;
	else {
		cli_progress_end(&t->progress);
		if (t->failed++ < TALLY_REASONS)
			cli_error("job %llu: %s", (unsigned long long)id, err);
		buf_printf(&t->failed_ids, " %llu", (unsigned long long)id);
	}
	cli_progress(&t->progress, "%s %llu of %llu (%llu failed)", t->verb, (unsigned long long)t->done,
	    (unsigned long long)t->total, (unsigned long long)t->failed);
}

/* Prints the count on stdout and what failed on stderr; returns the
 * exit status: 0, 1 when some jobs failed, 69 when the database went
 * away (rc DB_EGONE, its reason in err). */
static int
tally_end(struct tally *t, int rc, const char *err)
{
	cli_progress_end(&t->progress);
	printf("%s %llu job%s\n", t->verb, (unsigned long long)t->done, t->done == 1 ? "" : "s");
	if (t->gone > 0)
		cli_error("%llu job%s left the dead-letter table meanwhile", (unsigned long long)t->gone,
		    t->gone == 1 ? "" : "s");
	if (t->failed > 0)
		cli_error("%llu job%s %s not be %s and stay%s dead-lettered:%s",
		    (unsigned long long)t->failed, t->failed == 1 ? "" : "s", t->could, t->what,
		    t->failed == 1 ? "s" : "", t->failed_ids.data);
	buf_free(&t->failed_ids);
	if (rc == DB_EGONE) {
		cli_error("stopped: %s", err);
		return EX_UNAVAILABLE;
	}
	return t->failed > 0 ? EXIT_FAIL : 0;
}

/* retry ID... / forget ID...: every id checked first (a typo changes
 * nothing), then one transaction per job; a job that fails is named and
 * the others still go. */
static int
do_each(struct db *db, const struct opts *o, int argc, char **argv, int retry)
{
	struct tally t;
	uint64_t *ids;
	char err[ERRSZ] = "";
	size_t i, n = 0;
	int rc = DB_OK;
	failed_act_fn *act;

	if (argc == 0)
		return cli_usage_error("failed", "%s needs job IDs", retry ? "retry" : "forget");
	if (argc == 1 && strcmp(argv[0], "-") == 0) {
		int given;
		char **v = cli_read_ids(stdin, &given);

		if (v == NULL) {
			cli_error("failed: reading job IDs from stdin: %s; nothing done", strerror(errno));
			return EX_NOINPUT;
		}
		rc = given == 0 ? cli_usage_error("failed", "no job IDs on stdin")
		                : do_each(db, o, given, v, retry);
		strv_free(v);
		return rc;
	}
	if ((rc = collect_ids(db, argc, argv, &ids, &n)) != 0)
		return rc;
	if ((!retry && o->dry_run) ||
	    (!retry && n > 1 && !o->yes && !cli_confirm("forget %zu dead-lettered jobs for good?", n))) {
		if (o->dry_run)
			printf("would forget %zu job%s\n", n, n == 1 ? "" : "s");
		else
			cli_error("forget: not confirmed; nothing deleted");
		free(ids);
		return o->dry_run ? 0 : EXIT_FAIL;
	}
	/* A dry run of retry asks of each job what would refuse it. */
	act = !retry ? failed_forget_audited : o->dry_run ? failed_retry_check_act : failed_retry_audited;
	tally_init(&t, retry, o->dry_run, (uint64_t)n);
	for (i = 0; i < n; i++) {
		rc = failed_act_reconnecting(db, act, ids[i], NULL, err);
		if (rc == DB_EGONE)
			break;
		tally_add(&t, ids[i], rc, err);
	}
	free(ids);
	rc = tally_end(&t, rc, err);
	return rc == 0 && t.gone > 0 ? EX_DATAERR : rc;
}

/* The new payload of retry --payload / --payload-file into *text (to
 * free), its trailing blanks dropped as enqueue drops echo's newline;
 * 0, or the exit status once said why. */
static int
read_edit(const struct opts *o, size_t max, char **text, size_t *len)
{
	const char *path = o->payload_file;
	FILE *f;

	if (o->payload != NULL) {
		*text = xstrdup(o->payload);
		*len = strlen(*text);
		return 0;
	}
	if ((f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb")) == NULL) {
		cli_error("failed retry: open %s: %s; nothing done", path, strerror(errno));
		return EX_NOINPUT;
	}
	*text = cli_read_all(f, max, len);
	if (f != stdin)
		fclose(f);
	if (*text == NULL) {
		cli_error("failed retry: read %s: %s; nothing done", path, strerror(errno));
		return EX_NOINPUT;
	}
	if (*len > max) {
		cli_error(
		    "failed retry: the payload in %s is more than max_payload (%zu bytes); nothing done",
		    path, max);
		free(*text);
		return EX_DATAERR;
	}
	while (*len > 0 && strchr(" \t\r\n", (*text)[*len - 1]) != NULL)
		(*text)[--*len] = '\0';
	return 0;
}

/* How failed_retry_edited's answer rc for job id ends the command. */
static int
edit_status(int rc, uint64_t id, const char *err)
{
	if (rc == DB_OK) {
		printf("retried job %llu with the edited payload\n", (unsigned long long)id);
		return 0;
	}
	if (rc == QUEUE_NOT_FOUND)
		cli_error("no failed job %llu; nothing done", (unsigned long long)id);
	else
		cli_error("failed retry %llu: %s%s", (unsigned long long)id, err,
		    rc == FAILED_BAD_PAYLOAD ? "; nothing done" : "");
	if (rc == QUEUE_NOT_FOUND || rc == FAILED_BAD_PAYLOAD)
		return EX_DATAERR;
	return rc == DB_EGONE ? EX_UNAVAILABLE : EXIT_FAIL;
}

/* retry --payload JSON ID: one dead job back to its queue carrying the
 * new payload, the move and its audit row (by cli:USER) one transaction
 * (failed_retry_edited).  --dry-run checks the payload and the job. */
static int
do_edit(struct db *db, const struct conf *c, const struct opts *o, int argc, char **argv)
{
	struct failed_edit e = { NULL, 0, c->worker.max_payload, NULL, "" };
	char err[ERRSZ], by[NAME_MAX_LEN + 1], *text;
	uint64_t id;
	int rc;

	if (argc != 1 || strcmp(argv[0], "-") == 0)
		return cli_usage_error("failed", "retry with --payload or --payload-file takes one job ID");
	if (cli_parse_id(argv[0], &id) < 0)
		return cli_usage_error("failed", "'%s' is not a job id", argv[0]);
	if ((rc = read_edit(o, c->worker.max_payload, &text, &e.payload_len)) != 0)
		return rc;
	cli_who(by, sizeof by);
	e.payload = text;
	e.user = by;
	if (!o->dry_run)
		rc = failed_retry_edited(db, id, &e, err);
	else if (json_payload_check(text, e.payload_len, e.max_payload, 0, err) < 0)
		rc = FAILED_BAD_PAYLOAD;
	else if ((rc = failed_retry_check(db, id, err)) == DB_OK) {
		printf("would retry job %llu with the edited payload\n", (unsigned long long)id);
		free(text);
		return 0;
	}
	free(text);
	return edit_status(rc, id, err);
}

/* A filter naming a type or queue the configuration does not have may
 * be a typo: "retried 0 jobs" alone would hide it. */
static void
note_unknown_filter(const struct conf *c, const struct opts *o)
{
	if (o->f.type != NULL && conf_handler(c, o->f.type) == NULL)
		cli_error("note: no [handler %s] in %s (a type only old jobs may have, or a typo?)",
		    o->f.type, c->path);
	if (o->f.queue != NULL && !conf_has_queue(c, o->f.queue))
		cli_error("note: no [queue %s] in %s (a queue only old jobs may have, or a typo?)",
		    o->f.queue, c->path);
}

/* retry --all / forget --all: every job matching the filters, one at a
 * time; forget asks first on a terminal (cli_bulk_check ran before). */
static int
do_all(struct db *db, const struct conf *c, const struct opts *o, int retry)
{
	const char *verb = retry ? "retry" : "forget";
	struct tally t;
	uint64_t total;
	char err[ERRSZ] = "";
	int rc;

	note_unknown_filter(c, o);
	if (failed_count(db, &o->f, &total, err) != DB_OK) {
		cli_error("%s: %s", verb, err);
		return EX_UNAVAILABLE;
	}
	if (o->dry_run && !retry) {
		printf("would forget %llu job%s\n", (unsigned long long)total, total == 1 ? "" : "s");
		return 0;
	}
	if (!retry && !o->yes && total > 0 &&
	    !cli_confirm("forget %llu dead-lettered job%s for good?", (unsigned long long)total,
	        total == 1 ? "" : "s")) {
		cli_error("forget: not confirmed; nothing deleted");
		return EXIT_FAIL;
	}
	tally_init(&t, retry, o->dry_run, total);
	rc = !retry      ? failed_forget_matching(db, &o->f, tally_add, &t, err)
	    : o->dry_run ? failed_retry_check_matching(db, &o->f, tally_add, &t, err)
	                 : failed_retry_matching(db, &o->f, tally_add, &t, err);
	return tally_end(&t, rc, err);
}

static int
do_clear(struct db *db, const struct opts *o)
{
	uint64_t n;
	char err[ERRSZ], d[32] = "";

	if ((o->dry_run || !o->yes) && failed_clear(db, o->older_than_ms, 1, &n, err) != DB_OK) {
		cli_error("clear: %s", err);
		return EX_UNAVAILABLE;
	}
	if (o->dry_run) {
		printf("would clear %llu failed job%s\n", (unsigned long long)n, n == 1 ? "" : "s");
		return 0;
	}
	if (o->older_than_ms >= 0)
		duration_format(o->older_than_ms, d, sizeof d);
	if (!o->yes && n > 0 &&
	    !cli_confirm("delete %llu dead-lettered job%s%s%s%s for good?", (unsigned long long)n,
	        n == 1 ? "" : "s", *d ? " that failed more than " : "", *d ? d : "", *d ? " ago" : "")) {
		cli_error("clear: not confirmed; nothing deleted");
		return EXIT_FAIL;
	}
	if (failed_clear(db, o->older_than_ms, 0, &n, err) != DB_OK) {
		cli_error("clear: %s (%llu deleted before the error)", err, (unsigned long long)n);
		return EX_UNAVAILABLE;
	}
	printf("cleared %llu failed job%s\n", (unsigned long long)n, n == 1 ? "" : "s");
	return 0;
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
page_opt(int opt, struct opts *o)
{
	int64_t v;

	if (opt == OPT_LIMIT) {
		if (str_to_int64(optarg, 0, 1000000000, &v) < 0)
			return cli_usage_error(
			    "failed", "--limit: expected a number (0: all), not '%s'", optarg);
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
parse_opt(int opt, struct opts *o)
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
parse_opts(int argc, char **argv, struct opts *o)
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
check_bulk(const char *sub, const struct opts *o, int nargs)
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

int
cmd_failed(int argc, char **argv)
{
	struct opts o;
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
	if ((rc = check_bulk(sub, &o, nargs == 1 && strcmp(args[0], "-") == 0 ? 2 : nargs)) != 0)
		return rc;
	if ((rc = cli_open_cancelling(&c, &db)) != 0)
		return rc;
	if (strcmp(sub, "list") == 0)
		rc = do_list(db, c, &o);
	else if (strcmp(sub, "show") == 0)
		rc = do_show(db, c, &o, nargs, args);
	else if (strcmp(sub, "retry") == 0) {
		rc = o.all                        ? do_all(db, c, &o, 1)
		    : o.payload || o.payload_file ? do_edit(db, c, &o, nargs, args)
		                                  : do_each(db, &o, nargs, args, 1);
		wakeup_send(c, NULL); /* retried jobs are due now */
	} else if (strcmp(sub, "forget") == 0)
		rc = o.all ? do_all(db, c, &o, 0) : do_each(db, &o, nargs, args, 0);
	else
		rc = do_clear(db, &o);
	db_free(db);
	conf_free(c);
	return rc;
}
