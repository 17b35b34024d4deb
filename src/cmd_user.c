/* cmd_user.c -- `jobq user`: the dashboard's users kept in the database
 * (list, add, role, passwd, remove), through the same users_* functions
 * as the dashboard's Users page, each change audited. */
#include "config.h"

#include <cjson/cJSON.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audit.h"
#include "cli.h"
#include "password.h"
#include "users.h"

static void
usage(void)
{
	printf("Usage: jobq user [list] [--json]\n"
	       "       jobq user add NAME [--role admin|viewer] [--stdin]\n"
	       "       jobq user role NAME admin|viewer\n"
	       "       jobq user passwd NAME [--stdin]\n"
	       "       jobq user remove NAME\n"
	       "The dashboard's users (jobq serve): those of the [user NAME] sections of\n"
	       "jobq.ini, changed only there, and those kept in the database, which admins\n"
	       "change here or on the dashboard's Users page, for every server at once.\n"
	       "add makes a viewer unless --role admin.  A password is read twice from the\n"
	       "terminal without echo; otherwise (or with --stdin) it is the first line of\n"
	       "standard input; at least 8 characters.  A new password or a removal ends\n"
	       "the user's sessions.  Every change is written to the audit table.\n\n"
	       "Options:\n"
	       "      --role ROLE   admin or viewer (add)\n"
	       "      --stdin       read the password from standard input\n"
	       "      --json        print the list as JSON\n\n"
	       "Exit status: 0; 64 usage; 65 a bad name, role or password, no such user,\n"
	       "a name taken, or a user of jobq.ini; 69 database unavailable.\n");
}

struct opts {
	const char *role;
	int from_stdin, json;
};

static void
print_list(const struct user_rec *u, size_t n, int json)
{
	size_t i;

	if (json) {
		cJSON *doc = cJSON_CreateArray();

		for (i = 0; i < n; i++) {
			cJSON *o = cJSON_CreateObject();

			cJSON_AddStringToObject(o, "user", u[i].name);
			cJSON_AddStringToObject(o, "role", u[i].admin ? "admin" : "viewer");
			cJSON_AddStringToObject(o, "source", u[i].in_db ? "database" : "jobq.ini");
			cJSON_AddItemToArray(doc, o);
		}
		cli_print_json(doc);
		return;
	}
	if (n == 0)
		printf("no users: add one with 'jobq user add NAME --role admin'\n");
	for (i = 0; i < n; i++)
		printf("%-24s %-7s %s\n", u[i].name, u[i].admin ? "admin" : "viewer",
		    u[i].in_db ? "database" : "jobq.ini");
}

/* The exit status of a users_* result, after saying what went wrong. */
static int
status(const char *action, int rc, const char *err)
{
	if (rc == DB_OK)
		return 0;
	cli_error("user %s: %s", action, err);
	return rc == USERS_NOT_FOUND || rc == USERS_CONFLICT ? EX_DATAERR : EX_UNAVAILABLE;
}

/* add and passwd: a password read and hashed into hash. */
static int
new_hash(const char *action, const struct opts *o, char *hash)
{
	char pw[PASSWORD_MAX + 2], err[ERRSZ], cmd[32];
	int rc;

	snprintf(cmd, sizeof cmd, "user %s", action); /* messages name the command as typed */
	rc = password_read(cmd, o->from_stdin, pw, sizeof pw);

	if (rc == 0 && password_hash(pw, hash, err) < 0) {
		cli_error("user %s: %s", action, err);
		rc = strstr(err, "memory") != NULL ? EXIT_FAIL : EX_DATAERR;
	}
	sodium_memzero(pw, sizeof pw);
	return rc;
}

/* Whether the password is typed at a prompt (password_read): not
 * asked for before passwd has found the user (no password is asked for
 * a user that cannot take one). */
static int
prompts(const struct opts *o)
{
	return !o->from_stdin && isatty(STDIN_FILENO);
}

/* What the input alone refutes, before the database is asked anything:
 * a user of jobq.ini (changed only there) and, for add and for a passwd
 * whose password is not typed at a prompt, the password, read and
 * hashed into hash (else left empty).  0, or the exit status after
 * saying why. */
static int
check_local(const struct conf *c, char **argv, const struct opts *o, char *hash)
{
	const char *action = argv[0], *name = argv[1];

	hash[0] = '\0';
	if (strcmp(action, "list") == 0)
		return 0;
	if (conf_serve_user(c, name) != NULL) {
		cli_error("user %s: user %s is in %s: change it there", action, name, c->path);
		return EX_DATAERR;
	}
	if (strcmp(action, "add") == 0 || (strcmp(action, "passwd") == 0 && !prompts(o)))
		return new_hash(action, o, hash);
	return 0;
}

/* Runs action (argv[0]) on user NAME (argv[1]) with the hash check_local
 * made (or, for a passwd at a prompt, asks for it now), and writes its
 * audit row in the same transaction (audit_tx): the change is never made
 * without its row.  A lost answer to the COMMIT is said as such: it may
 * have been made, with its row. */
