/* cmd_failed_act.c -- `jobq failed retry`, `forget` and `clear`: act on
 * dead-lettered jobs, one transaction per job, and say what was done
 * (cmd_failed.c reads them and parses the command line). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd_failed_act.h"
#include "duration.h"
#include "json.h"
#include "queue.h"

/* qsort's order of job ids, ascending. */
static int
id_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Appends to b job id, of type in queue, when c has no [handler]
 * section for the type or no [queue] section for the queue: a retry
 * would only dead-letter it again ("unknown job type"), or leave it
 * where no worker may serve it, as `jobq enqueue` refuses such a job
 * for those reasons.  1 when it did. */
static int
note_unknown(const struct conf *c, struct buf *b, uint64_t id, const char *type, const char *queue)
{
	if (type == NULL || (conf_handler(c, type) != NULL && conf_has_queue(c, queue)))
		return 0;
	if (conf_handler(c, type) == NULL)
		buf_printf(b, "%s%llu (type '%s')", b->len > 0 ? ", " : "", (unsigned long long)id, type);
	else
		buf_printf(b, "%s%llu (queue '%s')", b->len > 0 ? ", " : "", (unsigned long long)id, queue);
	return 1;
}

/* Checks that each of the n ids is dead-lettered and, for a retry
 * (c not NULL), that its type has a [handler] section in c; says which
 * are not, on one line each.  0, or the exit status: 65 when some are
 * not (nothing is done then), 69 when the database is unavailable. */
static int
check_ids(struct db *db, const struct conf *c, const uint64_t *ids, size_t n)
{
	char err[ERRSZ], *type, *queue;
	struct buf unknown, untyped;
	size_t i;
	int missing = 0, bad = 0, exists;

	buf_init(&unknown);
	buf_init(&untyped);
	for (i = 0; i < n; i++) {
		if (failed_exists(db, ids[i], &exists, c != NULL ? &type : NULL, c != NULL ? &queue : NULL, err) !=
		    DB_OK) {
			cli_error("%s", err);
			bad = -1;
			break;
		}
		if (!exists)
			buf_printf(&unknown, "%s%llu", missing++ ? ", " : "", (unsigned long long)ids[i]);
		else if (c != NULL)
			bad |= note_unknown(c, &untyped, ids[i], type, queue);
		if (c != NULL) {
			free(type);
			free(queue);
		}
	}
	/* one line, every id in it: those not dead-lettered first */
	if (bad >= 0 && missing > 0)
		cli_error("no failed job %s; nothing done", unknown.data);
	else if (bad > 0)
		cli_error("retry: an unknown job type or queue (no [handler] or [queue] section in %s) "
		          "of job %s: a retry would only dead-letter it again, or leave it where no worker "
		          "serves it; nothing done",
		    c->path, untyped.data);
	buf_free(&unknown);
	buf_free(&untyped);
	return bad < 0 ? EX_UNAVAILABLE : missing > 0 || bad > 0 ? EX_DATAERR : 0;
}

/* 0 when every one of argv is a job id, else EX_USAGE with the first
 * that is not named, and where it came from: the command line, or stdin
 * ('-').  Needs no database: cmd_failed checks the command line's first. */
int
cmd_failed_act_ids_check(int argc, char **argv, int from_stdin)
{
	uint64_t id;
	int i;

	for (i = 0; i < argc; i++) {
		if (cli_parse_id(argv[i], &id) == 0)
			continue;
		if (!from_stdin && strcmp(argv[i], "-") == 0)
			return cli_usage_error("failed", "'-' (read the job IDs from stdin) goes alone, not with IDs");
		return cli_usage_error("failed", "%s'%s' is not a job id", from_stdin ? "stdin: " : "", argv[i]);
	}
	return 0;
}

/* Parses every ID first and checks each is dead-lettered (and, for a
 * retry, c not NULL, of a type c has a handler for), so that a typo
 * changes nothing.  *ids gets each id once, in id order, and *n their
 * number: an id given twice is one job, acted on once. */
