/* cmd_serve.c -- `jobq serve`: the web dashboard and its JSON API. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "serve.h"
#include "users.h"

static void
usage(void)
{
	printf("Usage: jobq serve [--listen ADDR:PORT]\n"
	       "Serve the web dashboard: queue counters, jobs, the dead-letter list,\n"
	       "workers and an enqueue form, for the users of the [user NAME] sections\n"
	       "(make a password hash with 'jobq passwd') and those added with 'jobq user\n"
	       "add'.  Stops on SIGTERM or SIGINT.\n\n"
	       "  -l, --listen ADDR:PORT  where to listen (default: [serve] listen, or\n"
	       "                          127.0.0.1:8377); port 0 picks a free port\n\n"
	       "Without tls_cert/tls_key it speaks plain HTTP: keep it on localhost and\n"
	       "put a reverse proxy with TLS (nginx) in front of it.\n");
}

/* 0 when someone could log in: a [user NAME] section, or a user added
 * with `jobq user add`; else the exit status, after saying so. */
static int
has_users(const struct conf *c, struct db *db)
{
	struct user_rec *list;
	char err[ERRSZ];
	size_t n;

	if (c->serve.nusers > 0)
		return 0;
	if (users_list(db, c, &list, &n, err) != DB_OK) {
		cli_error("serve: %s", err);
		return EX_UNAVAILABLE;
	}
	free(list);
	if (n > 0)
		return 0;
	cli_error("serve: nobody could log in: %s has no [user NAME] section and the database no user "
	          "(add one with 'jobq user add NAME --role admin')",
	    c->path);
	return EX_CONFIG;
}

int
cmd_serve(int argc, char **argv)
{
	static const struct option longopts[] = { CLI_COMMON_LONGOPTS,
		{ "listen", required_argument, NULL, 'l' }, { NULL, 0, NULL, 0 } };
	const char *listen_at = NULL;
	struct conf *c;
	struct db *db;
	char err[ERRSZ] = "";
	int64_t port;
	int opt, rc;

	while ((opt = getopt_long(argc, argv, CLI_COMMON_SHORTOPTS "l:", longopts, NULL)) != -1) {
		if (opt == 'l') {
			/* checked as [serve] listen is, before the database is read */
			if (strrchr(optarg, ':') == NULL ||
			    str_to_int64(strrchr(optarg, ':') + 1, 0, 65535, &port) < 0)
				return cli_usage_error(
				    "serve", "--listen: expected ADDR:PORT (port 0-65535), not '%s'", optarg);
			listen_at = optarg;
			continue;
		}
		if ((rc = cli_common_opt(opt, "serve", usage)) != -2)
			return rc < 0 ? EX_USAGE : rc;
	}
	if (optind < argc)
		return cli_usage_error("serve", "unexpected argument '%s'", argv[optind]);
	/* cli_open checks the schema is current (the session tables). */
	if ((rc = cli_open(0, &c, &db)) != 0)
		return rc;
	rc = has_users(c, db);
	db_free(db);
	if (rc != 0) {
		conf_free(c);
		return rc;
	}
	log_set_format(c->worker.log_format);
	if (serve_run(c, listen_at != NULL ? listen_at : c->serve.listen, err) < 0) {
		cli_error("serve: %s", err);
		rc = strstr(err, "tls_") != NULL || strstr(err, "listen:") != NULL ? EX_CONFIG : EXIT_FAIL;
	}
	conf_free(c);
	return rc;
}
