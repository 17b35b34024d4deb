/* cmd_passwd.c -- `jobq passwd`: hash a dashboard password (argon2id) and
 * print the line to paste into a [user NAME] section. */
#include "config.h"

#include <sodium.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "password.h"

static void
usage(void)
{
	printf("Usage: jobq passwd [-s, --stdin]\n"
	       "Read a password and print its argon2id hash as the line\n"
	       "  password_hash = $argon2id$...\n"
	       "for a [user NAME] section of jobq.ini (see `jobq serve`).  On a terminal\n"
	       "the password is read twice without echo; otherwise (or with --stdin) the\n"
	       "first line of standard input is the password.\n\n"
	       "  -s, --stdin   read the first line of standard input even on a terminal\n\n"
	       "Exit status: 0; 64 usage; 65 no password, one shorter than 8 characters, or\n"
	       "two typed that differ; 1 anything else.\n");
}

int
cmd_passwd(int argc, char **argv)
{
	static const struct option longopts[] = { CLI_COMMON_LONGOPTS, { "stdin", no_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 } };
	char pw[PASSWORD_MAX + 2], hash[PASSWORD_HASH_MAX], err[ERRSZ];
	int opt, rc, from_stdin = 0;

	while ((opt = getopt_long(argc, argv, CLI_COMMON_SHORTOPTS "s", longopts, NULL)) != -1) {
		if (opt == 's') {
			from_stdin = 1;
			continue;
		}
		if ((rc = cli_common_opt(opt, "passwd", usage)) != -2)
			return rc < 0 ? EX_USAGE : rc;
	}
	if (optind < argc)
		return cli_usage_error("passwd", "unexpected argument '%s'", argv[optind]);
	if ((rc = password_read("passwd", from_stdin, pw, sizeof pw)) != 0)
		goto out;
	if (password_hash(pw, hash, err) < 0) {
		cli_error("passwd: %s", err);
		rc = strstr(err, "memory") != NULL ? EXIT_FAIL : EX_DATAERR;
		goto out;
	}
	printf("password_hash = %s\n", hash);
out:
	sodium_memzero(pw, sizeof pw);
	return rc;
}
