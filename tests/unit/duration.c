/* duration.c -- unit tests of duration_parse and duration_format. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "duration.h"
#include "util.h"

#include "../tap.h"

/* Parses s and checks that it gives want milliseconds. */
static void
parses(const char *s, int64_t want)
{
	char err[ERRSZ] = "";
	int64_t ms = -12345;
	int rc = duration_parse(s, &ms, err);

	ok(rc == 0, "duration_parse('%s') succeeds", s);
	if (rc != 0)
		printf("#   error: %s\n", err);
	is_int(ms, want, s);
}

/* Checks that s is refused with a message that quotes it, and that the
 * output is left alone. */
static void
refuses(const char *s)
{
	char err[ERRSZ] = "";
	int64_t ms = -12345;
	char quoted[128];

	ok(duration_parse(s, &ms, err) == -1, "duration_parse('%s') fails", s);
	snprintf(quoted, sizeof quoted, "'%s'", s);
	ok(strstr(err, quoted) != NULL && strstr(err, "bad duration") != NULL,
	    "error for '%s' says bad duration and quotes it", s);
	if (strstr(err, quoted) == NULL)
		printf("#   error: %s\n", err);
	is_int(ms, -12345, "output untouched on error");
}

/* Checks that s, whose units repeat or are out of order, is refused as
 * that: a sum of them would hide a typo ("1m1m" for "1m1s"). */
static void
misordered(const char *s)
{
	char err[ERRSZ] = "";
	int64_t ms = -12345;
	char quoted[128];

	ok(duration_parse(s, &ms, err) == -1, "duration_parse('%s') fails", s);
	snprintf(quoted, sizeof quoted, "'%s'", s);
	ok(strstr(err, quoted) != NULL && strstr(err, "each unit once, the largest first") != NULL,
	    "error for '%s' asks for each unit once, the largest first, and quotes it", s);
	if (strstr(err, "largest first") == NULL)
		printf("#   error: %s\n", err);
	is_int(ms, -12345, "output untouched on error");
}

/* Checks that s, a duration past the bound, is refused as that, quoted. */
static void
too_long(const char *s)
{
	char err[ERRSZ] = "";
	int64_t ms = -12345;
	char quoted[128];

	ok(duration_parse(s, &ms, err) == -1, "duration_parse('%s') fails", s);
	snprintf(quoted, sizeof quoted, "'%s'", s);
	ok(strstr(err, quoted) != NULL && strstr(err, "over 100 years") != NULL,
	    "error for '%s' names the bound and quotes it", s);
	is_int(ms, -12345, "output untouched on error");
}

/* Formats ms and compares with want. */
static void
formats(int64_t ms, const char *want)
{
	char out[64], name[96];

	memset(out, 'X', sizeof out);
	duration_format(ms, out, sizeof out);
	snprintf(name, sizeof name, "duration_format(%lld) = %s", (long long)ms, want);
	is_str(out, want, name);
}

static void
test_parse(void)
{
	parses("90", 90000);
	parses("90s", 90000);
	parses("250ms", 250);
	parses("5m", 300000);
	parses("2h", 7200000);
	parses("1d", 86400000);
	parses("1h30m", 5400000);
	parses("1m30s", 90000);
	parses("1d2h", 86400000 + 7200000);
	parses("1s500ms", 1500);
	parses("1h0m", 3600000);
	parses("1d2h3m4s5ms", 86400000 + 7200000 + 180000 + 4000 + 5);
	parses("0", 0);
	parses("0s", 0);
	parses("1ms", 1);
	parses("36500d", 36500LL * 86400000);
}

static void
test_refuse(void)
{
	refuses("");
	refuses("abc");
	refuses("5x");
	refuses("1.5s");
	refuses("-3");
	refuses("+3");
	refuses("5 m");
	refuses(" 5m");
	refuses("5m ");
	refuses("90s5");
	refuses("s");
	refuses("5M");
	refuses("5mss");
	too_long("999999999999d");
	too_long("99999999999999999999999");
	too_long("36501d");
	too_long("36500d1ms");
	refuses("99999999999999999999999x");
	misordered("1m1m");
	misordered("1h2h");
	misordered("30m1h");
	misordered("1s1m");
	misordered("500ms1s");
	misordered("1d2h3m3m");
	misordered("999999999999d1d");
	refuses("1m1m5");
}

static void
test_null(void)
{
	char err[ERRSZ] = "";
	int64_t ms = 7;

	ok(duration_parse(NULL, &ms, err) == -1 && ms == 7, "duration_parse(NULL) fails");
}

static void
test_format(void)
{
	formats(0, "0s");
	formats(250, "250ms");
	formats(1000, "1s");
	formats(1500, "1s500ms");
	formats(90000, "1m30s");
	formats(3600000, "1h");
	formats(86400000 + 7200000, "1d2h");
	formats(86400000 + 1, "1d1ms");
}

/* Every formatted value parses back to itself. */
static void
test_round_trip(void)
{
	static const int64_t values[] = { 1, 999, 1000, 61001, 5400000, 86400000LL * 400 + 3723004 };
	size_t i;
	int all = 1;

	for (i = 0; i < ARRAY_LEN(values); i++) {
		char out[64], err[ERRSZ];
		int64_t back = -1;

		duration_format(values[i], out, sizeof out);
		if (duration_parse(out, &back, err) != 0 || back != values[i]) {
			printf("#   %lld -> '%s' -> %lld\n", (long long)values[i], out, (long long)back);
			all = 0;
		}
	}
	ok(all, "duration_format output parses back to the same value");
}

/* A short buffer is truncated, never overrun. */
static void
test_format_short_buffer(void)
{
	char out[8];

	memset(out, 'X', sizeof out);
	duration_format(86400000 + 7200000 + 180000 + 4000 + 5, out, 4);
	ok(strlen(out) < 4 && out[4] == 'X', "duration_format respects outlen (got '%s')", out);
}

int
main(void)
{
	test_parse();
	test_refuse();
	test_null();
	test_format();
	test_round_trip();
	test_format_short_buffer();
	return done();
}
