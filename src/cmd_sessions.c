/* cmd_sessions.c -- `jobq sessions`: who is logged in to the dashboard,
 * and `jobq sessions end USER`: log a user out everywhere, through the
 * same sessions_* functions the dashboard's Sessions page calls. */
#include "config.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "audit.h"
#include "cli.h"
#include "sessions.h"

static void
usage(void)
{
	printf("Usage: jobq sessions [--json]\n"
	       "       jobq sessions end USER\n"
	       "List the users logged in to the dashboard (jobq serve): how many live\n"
	       "sessions each has, when and from where the newest one logged in.\n"
	       "'end USER' ends every session of USER on every server at once (also of a\n"
	       "user no longer in the configuration) and writes it to the audit table.\n"
	       "A changed password_hash or a removed [user] section ends that user's\n"
	       "sessions by itself.\n\n"
	       "Options:\n"
	       "      --json   print the list as JSON\n\n"
	       "Exit status: 0 (also when USER had no session); 64 usage; 65 USER is not\n"
	       "a valid user name; 69 database unavailable.\n");
}

static void
print_list(const struct sessions_user *u, size_t n, int json)
{
	size_t i;

	if (json) {
		cJSON *doc = cJSON_CreateArray();

		for (i = 0; i < n; i++) {
			cJSON *o = cJSON_CreateObject();

			cJSON_AddStringToObject(o, "user", u[i].user);
			cJSON_AddNumberToObject(o, "sessions", (double)u[i].count);
			cJSON_AddStringToObject(o, "last_login", u[i].last_login);
			cJSON_AddStringToObject(o, "last_address", u[i].last_address);
			cJSON_AddItemToArray(doc, o);
		}
		cli_print_json(doc);
		return;
	}
	if (n == 0)
		printf("nobody is logged in\n");
	for (i = 0; i < n; i++)
		printf("%-20s %4llu session%s  last login %s UTC from %s\n", u[i].user,
		    (unsigned long long)u[i].count, u[i].count == 1 ? " " : "s", u[i].last_login,
		    u[i].last_address);
}

/* Ends every session of user and writes its audit row, in one
 * transaction (audit_tx): never the one without the other. */
static int
end_sessions(struct db *db, const char *user)
{
	char err[ERRSZ], by[NAME_MAX_LEN + 1], detail[128] = "";
	struct sessions_end c = { user, 0, detail, sizeof detail };
	struct audit_entry e = { by, "", "end-sessions", 0, detail };

	cli_who(by, sizeof by);
	if (audit_tx(db, &e, 0, sessions_end_act, &c, err) != DB_OK)
		return cli_write_failed(db, "jobq sessions, jobq audit", "sessions end: %s", err);
	printf("%llu session%s of %s ended\n", (unsigned long long)c.n, c.n == 1 ? "" : "s", user);
	return 0;
}

/* The arguments after the options: none (list) or "end USER".  Returns
 * -1 when they are fine, else the exit status. */
static int
check_args(int argc, char **argv)
{
	if (optind == argc)
		return -1;
	if (strcmp(argv[optind], "end") != 0)
		return cli_usage_error("sessions", "unknown action '%s' (expected 'end USER')", argv[optind]);
	if (optind + 1 >= argc)
		return cli_usage_error("sessions", "whose sessions? (jobq sessions end USER)");
	if (optind + 2 < argc)
		return cli_usage_error("sessions", "unexpected argument '%s'", argv[optind + 2]);
	if (strlen(argv[optind + 1]) > NAME_MAX_LEN || !conf_valid_name(argv[optind + 1])) {
		cli_error("sessions end: '%s' is not a valid user name", argv[optind + 1]);
		return EX_DATAERR;
	}
	return -1;
}

int
cmd_sessions(int argc, char **argv)
{
	static const struct option longopts[] = { CLI_COMMON_LONGOPTS, { "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 } };
	struct sessions_user *list;
	struct conf *c;
	struct db *db;
	char err[ERRSZ];
	int opt, rc, json = 0;
	size_t n;

	while ((opt = getopt_long(argc, argv, CLI_COMMON_SHORTOPTS, longopts, NULL)) != -1)
		if (opt == 'j')
			json = 1;
		else if ((rc = cli_common_opt(opt, "sessions", usage)) != -2)
			return rc < 0 ? EX_USAGE : rc;
	if ((rc = check_args(argc, argv)) >= 0)
		return rc;
	if (json && optind < argc)
		return cli_usage_error("sessions", "--json goes with the list, not end");
	if ((rc = cli_open(0, &c, &db)) != 0)
		return rc;
	if (optind < argc)
		rc = end_sessions(db, argv[optind + 1]);
	else if (sessions_list(db, &list, &n, err) != DB_OK) {
		cli_error("sessions: %s", err);
		rc = EX_UNAVAILABLE;
	} else {
		print_list(list, n, json);
		sessions_list_free(list, n);
	}
	db_free(db);
	conf_free(c);
	return rc;
}
