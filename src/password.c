/* password.c -- dashboard passwords: read without echo from the terminal
 * (twice) or as the first line of stdin, and hashed with argon2id at the
 * interactive limits, the hash `jobq serve` verifies logins against. */
#include "config.h"

#include <sodium.h>
#include <stdio.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "cli.h"
#include "password.h"

/* Reads one line (without its newline) into out; -1 at EOF, -2 when
 * the line is too long. */
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
		return -2; /* longer than the buffer */
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

/* The password, from the terminal (typed twice) or from stdin (with
 * from_stdin, or when stdin is no terminal).  Returns 0, or the exit
 * status after one line on stderr naming cmd. */
int
password_read(const char *cmd, int from_stdin, char *pw, size_t len)
{
	char again[PASSWORD_MAX + 2];
	FILE *tty = NULL;
	int rc = 0;

	if (!from_stdin && isatty(STDIN_FILENO))
		tty = fopen("/dev/tty", "r+");
	if (tty == NULL) {
		if ((rc = read_line(stdin, pw, len)) < 0) {
			cli_error("%s: %s on standard input (one line, at most %d bytes)", cmd,
			    rc == -2 ? "the password is too long" : "no password", PASSWORD_MAX);
			return EX_DATAERR;
		}
		return 0;
	}
	if (read_hidden(tty, "Password: ", pw, len) < 0 ||
	    read_hidden(tty, "Again: ", again, sizeof again) < 0) {
		cli_error("%s: cannot read the password from the terminal", cmd);
		rc = EX_DATAERR;
	} else if (strcmp(pw, again) != 0) {
		cli_error("%s: the two passwords differ", cmd);
		rc = EX_DATAERR;
	}
	sodium_memzero(again, sizeof again);
	fclose(tty);
	return rc;
}

/* Hashes pw into hash (PASSWORD_HASH_MAX bytes).  0, or -1 with err
 * saying why: too short, too long, or no memory for the hashing.
 * Takes about a tenth of a second and 64 MiB, on purpose. */
int
password_hash(const char *pw, char *hash, char *err)
{
	if (strlen(pw) < PASSWORD_MIN) {
		errf(err, "the password is too short (at least %d characters)", PASSWORD_MIN);
		return -1;
	}
	if (strlen(pw) > PASSWORD_MAX) {
		errf(err, "the password is too long (at most %d bytes)", PASSWORD_MAX);
		return -1;
	}
	if (sodium_init() < 0 || crypto_pwhash_str(hash, pw, strlen(pw), crypto_pwhash_OPSLIMIT_INTERACTIVE,
	                             crypto_pwhash_MEMLIMIT_INTERACTIVE) != 0) {
		errf(err, "out of memory while hashing the password");
		return -1;
	}
	return 0;
}
