/* cmd_passwd.c -- `jobq passwd`: hash a dashboard password (argon2id) and
 * print the line to paste into a [user NAME] section. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "cli.h"

#define PASSWORD_MAX 1024

static void
usage(void)
{
	printf("Usage: jobq passwd [--stdin]\n"
	       "Read a password and print its argon2id hash as the line\n"
	       "  password_hash = $argon2id$...\n"
	       "for a [user NAME] section of jobq.ini (see `jobq serve`).  On a terminal\n"
	       "the password is read twice without echo; otherwise (or with --stdin) the\n"
	       "first line of standard input is the password.\n");
}

/* Reads one line (without its newline) into out; -1 at EOF or when the
 * line is too long. */
static int
read_line(FILE *fp, char *out, size_t outlen)
{
	size_t n;

	if (fgets(out, (int)outlen, fp) == NULL)
		return -1;
	n = strlen(out);
	if (n > 0 && out[n - 1] == '\n')
		out[--n] = '\0';
	else if (!feof(fp))
		return -1; /* longer than the buffer */
	if (n > 0 && out[n - 1] == '\r')
		out[--n] = '\0';
	return 0;
}

/* Prompts on the terminal and reads a line with echo off; the terminal
 * is restored whatever happens. */
static int
read_hidden(FILE *tty, const char *prompt, char *out, size_t outlen)
{
	struct termios old, quiet;
	int rc;

	fputs(prompt, tty);
	fflush(tty);
	if (tcgetattr(fileno(tty), &old) < 0)
		return -1;
	quiet = old;
	quiet.c_lflag &= ~(tcflag_t)(ECHO | ECHONL);
	quiet.c_lflag |= ICANON;
	if (tcsetattr(fileno(tty), TCSAFLUSH, &quiet) < 0)
		return -1;
	rc = read_line(tty, out, outlen);
	tcsetattr(fileno(tty), TCSAFLUSH, &old);
	fputc('\n', tty);
	return rc;
}

/* The password from the terminal (typed twice) or from stdin. */
static int
get_password(int from_stdin, char *pw, size_t len)
{
	char again[PASSWORD_MAX + 2];
	FILE *tty = NULL;
	int rc = 0;

	if (!from_stdin && isatty(STDIN_FILENO))
		tty = fopen("/dev/tty", "r+");
	if (tty == NULL) {
		if (read_line(stdin, pw, len) < 0) {
			cli_error("passwd: no password on standard input (one line, at most %d bytes)",
			    PASSWORD_MAX);
			return EX_DATAERR;
		}
		return 0;
	}
	if (read_hidden(tty, "Password: ", pw, len) < 0 ||
	    read_hidden(tty, "Again: ", again, sizeof again) < 0) {
		cli_error("passwd: cannot read the password from the terminal");
		rc = EX_DATAERR;
	} else if (strcmp(pw, again) != 0) {
		cli_error("passwd: the two passwords differ");
		rc = EX_DATAERR;
	}
	sodium_memzero(again, sizeof again);
	fclose(tty);
	return rc;
}

int
cmd_passwd(int argc, char **argv)
{
	static const struct option longopts[] = { CLI_COMMON_LONGOPTS, { "stdin", no_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 } };
	char pw[PASSWORD_MAX + 2], hash[crypto_pwhash_STRBYTES];
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
	if (sodium_init() < 0) {
		cli_error("passwd: libsodium failed to initialise");
		return EXIT_FAIL;
	}
	if ((rc = get_password(from_stdin, pw, sizeof pw)) != 0)
		goto out;
	if (strlen(pw) < 8) {
		cli_error("passwd: the password is too short (at least 8 characters)");
		rc = EX_DATAERR;
		goto out;
	}
	if (crypto_pwhash_str(hash, pw, strlen(pw), crypto_pwhash_OPSLIMIT_INTERACTIVE,
	        crypto_pwhash_MEMLIMIT_INTERACTIVE) != 0) {
		cli_error("passwd: out of memory while hashing");
		rc = EXIT_FAIL;
		goto out;
	}
	printf("password_hash = %s\n", hash);
out:
	sodium_memzero(pw, sizeof pw);
	return rc;
}
