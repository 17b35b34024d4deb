/* cmd_failed.c -- `jobq failed`: read and act on the dead-letter table. */
#include "config.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "duration.h"
#include "failed.h"
#include "queue.h"

static void
usage(void)
{
	printf("Usage: jobq failed [list] [-q QUEUE] [-t TYPE] [--limit N] [--json]\n"
	       "       jobq failed show ID\n"
	       "       jobq failed retry ID... | --all [-q QUEUE] [-t TYPE]\n"
	       "       jobq failed forget ID...\n"
	       "       jobq failed clear [--older-than DURATION]\n\n"
	       "Dead-lettered jobs wait here for a person.  'list' shows the newest first with\n"
	       "the first line of each error; 'show' the whole job and error; 'retry' moves jobs\n"
	       "back to their queue, due now, with their attempts reset (one transaction per\n"
	       "job); 'forget' deletes them; 'clear' deletes all of them, or those that failed\n"
	       "more than DURATION ago, in chunks.  Each command says how many jobs it touched.\n\n"
	       "Exit status: 0, 65 when an ID is not in the dead-letter table (nothing done).\n");
}

struct opts {
	struct failed_filter f;
	int all, json;
	int64_t older_than_ms;
};

static const char *
first_line(const char *s, char *buf, size_t len)
{
	size_t n = strcspn(s, "\n");

	if (n >= len)
		n = len - 1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	return buf;
}

