/* errtext.c -- unit tests of errtext_summary(): the one line that names
 * a handler's error, and of timefmt's two formats. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "errtext.h"
#include "util.h"
#include "timefmt.h"

#include "../tap.h"

static void
sum(const char *in, const char *want, const char *name)
{
	char *got = errtext_summary(in);

	is_str(got, want, name);
	free(got);
}

/* The length of the summary of one 2000-byte line. */
static size_t
long_line_summary(void)
{
	char *line = malloc(2001), *got;
	size_t n;

	memset(line, 'x', 2000);
	line[2000] = '\0';
	got = errtext_summary(line);
	n = strlen(got);
	free(got);
	free(line);
	return n;
}

static void
times(void)
{
	char err[ERRSZ], out[TIMEFMT_HUMAN_MAX], *j;
	/* now: 2026-12-01 17:08:23 UTC */
	struct timefmt *f = timefmt_new("Asia/Kolkata", 1796144903000LL, err);

	ok(f != NULL, "timefmt_new opens a named zone");
	if (f == NULL)
		return;
	is_str(timefmt_human(f, "2026-12-01 17:05:03.611279", 1, out, sizeof out),
	    "2026-12-01 22:35:03 +05:30 (3m19s ago)", "people: wall time, offset, how long ago");
	is_str(timefmt_human(f, "2026-12-01 17:05:03", 0, out, sizeof out), "2026-12-01 22:35:03 +05:30",
	    "people: without the relative part in a list");
	is_str(timefmt_human(f, NULL, 1, out, sizeof out), "-", "people: no time is '-'");
	is_str(
	    timefmt_human(f, "0000-00-00 00:00:00", 1, out, sizeof out), "-", "people: a zero date is '-'");
	timefmt_free(f);
	j = timefmt_json("2026-12-01 17:05:03.611279");
	is_str(j, "2026-12-01T17:05:03.611279+00:00", "--json: ISO 8601 with its offset, UTC");
	free(j);
}

int
main(void)
{
	sum("Traceback (most recent call last):\n  File \"x.py\", line 3, in <module>\n    f()\n"
	    "ValueError: bad amount 42\n",
	    "ValueError: bad amount 42", "Python: the traceback's last line");
	sum("starting\nTraceback (most recent call last):\n  File \"x.py\", line 1\nKeyError: 'to'\n\n  \n",
	    "KeyError: 'to'", "Python: after a log line, before trailing blank lines");
	sum("Traceback (most recent call last):\n  File \"a\"\nOSError: x\n\nDuring handling of the above "
	    "exception, another exception occurred:\n\nTraceback (most recent call last):\n  File \"b\"\n"
	    "RuntimeError: y\n",
	    "RuntimeError: y", "Python: a chained traceback names the last error");
	sum("[exit 1] Traceback (most recent call last):\n  File \"x\"\nValueError: v\n", "ValueError: v",
	    "Python: also after the worker's [exit N] tag of a retry's last_error");
	sum("PHP Warning:  Undefined variable $y in /t.php on line 2\nPHP Fatal error:  Uncaught "
	    "RuntimeException: boom in /t.php:3\nStack trace:\n#0 {main}\n",
	    "PHP Fatal error:  Uncaught RuntimeException: boom in /t.php:3",
	    "PHP: the fatal line, not the warning");
	sum("PHP Deprecated:  x\nPHP Warning:  y\n", "PHP Deprecated:  x", "PHP: else its first PHP line");
	sum("\n \nsh: disk full\nmore\n", "sh: disk full", "otherwise the first non-blank line");
	sum("Warning: low disk\nError: gone\n", "Warning: low disk",
	    "no PHP prefix: a 'Warning:' is just a line");
	sum("one\r\ntwo\r\n", "one", "CRLF lines");
	sum("", "", "empty text: empty summary");
	sum(NULL, "", "NULL: empty summary");
	is_int(
	    (long long)long_line_summary(), ERRTEXT_SUMMARY_MAX, "a long line is cut to ERRTEXT_SUMMARY_MAX");
	times();
	return done();
}
