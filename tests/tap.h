/* tap.h -- the Test Anything Protocol for the C unit tests.
 * ok(cond, fmt, ...) prints "ok N - name" or "not ok N - name"; done()
 * prints the plan and returns the exit status. */
#ifndef JOBQ_TAP_H
#define JOBQ_TAP_H

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "testconf.h"
#include "util.h"

static int tap_n, tap_failed;

static void __attribute__((format(printf, 2, 3))) ok(int cond, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", cond ? "" : "not ", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	if (!cond)
		tap_failed++;
	fflush(stdout);
}

static void
is_str(const char *got, const char *want, const char *name)
{
	int same = (got == NULL && want == NULL) || (got && want && strcmp(got, want) == 0);

	ok(same, "%s", name);
	if (!same)
		printf("#   got:  '%s'\n#   want: '%s'\n", got ? got : "(null)", want ? want : "(null)");
}

static void
is_int(long long got, long long want, const char *name)
{
	ok(got == want, "%s", name);
	if (got != want)
		printf("#   got:  %lld\n#   want: %lld\n", got, want);
}

/* A new private folder under $TMPDIR (default /tmp), named after the
 * test; the caller frees the path. */
static __attribute__((unused)) char *
tap_tmpdir(const char *name)
{
	const char *base = getenv("TMPDIR");
	char *path = xasprintf("%s/jobq-unit-%s.XXXXXX", base && *base ? base : "/tmp", name);

	if (mkdtemp(path) == NULL)
		fatal("mkdtemp %s: %s", path, strerror(errno));
	return path;
}

/* The configuration text, loaded (see testconf.h). */
static __attribute__((unused)) struct conf *
tap_conf(const char *name, const char *text)
{
	return testconf_load(name, text);
}

static int
done(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}

#endif
