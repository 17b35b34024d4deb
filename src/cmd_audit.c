/* cmd_audit.c -- `jobq audit`: the audit trail (every action taken in
 * the dashboard, and `jobq sessions end`), newest first, through the
 * same audit_list() the dashboard's Audit page calls. */
#include "config.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"
#include "cli.h"
#include "isotime.h"
#include "timefmt.h"
#include "utf8.h"

#define AUDIT_CLI_DEFAULT 50

/* What the options ask for; since and until hold the UTC times. */
struct opts {
	struct audit_filter f;
	char since[64], until[64];
	int json;
};

/* Prints the action names audit.c knows, wrapped: the one list, so the
 * help (and the completion that reads it) cannot fall behind. */
static void
print_actions(void)
{
	const char *const *a;
	size_t col = 9;

	printf("Actions:");
	for (a = audit_actions(); *a != NULL; a++) {
		if (col + strlen(*a) + 1 > 72) {
			printf("\n        ");
			col = 8;
		}
		col += printf(" %s", *a);
	}
	printf("\n\n");
}

static void
usage(void)
{
	printf("Usage: jobq audit [--user USER] [--action ACTION] [--since TIME] [--until TIME]\n"
	       "                  [--limit N] [--json]\n"
	       "The audit trail, newest first: who did what, when, from where, on which\n"
	       "job or how many jobs (dashboard actions, logins and logouts, `jobq\n"
	       "sessions end`).  Times are ISO 8601, UTC unless they carry an offset.\n\n"
	       "Options:\n"
	       "      --user USER       only the actions of USER\n"
	       "      --action ACTION   only that action (one of the actions below)\n"
	       "      --since TIME      only actions at or after TIME\n"
	       "      --until TIME      only actions before TIME\n"
	       "      --limit N         at most N rows, 1 to 500 (default 50)\n"
	       "      --json            print the rows as JSON\n\n");
	print_actions();
	printf("Exit status: 0; 64 usage (an unknown action, an empty user, a time\n"
	       "that does not parse); 65 a time outside years 0001-9999 or a user that is no UTF-8;\n"
	       "69 database unavailable.\n");
}

/* --since, --until: ISO 8601 into UTC; like --at of enqueue, a value
 * that does not parse is a usage error, one out of range bad data. */
static int
time_opt(const char *name, char *out, size_t len, const char **dst)
{
	char err[ERRSZ];
	int rc = isotime_to_utc(optarg, out, len, err);

	if (rc == -1)
		return cli_usage_error("audit", "--%s: %s", name, err);
	if (rc != 0) {
		cli_error("audit: --%s: %s", name, err);
		return EX_DATAERR;
	}
	*dst = out;
	return -1;
}

/* --user: refused when it is no UTF-8 (the server would fail on it
 * rather than find no row). */
static int
user_opt(struct opts *o)
{
	size_t len = strlen(optarg);

	if (len == 0) /* no user has no name: it would match nothing, silently */
		return cli_usage_error("audit", "--user: an empty name");
	if (utf8_valid_prefix(optarg, len) != len) {
		cli_error("audit: --user: not UTF-8");
		return EX_DATAERR;
	}
	o->f.user = optarg;
	return -1;
}

static int
action_opt(struct opts *o)
{
	if (!audit_action_known(optarg))
		return cli_usage_error(
		    "audit", "--action: unknown action '%s' (see jobq audit --help)", optarg);
	o->f.action = optarg;
	return -1;
}

/* One option into o: -1 to go on, else the exit status. */
static int
one_opt(int opt, struct opts *o)
{
	int64_t v;

	switch (opt) {
	case 'u':
		return user_opt(o);
	case 'a':
		return action_opt(o);
	case 's':
		return time_opt("since", o->since, sizeof o->since, &o->f.since);
	case 't':
		return time_opt("until", o->until, sizeof o->until, &o->f.until);
	case 'n':
		if (str_to_int64(optarg, 1, AUDIT_LIST_MAX, &v) != 0)
			return cli_usage_error(
			    "audit", "--limit: expected 1 to %d, got '%s'", AUDIT_LIST_MAX, optarg);
		o->f.limit = (unsigned)v;
		return -1;
	case 'j':
		o->json = 1;
		return -1;
	}
	v = cli_common_opt(opt, "audit", usage);
	return v == -2 ? -1 : v == -1 ? EX_USAGE : (int)v;
}

