/* misc.c -- unit tests of cron.c (five-field expressions) and isotime.c
 * (ISO 8601 times from the command line to UTC). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cron.h"
#include "isotime.h"
#include "util.h"

#include "../tap.h"

enum { SUN, MON, TUE, WED, THU, FRI, SAT };

static void
cron_ok(const char *expr)
{
	char err[ERRSZ] = "";
	struct cron *c = cron_parse(expr, err);

	ok(c != NULL, "cron_parse('%s')", expr);
	if (c == NULL)
		printf("#   error: %s\n", err);
	cron_free(c);
}

static void
cron_bad(const char *expr, const char *what)
{
	char err[ERRSZ] = "";
	struct cron *c = cron_parse(expr, err);

	ok(c == NULL, "cron_parse('%s') fails", expr);
	ok(strstr(err, what) != NULL, "cron_parse('%s') says '%s'", expr, what);
	if (strstr(err, what) == NULL)
		printf("#   error: %s\n", err);
	cron_free(c);
}

static void
test_cron_parse(void)
{
	cron_ok("* * * * *");
	cron_ok("*/15 0-6 1,15 jan-mar mon-fri");
	cron_ok("@daily");
	cron_ok("@hourly");
	cron_ok("@weekly");
	cron_ok("@monthly");
	cron_ok("@yearly");
	cron_ok("@annually");
	cron_ok("@midnight");
	cron_ok("5/10 * * * 7");
	cron_ok("0 0 31 12 0");
	cron_ok("59 23 * * sun,SAT");
	cron_ok("  0\t12   *  *  *  ");
	cron_ok("0-59/20,7 */6 1-31/2 JAN,Jul,dec 1-5");
	cron_ok("  @daily");
	cron_bad("* * * *", "4 fields where 5 are needed");
	cron_bad("", "0 fields where 5 are needed");
	cron_bad("* * * * * *", "more than 5");
	cron_bad("60 * * * *", "minute");
	cron_bad("* 24 * * *", "hour");
	cron_bad("* * 0 * *", "day of month");
	cron_bad("* * 32 * *", "day of month");
	cron_bad("* * * 0 *", "month");
	cron_bad("* * * 13 *", "month");
	cron_bad("* * * * 8", "day of week");
	cron_bad("a * * * *", "minute");
	cron_bad("1-0 * * * *", "minute");
	cron_bad("*/0 * * * *", "minute");
	cron_bad("*/ * * * *", "minute");
	cron_bad("1- * * * *", "minute");
	cron_bad("jan * * * *", "minute");
	cron_bad("* * * january *", "month");
	cron_bad("* * * * mon-", "day of week");
	cron_bad("-5 * * * *", "minute");
	cron_bad("@never", "@never");
	cron_bad("@daily 5", "2 fields where 5 are needed");
}

/* Parses expr (must succeed) for the matching checks below. */
static struct cron *
must_parse(const char *expr)
{
	char err[ERRSZ];
	struct cron *c = cron_parse(expr, err);

	if (c == NULL)
		fatal("cron_parse('%s'): %s", expr, err);
	return c;
}

static void
test_cron_matches(void)
{
	struct cron *c;

	c = must_parse("* * * * *");
	ok(cron_matches(c, 0, 0, 1, 1, SUN) && cron_matches(c, 59, 23, 31, 12, SAT),
	    "* * * * * matches anything");
	cron_free(c);

	c = must_parse("*/15 0-6 1,15 jan-mar mon-fri");
	/* Both day fields restricted: the 1st/15th OR a weekday. */
	ok(cron_matches(c, 0, 0, 1, 1, SUN), "1st of January, a Sunday: day of month matches");
	ok(cron_matches(c, 45, 6, 7, 3, WED), "7 March, a Wednesday: day of week matches");
	ok(!cron_matches(c, 30, 3, 7, 2, SAT), "7 February, a Saturday: neither day field matches");
	ok(cron_matches(c, 30, 3, 15, 2, SAT), "15 February, a Saturday: day of month matches");
	ok(!cron_matches(c, 10, 3, 1, 1, MON), "minute 10 is not */15");
	ok(!cron_matches(c, 0, 7, 1, 1, MON), "hour 7 is outside 0-6");
	ok(!cron_matches(c, 0, 0, 1, 4, MON), "April is outside jan-mar");
	cron_free(c);

	c = must_parse("@daily");
	ok(cron_matches(c, 0, 0, 17, 6, THU) && !cron_matches(c, 1, 0, 17, 6, THU) &&
	        !cron_matches(c, 0, 12, 17, 6, THU),
	    "@daily is 0 0 * * *");
	cron_free(c);

	c = must_parse("@weekly");
	ok(cron_matches(c, 0, 0, 5, 5, SUN) && !cron_matches(c, 0, 0, 6, 5, MON),
	    "@weekly is Sunday midnight");
	cron_free(c);

	c = must_parse("5/10 * * * 7");
	ok(cron_matches(c, 5, 3, 10, 5, SUN) && cron_matches(c, 55, 3, 10, 5, SUN),
	    "5/10 means 5-59/10; 7 is Sunday");
	ok(!cron_matches(c, 0, 3, 10, 5, SUN) && !cron_matches(c, 10, 3, 10, 5, SUN), "5/10 skips 0 and 10");
	ok(!cron_matches(c, 5, 3, 11, 5, MON), "7 is not Monday");
	cron_free(c);

	c = must_parse("0 12 * * 0,7");
	ok(cron_matches(c, 0, 12, 3, 3, SUN) && !cron_matches(c, 0, 12, 9, 3, SAT),
	    "0 and 7 both mean Sunday");
	cron_free(c);

	/* Only one day field restricted: that one decides (AND with *). */
	c = must_parse("0 0 13 * *");
	ok(cron_matches(c, 0, 0, 13, 8, TUE) && !cron_matches(c, 0, 0, 14, 8, FRI),
	    "day of month alone: only the 13th");
	cron_free(c);
	c = must_parse("0 0 * * fri");
	ok(cron_matches(c, 0, 0, 14, 8, FRI) && !cron_matches(c, 0, 0, 13, 8, THU),
	    "day of week alone: only Fridays");
	cron_free(c);
	c = must_parse("0 0 13 * fri");
	ok(cron_matches(c, 0, 0, 13, 8, THU) && cron_matches(c, 0, 0, 20, 8, FRI) &&
	        !cron_matches(c, 0, 0, 14, 8, SAT),
	    "13th or Friday: either matches");
	cron_free(c);
	c = must_parse("0 0 */2 * mon");
	ok(cron_matches(c, 0, 0, 3, 1, MON) && !cron_matches(c, 0, 0, 3, 1, TUE) &&
	        !cron_matches(c, 0, 0, 4, 1, MON),
	    "a day of month starting with * counts as unrestricted (Vixie): odd days AND Mondays");
	cron_free(c);

	c = must_parse("0-59/20,7 */6 1-31/2 JAN,Jul,dec 1-5");
	ok(cron_matches(c, 40, 18, 31, 12, MON) && cron_matches(c, 7, 0, 2, 7, WED) &&
	        !cron_matches(c, 41, 18, 31, 12, MON) && !cron_matches(c, 0, 18, 31, 6, MON),
	    "ranges with steps, lists and mixed-case names");
	cron_free(c);
}