static int
do_list(struct db *db, const struct conf *c, const struct opts *o)
{
	struct failed_row *rows;
	char err[ERRSZ], line[120];
	size_t n, i;

	if (failed_list(db, &o->f, cli_tz(c), &rows, &n, err) != DB_OK) {
		cli_error("failed list: %s", err);
		return EX_UNAVAILABLE;
	}
	if (o->json) {
		cJSON *arr = cJSON_CreateArray();
		char *s;

		for (i = 0; i < n; i++) {
			cJSON *r = cJSON_CreateObject();

			cJSON_AddNumberToObject(r, "id", (double)rows[i].id);
			cJSON_AddStringToObject(r, "queue", rows[i].queue);
			cJSON_AddStringToObject(r, "type", rows[i].type);
			cJSON_AddNumberToObject(r, "attempts", rows[i].attempts);
			cJSON_AddStringToObject(r, "failed_at", rows[i].failed_at);
			cJSON_AddStringToObject(r, "exit_status", rows[i].exit_status);
			cJSON_AddStringToObject(r, "reason", rows[i].reason);
			cJSON_AddStringToObject(r, "error", rows[i].exception);
			cJSON_AddItemToArray(arr, r);
		}
		s = cJSON_Print(arr);
		puts(s);
		cJSON_free(s);
		cJSON_Delete(arr);
	} else {
		for (i = 0; i < n; i++)
			printf("%-8llu %.19s  %-10s %-16s %-3u %-18s %s\n", (unsigned long long)rows[i].id,
			    rows[i].failed_at, rows[i].queue, rows[i].type, rows[i].attempts,
			    rows[i].exit_status,
			    first_line(
			        *rows[i].exception ? rows[i].exception : rows[i].reason, line, sizeof line));
		printf("%zu failed job%s\n", n, n == 1 ? "" : "s");
	}
	failed_rows_free(rows, n);
	return 0;
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

/* Parses every ID first and checks each is dead-lettered, so that a
 * typo changes nothing. */
static int
collect_ids(struct db *db, int argc, char **argv, uint64_t **ids)
{
	char err[ERRSZ];
	int i, missing = 0;

	*ids = xcalloc((size_t)argc + 1, sizeof **ids);
	for (i = 0; i < argc; i++)
		if (cli_parse_id(argv[i], &(*ids)[i]) < 0) {
			free(*ids);
			return cli_usage_error("failed", "'%s' is not a job id", argv[i]);
		}
	for (i = 0; i < argc; i++) {
		int exists;

		if (failed_exists(db, (*ids)[i], &exists, err) != DB_OK) {
			cli_error("%s", err);
			free(*ids);
			return EX_UNAVAILABLE;
		}
		if (!exists) {
			cli_error("no failed job %llu", (unsigned long long)(*ids)[i]);
			missing++;
		}
	}
	if (missing > 0) {
		cli_error("nothing done");
		free(*ids);
		return EX_DATAERR;
	}
	return 0;
}

static int
do_each(struct db *db, int argc, char **argv, int retry)
{
	uint64_t *ids, done = 0;
	char err[ERRSZ];
	int i, rc, gone = 0;

	if (argc == 0)
		return cli_usage_error("failed", "%s needs job IDs", retry ? "retry" : "forget");
	if ((rc = collect_ids(db, argc, argv, &ids)) != 0)
		return rc;
	for (i = 0; i < argc; i++) {
		rc = retry ? failed_retry(db, ids[i], err) : failed_forget(db, ids[i], err);
		if (rc == DB_OK)
			done++;
		else if (rc == QUEUE_NOT_FOUND) {
			cli_error(
			    "job %llu left the dead-letter table meanwhile", (unsigned long long)ids[i]);
			gone++;
		} else {
			cli_error("%s %llu: %s", retry ? "retry" : "forget", (unsigned long long)ids[i], err);
			break;
		}
	}
	free(ids);
	printf(
	    "%s %llu job%s\n", retry ? "retried" : "forgot", (unsigned long long)done, done == 1 ? "" : "s");
	if (rc != DB_OK && rc != QUEUE_NOT_FOUND)
		return EX_UNAVAILABLE;
	return gone ? EX_DATAERR : 0;
}

static int
do_retry_all(struct db *db, const struct opts *o)
{
	uint64_t n;
	char err[ERRSZ];

	if (failed_retry_matching(db, &o->f, &n, err) != DB_OK) {
		cli_error("retry: %s (%llu retried before the error)", err, (unsigned long long)n);
		return EX_UNAVAILABLE;
	}
	printf("retried %llu job%s\n", (unsigned long long)n, n == 1 ? "" : "s");
	return 0;
}

static int
do_clear(struct db *db, const struct opts *o)
{
	uint64_t n;
	char err[ERRSZ];

	if (failed_clear(db, o->older_than_ms, &n, err) != DB_OK) {
		cli_error("clear: %s (%llu deleted before the error)", err, (unsigned long long)n);
		return EX_UNAVAILABLE;
	}
	printf("cleared %llu failed job%s\n", (unsigned long long)n, n == 1 ? "" : "s");
	return 0;
}

enum { OPT_ALL = 256, OPT_LIMIT, OPT_OLDER, OPT_JSON };

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
		{ NULL, 0, NULL, 0 },
	};
	char err[ERRSZ];
	int64_t v;
	int opt, rc;

	memset(o, 0, sizeof *o);
	o->older_than_ms = -1;
	/* Options may follow the subcommand: jobq failed retry --all. */
	while ((opt = getopt_long(argc, argv, "c:hq:t:", longopts, NULL)) != -1) {
		if ((rc = cli_common_opt(opt, "failed", usage)) >= 0)
			return rc;
		switch (opt) {
		case 'q':
			o->f.queue = optarg;
			break;
		case 't':
			o->f.type = optarg;
			break;
		case OPT_LIMIT:
			if (str_to_int64(optarg, 1, 1000000000, &v) < 0)
				return cli_usage_error(
				    "failed", "--limit: expected a positive number, not '%s'", optarg);
			o->f.limit = (unsigned)v;
			break;
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
		}
	}
	return -1;
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
	if ((strcmp(sub, "list") == 0 || strcmp(sub, "clear") == 0 || o.all) && nargs > 0)
		return cli_usage_error("failed", "%s takes no job IDs", o.all ? "retry --all" : sub);
	if (o.all && strcmp(sub, "retry") != 0)
		return cli_usage_error("failed", "--all goes with retry");
	if ((rc = cli_open(0, &c, &db)) != 0)
		return rc;
	if (strcmp(sub, "list") == 0)
		rc = do_list(db, c, &o);
	else if (strcmp(sub, "show") == 0)
		rc = do_show(db, c, &o, nargs, args);
	else if (strcmp(sub, "retry") == 0)
		rc = o.all ? do_retry_all(db, &o) : do_each(db, nargs, args, 1);
	else if (strcmp(sub, "forget") == 0)
		rc = do_each(db, nargs, args, 0);
	else
		rc = do_clear(db, &o);
	db_free(db);
	conf_free(c);
	return rc;
}