static void
print_json(const struct audit_row *a, size_t n)
{
	cJSON *doc = cJSON_CreateArray();
	size_t i;

	for (i = 0; i < n; i++) {
		cJSON *o = cJSON_CreateObject();
		char *at = timefmt_json(a[i].at);

		cJSON_AddNumberToObject(o, "id", (double)a[i].id);
		cJSON_AddStringToObject(o, "at", at);
		cJSON_AddStringToObject(o, "user", a[i].user);
		cJSON_AddStringToObject(o, "address", a[i].address);
		cJSON_AddStringToObject(o, "action", a[i].action);
		if (a[i].job_id != 0)
			cJSON_AddNumberToObject(o, "job_id", (double)a[i].job_id);
		else
			cJSON_AddNullToObject(o, "job_id");
		if (a[i].count != 0)
			cJSON_AddNumberToObject(o, "count", (double)a[i].count);
		else
			cJSON_AddNullToObject(o, "count");
		cJSON_AddStringToObject(o, "detail", a[i].detail);
		cJSON_AddItemToArray(doc, o);
		free(at);
	}
	cli_print_json(doc);
}

/* One line a row: time (configured zone), user, action, job or count,
 * address, detail. */
static void
print_text(const struct timefmt *f, const struct audit_row *a, size_t n)
{
	char t[TIMEFMT_HUMAN_MAX], on[48];
	size_t i;

	if (n == 0)
		printf("no action matches\n");
	for (i = 0; i < n; i++) {
		if (a[i].job_id != 0)
			snprintf(on, sizeof on, "job %llu", (unsigned long long)a[i].job_id);
		else if (a[i].count != 0)
			snprintf(on, sizeof on, "%llu jobs", (unsigned long long)a[i].count);
		else
			snprintf(on, sizeof on, "-");
		printf("%s  %-16s %-16s %-12s %s%s%s\n", timefmt_human(f, a[i].at, 0, t, sizeof t), a[i].user,
		    a[i].action, on, a[i].address, *a[i].address != '\0' && *a[i].detail != '\0' ? "  " : "",
		    a[i].detail);
	}
}

/* Reads and prints the rows; the exit status. */
static int
list(const struct conf *c, struct db *db, const struct opts *o)
{
	struct audit_row *rows;
	struct timefmt *f = NULL;
	char err[ERRSZ];
	size_t n;

	if (audit_list(db, &o->f, "+00:00", &rows, &n, err) != DB_OK) {
		cli_error("audit: %s", err);
		return EX_UNAVAILABLE;
	}
	if (o->json)
		print_json(rows, n);
	else if ((f = cli_timefmt(c, db, "audit")) != NULL)
		print_text(f, rows, n);
	timefmt_free(f);
	audit_rows_free(rows, n);
	return o->json || f != NULL ? 0 : EX_UNAVAILABLE;
}

int
cmd_audit(int argc, char **argv)
{
	static const struct option longopts[] = { CLI_COMMON_LONGOPTS,
		{ "user", required_argument, NULL, 'u' }, { "action", required_argument, NULL, 'a' },
		{ "since", required_argument, NULL, 's' }, { "until", required_argument, NULL, 't' },
		{ "limit", required_argument, NULL, 'n' }, { "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 } };
	struct opts o = { .f = { .limit = AUDIT_CLI_DEFAULT } };
	struct conf *c;
	struct db *db;
	int opt, rc;

	while ((opt = getopt_long(argc, argv, CLI_COMMON_SHORTOPTS, longopts, NULL)) != -1)
		if ((rc = one_opt(opt, &o)) != -1)
			return rc;
	if (optind < argc)
		return cli_usage_error("audit", "unexpected argument '%s'", argv[optind]);
	if ((rc = cli_open(0, &c, &db)) != 0)
		return rc;
	rc = list(c, db, &o);
	db_free(db);
	conf_free(c);
	return rc;
}