static void
iso_ok(const char *in, const char *want)
{
	char out[64], err[ERRSZ] = "";
	int rc;

	memset(out, 0, sizeof out);
	rc = isotime_to_utc(in, out, sizeof out, err);
	ok(rc == 0, "isotime_to_utc('%s')", in);
	if (rc != 0)
		printf("#   error: %s\n", err);
	is_str(out, want, in);
}

static void
iso_bad(const char *in)
{
	char out[64] = "untouched", err[ERRSZ] = "", name[96];

	snprintf(name, sizeof name, "isotime_to_utc('%s') fails", in);
	is_int(isotime_to_utc(in, out, sizeof out, err), -1, name);
	ok(strstr(err, in) != NULL && strstr(err, "bad time") != NULL, "error for '%s' quotes it", in);
}

static void
test_isotime(void)
{
	iso_ok("2026-12-01T09:30:00Z", "2026-12-01 09:30:00.000000");
	iso_ok("2026-12-01t09:30:00z", "2026-12-01 09:30:00.000000");
	iso_ok("2026-12-01T09:30:00", "2026-12-01 09:30:00.000000");
	iso_ok("2026-12-01T09:30", "2026-12-01 09:30:00.000000");
	iso_ok("2026-12-01 09:30:00", "2026-12-01 09:30:00.000000");
	iso_ok("2026-12-01", "2026-12-01 00:00:00.000000");
	iso_ok("2026-12-01T10:30:00+01:00", "2026-12-01 09:30:00.000000");
	iso_ok("2026-12-01T00:30:00+01:00", "2026-11-30 23:30:00.000000");
	iso_ok("2027-01-01T00:15:00+0100", "2026-12-31 23:15:00.000000");
	iso_ok("2026-12-31T20:00:00-0530", "2027-01-01 01:30:00.000000");
	iso_ok("2026-03-01T23:59:59-05:30", "2026-03-02 05:29:59.000000");
	iso_ok("2028-03-01T00:30:00+01:00", "2028-02-29 23:30:00.000000");
	iso_ok("2026-12-01T09:30:00+01", "2026-12-01 08:30:00.000000");
	iso_ok("2026-12-01 10:30+01:00", "2026-12-01 09:30:00.000000");
	iso_ok("2026-12-01T09:30:00.5Z", "2026-12-01 09:30:00.500000");
	iso_ok("2026-12-01T09:30:00.123456Z", "2026-12-01 09:30:00.123456");
	iso_ok("2026-12-01T09:30:00.1234567Z", "2026-12-01 09:30:00.123456");
	iso_ok("2026-12-01T09:30:00,25+02:00", "2026-12-01 07:30:00.250000");
	iso_ok("2028-02-29", "2028-02-29 00:00:00.000000");
	iso_bad("2026-02-30");
	iso_bad("2026-02-29");
	iso_bad("2026-04-31");
	iso_bad("2026-13-01");
	iso_bad("2026-00-10");
	iso_bad("2026-12-00");
	iso_bad("2026-12-32");
	iso_bad("tomorrow");
	iso_bad("");
	iso_bad("2026-12-01T25:00");
	iso_bad("2026-12-01T24:00");
	iso_bad("2026-12-01T09:60");
	iso_bad("2026-12-01T09");
	iso_bad("2026-12-01T");
	iso_bad("2026-12-1");
	iso_bad("26-12-01");
	iso_bad("2026/12/01");
	iso_bad("2026-12-01T09:30:00+25:00");
	iso_bad("2026-12-01T09:30:00+01:60");
	iso_bad("2026-12-01T09:30:00+1");
	iso_bad("2026-12-01T09:30:00 Z");
	iso_bad("2026-12-01T09:30:00Zjunk");
	iso_bad("2026-12-01T09:30:00+01:00:00");
}

int
main(void)
{
	test_cron_parse();
	test_cron_matches();
	test_isotime();
	return done();
}