static int
collect_ids(struct db *db, const struct conf *c, int argc, char **argv, int from_stdin, uint64_t **ids, size_t *n)
{
	size_t i;
	int rc;

	if ((rc = cmd_failed_act_ids_check(argc, argv, from_stdin)) != 0)
		return rc;
	*ids = xcalloc((size_t)argc + 1, sizeof **ids);
	for (i = 0; i < (size_t)argc; i++)
		cli_parse_id(argv[i], &(*ids)[i]);
	qsort(*ids, (size_t)argc, sizeof **ids, id_cmp);
	for (*n = 0, i = 0; i < (size_t)argc; i++)
		if (*n == 0 || (*ids)[*n - 1] != (*ids)[i])
			(*ids)[(*n)++] = (*ids)[i];
	if ((rc = check_ids(db, c, *ids, *n)) != 0)
		free(*ids);
	return rc;
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
 * the others still go.  argv holds at least one id (cmd_failed checked
 * the command line), from it or, from_stdin, from stdin
 * (cmd_failed_act_stdin_ids). */
int
cmd_failed_act_each(struct db *db, const struct conf *c, const struct failed_opts *o, int argc, char **argv,
    int from_stdin, int retry)
{
	struct tally t;
	uint64_t *ids;
	char err[ERRSZ] = "";
	size_t i, n = 0;
	int rc = DB_OK;
	failed_act_fn *act;

	if ((rc = collect_ids(db, retry ? c : NULL, argc, argv, from_stdin, &ids, &n)) != 0)
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

/* The ids a lone '-' reads from stdin, into *v (to strv_free) and *n,
 * each checked to be a job id: read before connecting, so that a typo
 * is a usage error whether or not the database answers.  0, or the
 * exit status once said why. */
int
cmd_failed_act_stdin_ids(char ***v, int *n)
{
	int rc;

	if ((*v = cli_read_ids(stdin, n)) == NULL) {
		cli_error("failed: reading job IDs from stdin: %s; nothing done", strerror(errno));
		return EX_NOINPUT;
	}
	rc = *n == 0 ? cli_usage_error("failed", "no job IDs on stdin") : cmd_failed_act_ids_check(*n, *v, 1);
	if (rc != 0) {
		strv_free(*v);
		*v = NULL;
	}
	return rc;
}

/* The new payload of retry --payload / --payload-file into *text (to
 * free), its trailing blanks dropped as enqueue drops echo's newline;
 * 0, or the exit status once said why. */
static int
read_edit(const struct failed_opts *o, size_t max, char **text, size_t *len)
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
		*text = NULL; /* the caller frees what it gets back either way */
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

/* The new payload of retry --payload / --payload-file, read and held to
 * the rule of every payload (json_payload_check, max_payload) before the
 * database is asked anything: *text (to free) and *len.  0, or the exit
 * status once said why (65 a bad payload; nothing done). */
int
cmd_failed_act_edit_read(const struct conf *c, const struct failed_opts *o, const char *id, char **text,
    size_t *len)
{
	char err[ERRSZ];
	int rc;

	if ((rc = read_edit(o, c->worker.max_payload, text, len)) != 0)
		return rc;
	if (json_payload_check(*text, *len, c->worker.max_payload, 0, err) < 0) {
		cli_error("failed retry %s: %s; nothing done", id, err);
		free(*text);
		*text = NULL;
		return EX_DATAERR;
	}
	return 0;
}

/* retry --payload JSON ID: one dead job back to its queue carrying the
 * new payload (text, len: cmd_failed_act_edit_read's), the move and its
 * audit row (by cli:USER) one transaction (failed_retry_edited).
 * --dry-run checks the job. */
int
cmd_failed_act_edit(struct db *db, const struct conf *c, const struct failed_opts *o, const char *arg,
    const char *text, size_t len)
{
	struct failed_edit e = { text, len, c->worker.max_payload, NULL, "" };
	char err[ERRSZ], by[NAME_MAX_LEN + 1];
	uint64_t id;
	int rc;

	cli_parse_id(arg, &id); /* cmd_failed checked the command line */
	if ((rc = check_ids(db, c, &id, 1)) != 0)
		return rc;
	cli_who(by, sizeof by);
	e.user = by;
	if (!o->dry_run)
		rc = failed_retry_edited(db, id, &e, err);
	else if ((rc = failed_retry_check(db, id, err)) == DB_OK) {
		printf("would retry job %llu with the edited payload\n", (unsigned long long)id);
		return 0;
	}
	return edit_status(rc, id, err);
}

/* A filter naming a type or queue the configuration does not have may
 * be a typo: "retried 0 jobs" (or "0 failed jobs") alone would hide it. */
void
cmd_failed_note_unknown(const struct conf *c, const struct failed_opts *o)
{
	if (o->f.type != NULL && conf_handler(c, o->f.type) == NULL)
		cli_error("note: no [handler %s] in %s (a type only old jobs may have, or a typo?)",
		    o->f.type, c->path);
	if (o->f.queue != NULL && !conf_has_queue(c, o->f.queue))
		cli_error("note: no [queue %s] in %s (a queue only old jobs may have, or a typo?)",
		    o->f.queue, c->path);
}

/* retry --all: the jobs of f whose type has no [handler] section in c
 * stay dead-lettered (a retry would only dead-letter them again, as
 * `jobq enqueue` refuses such a job); says how many, and narrows f to
 * the others.  *left: how many stay.  0, or the exit status. */
static int
left_unknown(struct db *db, const struct conf *c, struct failed_filter *f, int dry_run, uint64_t *left)
{
	char err[ERRSZ];

	f->handlers = c;
	f->unknown_types = 1;
	if (failed_count(db, f, left, err) != DB_OK) {
		cli_error("retry: %s", err);
		return EX_UNAVAILABLE;
	}
	f->unknown_types = 0;
	if (*left > 0)
		cli_error("retry: %llu job%s of an unknown job type or queue (no [handler] or [queue] section "
		          "in %s) %s dead-lettered: a retry would only dead-letter %s again, or leave %s "
		          "where no worker serves %s",
		    (unsigned long long)*left, *left == 1 ? "" : "s", c->path,
		    dry_run ? "would stay" : *left == 1 ? "stays" : "stay", *left == 1 ? "it" : "them",
		    *left == 1 ? "it" : "them", *left == 1 ? "it" : "them");
	return 0;
}

/* retry --all / forget --all: every job matching the filters, one at a
 * time; forget asks first on a terminal (cli_bulk_check ran before). */
int
cmd_failed_act_all(struct db *db, const struct conf *c, const struct failed_opts *o, int retry)
{
	const char *verb = retry ? "retry" : "forget";
	struct failed_filter f = o->f;
	struct tally t;
	uint64_t total, left = 0;
	char err[ERRSZ] = "";
	int rc;

	cmd_failed_note_unknown(c, o);
	if (retry && (rc = left_unknown(db, c, &f, o->dry_run, &left)) != 0)
		return rc;
	if (failed_count(db, &f, &total, err) != DB_OK) {
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
	rc = !retry      ? failed_forget_matching(db, &f, tally_add, &t, err)
	    : o->dry_run ? failed_retry_check_matching(db, &f, tally_add, &t, err)
	                 : failed_retry_matching(db, &f, tally_add, &t, err);
	rc = tally_end(&t, rc, err);
	return rc == 0 && left > 0 ? EXIT_FAIL : rc;
}

/* clear [--older-than D]: every dead job, or those older, in chunks. */
int
cmd_failed_act_clear(struct db *db, const struct failed_opts *o)
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
		cli_error("clear: %s (%llu deleted before the error%s)", err, (unsigned long long)n,
		    db_unsure(db) ? "; the answer to the last chunk was lost: it may have been deleted too; "
		                    "look (jobq failed)"
		                  : "");
		return EX_UNAVAILABLE;
	}
	printf("cleared %llu failed job%s\n", (unsigned long long)n, n == 1 ? "" : "s");
	return 0;
}