static int
change(const struct conf *c, struct db *db, char **argv, const struct opts *o, const char *hash)
{
	const char *action = argv[0], *name = argv[1];
	char err[ERRSZ], by[NAME_MAX_LEN + 1], detail[NAME_MAX_LEN + 64];
	struct user_rec u;
	struct users_change ch = { c, USERS_REMOVE, name, &u, 0, u.hash };
	struct audit_entry e = { by, "", "user-remove", 0, detail };
	int rc;

	memset(&u, 0, sizeof u);
	snprintf(u.hash, sizeof u.hash, "%s", hash);
	cli_who(by, sizeof by);
	snprintf(detail, sizeof detail, "user %s; its sessions end", name);
	if (strcmp(action, "add") == 0) {
		snprintf(u.name, sizeof u.name, "%s", name);
		u.admin = users_role(o->role) == 1;
		cli_who(u.created_by, sizeof u.created_by);
		ch.op = USERS_ADD;
		e.action = "user-add";
		snprintf(detail, sizeof detail, "user %s, role %s", name, u.admin ? "admin" : "viewer");
	} else if (strcmp(action, "role") == 0) {
		ch.op = USERS_ROLE;
		ch.admin = users_role(argv[2]);
		e.action = "user-role";
		snprintf(detail, sizeof detail, "user %s, role %s", name, argv[2]);
	} else if (strcmp(action, "passwd") == 0) {
		if ((rc = users_changeable(db, c, name, err)) != DB_OK)
			return status(action, rc, err);
		if (u.hash[0] == '\0' && (rc = new_hash("passwd", o, u.hash)) != 0)
			return rc;
		ch.op = USERS_HASH;
		e.action = "user-password";
		snprintf(detail, sizeof detail, "user %s: a new password; its sessions end", name);
	}
	rc = audit_tx(db, &e, 0, users_change_act, &ch, err);
	sodium_memzero(&u, sizeof u);
	if (rc < 0)
		return cli_write_failed(db, "jobq user list, jobq audit", "user %s: %s", action, err);
	if ((rc = status(action, rc, err)) == 0)
		printf("%s\n", detail);
	return rc;
}

/* Checks the words after the options: -1 when they make a command, else
 * the exit status. */
static int
check_args(int argc, char **argv, const struct opts *o)
{
	static const char *const actions[] = { "list", "add", "role", "passwd", "remove", NULL };
	const char *a = optind < argc ? argv[optind] : "list";
	int i, want, given = optind < argc ? argc - optind - 1 : 0;

	for (i = 0; actions[i] != NULL && strcmp(actions[i], a) != 0; i++)
		;
	if (actions[i] == NULL)
		return cli_usage_error("user", "unknown action '%s' (list, add, role, passwd or remove)", a);
	want = i == 0 ? 0 : i == 2 ? 2 : 1;
	if (given < want)
		return cli_usage_error("user", "%s needs %s", a, want == 2 ? "NAME and a role" : "a user NAME");
	if (given > want)
		return cli_usage_error("user", "unexpected argument '%s'", argv[optind + 1 + want]);
	if (o->role != NULL && i != 1)
		return cli_usage_error("user", "--role goes with add (to change it: jobq user role NAME ROLE)");
	if (o->json && i != 0)
		return cli_usage_error("user", "--json goes with list");
	if (o->from_stdin && i != 1 && i != 3)
		return cli_usage_error("user", "--stdin goes with add and passwd");
	if (want > 0 && users_bad_name(argv[optind + 1]) != NULL) {
		cli_error("user %s: '%s': %s", a, argv[optind + 1], users_bad_name(argv[optind + 1]));
		return EX_DATAERR;
	}
	if ((i == 2 && users_role(argv[optind + 2]) < 0) || (o->role != NULL && users_role(o->role) < 0)) {
		cli_error("user %s: role: expected admin or viewer, not '%s'", a, i == 2 ? argv[optind + 2] : o->role);
		return EX_DATAERR;
	}
	return -1;
}

int
cmd_user(int argc, char **argv)
{
	static const struct option longopts[] = { CLI_COMMON_LONGOPTS, { "json", no_argument, NULL, 'j' },
		{ "role", required_argument, NULL, 'r' }, { "stdin", no_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 } };
	struct opts o = { NULL, 0, 0 };
	struct user_rec *list;
	struct conf *c;
	struct db *db;
	char err[ERRSZ], hash[PASSWORD_HASH_MAX];
	int opt, rc;
	size_t n;

	while ((opt = getopt_long(argc, argv, CLI_COMMON_SHORTOPTS, longopts, NULL)) != -1)
		if (opt == 'j')
			o.json = 1;
		else if (opt == 'r')
			o.role = optarg;
		else if (opt == 's')
			o.from_stdin = 1;
		else if ((rc = cli_common_opt(opt, "user", usage)) != -2)
			return rc < 0 ? EX_USAGE : rc;
	if ((rc = check_args(argc, argv, &o)) >= 0)
		return rc;
	if ((rc = cli_conf(0, &c)) != 0)
		return rc;
	/* bad input is refused (65) whether or not the database is up */
	if ((optind < argc && (rc = check_local(c, argv + optind, &o, hash)) != 0) ||
	    (rc = cli_connect(c, &db)) != 0) {
		sodium_memzero(hash, sizeof hash);
		conf_free(c);
		return rc;
	}
	if (optind < argc && strcmp(argv[optind], "list") != 0)
		rc = change(c, db, argv + optind, &o, hash);
	else if (users_list(db, c, &list, &n, err) != DB_OK) {
		cli_error("user: %s", err);
		rc = EX_UNAVAILABLE;
	} else {
		print_list(list, n, o.json);
		free(list);
	}
	sodium_memzero(hash, sizeof hash);
	db_free(db);
	conf_free(c);
	return rc;
}
