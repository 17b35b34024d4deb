/* cron.c -- unit tests of the cron module: parsing and its errors,
 * matching, next fire times across daylight-saving changes in three
 * zones (two hemispheres), "never", and the English descriptions. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cron.h"
#include "util.h"

#include "../tap.h"

/* The next n fire times of expr after from, in zone, joined by blanks. */
static char *
fires(const char *expr, const char *zone, const char *from, int n)
{
	char err[ERRSZ], when[64];
	struct cron_zone *z = cron_zone_open(zone, err);
	struct cron *c = cron_parse(expr, err);
	struct buf b;
	int64_t t;
	int i;

	if (z == NULL || c == NULL || cron_parse_time(z, from, &t, err) < 0)
		fatal("fires(%s, %s, %s): %s", expr, zone, from, err);
	buf_init(&b);
	for (i = 0; i < n; i++) {
		if (cron_next(c, z, t, &t) != CRON_FOUND) {
			buf_adds(&b, i ? " never" : "never");
			break;
		}
		cron_format(z, t, when, sizeof when);
		buf_printf(&b, "%s%s", i ? " " : "", when);
	}
	cron_free(c);
	cron_zone_free(z);
	return buf_steal(&b);
}

static void
fires_are(const char *expr, const char *zone, const char *from, int n, const char *want, const char *name)
{
	char *got = fires(expr, zone, from, n);

	is_str(got, want, name);
	free(got);
}

static void
refused(const char *expr, const char *want)
{
	char err[ERRSZ] = "";
	struct cron *c = cron_parse(expr, err);

	ok(c == NULL, "'%s' is refused", expr);
	is_str(err, want, expr);
	cron_free(c);
}

static void
describes(const char *expr, const char *want)
{
	char err[ERRSZ];
	struct cron *c = cron_parse(expr, err);
	char *got;

	if (c == NULL)
		fatal("describes(%s): %s", expr, err);
	got = cron_describe(c);
	is_str(got, want, expr);
	free(got);
	cron_free(c);
}

static int
matches(const char *expr, int min, int hour, int mday, int mon, int wday)
{
	char err[ERRSZ];
	struct cron *c = cron_parse(expr, err);
	int m;

	if (c == NULL)
		fatal("matches(%s): %s", expr, err);
	m = cron_matches(c, min, hour, mday, mon, wday);
	cron_free(c);
	return m;
}

static void
test_matching(void)
{
	ok(matches("10-30/10 * * * *", 20, 0, 1, 1, 0), "a step on a range takes its values");
	ok(!matches("10-30/10 * * * *", 40, 0, 1, 1, 0), "a step on a range stops at its end");
	ok(!matches("10-30/10 * * * *", 15, 0, 1, 1, 0), "a step on a range skips between");
	ok(matches("5/15 * * * *", 50, 0, 1, 1, 0), "N/S runs from N to the end of the field");
	ok(matches("48-48/3 * * * *", 48, 0, 1, 1, 0), "N-N/S takes N (Vixie cron)");
	ok(!matches("48-48/3 * * * *", 51, 0, 1, 1, 0), "N-N/S is N alone, not N-max/S (Vixie cron)");
	ok(!matches("0 0 * * 3-3/2", 0, 0, 4, 1, 0), "3-3/2 in day of week is not Sunday");
	ok(matches("0 0 * * */7", 0, 0, 4, 1, 0), "*/7 in day of week (0-7) is Sunday");
	ok(!matches("0 0 * * */7", 0, 0, 5, 1, 1), "*/7 in day of week is not Monday");
	ok(matches("0 0 * JAN,Mar * ", 0, 0, 5, 3, 3), "month names, any case");
	ok(!matches("0 0 * jan,mar *", 0, 0, 5, 2, 3), "February is not in jan,mar");
	ok(matches("0 0 * * mon-fri", 0, 0, 5, 3, 5), "weekday range by name takes Friday");
	ok(!matches("0 0 * * mon-fri", 0, 0, 5, 3, 6), "weekday range by name skips Saturday");
	ok(matches("0 0 * * 7", 0, 0, 5, 3, 0), "day of week 7 is Sunday");
	ok(matches("0 0 * * 5-7", 0, 0, 5, 3, 0), "a range ending in 7 takes Sunday");
	ok(matches("0 0 1 * 1", 0, 0, 1, 3, 4), "both day fields restricted: the 1st on a Thursday matches");
	ok(matches("0 0 1 * 1", 0, 0, 9, 3, 1), "both day fields restricted: a Monday the 9th matches");
	ok(!matches("0 0 1 * 1", 0, 0, 9, 3, 2), "both day fields restricted: a Tuesday the 9th does not");
	ok(!matches("0 0 */2 * 1", 0, 0, 9, 3, 2),
	    "day of month starts with '*': both must match (odd day, Tuesday)");
	ok(matches("0 0 */2 * 1", 0, 0, 9, 3, 1), "day of month starts with '*': odd day and Monday matches");
	ok(!matches("0 0 1 * *", 0, 0, 2, 3, 1), "day of week '*': only the 1st");
	ok(matches("@hourly", 0, 7, 2, 3, 1), "@hourly at minute 0");
	ok(!matches("@hourly", 1, 7, 2, 3, 1), "@hourly not at minute 1");
}

static void
test_errors(void)
{
	refused("\xc3\xa9 * * * *", "minute: unexpected byte 0xC3 (column 1)");
	refused("0 0 1\x7f * *", "day of month: unexpected byte 0x7F (column 6)");
	refused("30 12 32 * *", "day of month: 32 is out of range 1-31 (column 7)");
	refused("0 24 * * *", "hour: 24 is out of range 0-23 (column 3)");
	refused("60 * * * *", "minute: 60 is out of range 0-59 (column 1)");
	refused("0 0 0 * *", "day of month: 0 is out of range 1-31 (column 5)");
	refused("0 0 * 13 *", "month: 13 is out of range 1-12 (column 7)");
	refused("0 0 * * 8", "day of week: 8 is out of range 0-7 (column 9)");
	refused("*/0 * * * *", "minute: step 0 (a step must be at least 1) (column 3)");
	refused("*/60 * * * *", "minute: step 60 is wider than the field (0-59) (column 3)");
	refused("0 */24 * * *", "hour: step 24 is wider than the field (0-23) (column 5)");
	refused("0 0 * */12 *", "month: step 12 is wider than the field (1-12) (column 9)");
	refused("0 0 * * */8", "day of week: step 8 is wider than the field (0-7) (column 11)");
	refused("0 17-9 * * *", "hour: range 17-9 is reversed (column 3)");
	refused("0 0 * * fri-mon", "day of week: range 5-1 is reversed (column 9)");
	refused("0 0 * foo *", "month: unknown name 'foo' (column 7)");
	refused("0 0 * * monday", "day of week: unknown name 'monday' (column 9)");
	refused("0 noon * * *", "hour: unknown name 'noon'; this field takes numbers only (column 3)");
	refused("0 0 * *", "4 fields where 5 are needed: minute hour day-of-month month day-of-week");
	refused("", "0 fields where 5 are needed: minute hour day-of-month month day-of-week");
	refused("0 0 * * * /bin/true",
	    "more than 5 fields (column 11); a cron expression is: minute hour day-of-month month "
	    "day-of-week");
	refused("1,,2 * * * *", "minute: empty list item (column 3)");
	refused("1- * * * *", "minute: a value is missing (column 3)");
	refused("5x * * * *", "minute: unexpected 'x' (column 2)");
	refused("*/x * * * *", "minute: a step must be a number (column 3)");
	refused(
	    "@reboot", "unknown macro '@reboot' (@hourly, @daily or @midnight, @weekly, @monthly, @yearly or @annually) (column 1)");
}

static void
test_calendar(void)
{
	fires_are("0 0 29 2 *", "UTC", "2096-03-01T00:00:00Z", 2,
	    "2104-02-29T00:00:00+00:00 2108-02-29T00:00:00+00:00",
	    "Feb 29 skips 2100, which is not a leap year");
	fires_are("0 0 31 * *", "UTC", "2026-03-31T00:00:00Z", 3,
	    "2026-05-31T00:00:00+00:00 2026-07-31T00:00:00+00:00 2026-08-31T00:00:00+00:00",
	    "day 31 skips the 30-day months");
	fires_are("0 0 30 2 *", "UTC", "2026-01-01T00:00:00Z", 1, "never", "0 0 30 2 * never fires");
	fires_are("0 0 31 4 *", "UTC", "2026-01-01T00:00:00Z", 1, "never", "0 0 31 4 * never fires");
	fires_are("0 0 30 2 1", "UTC", "2026-02-01T00:00:00Z", 1, "2026-02-02T00:00:00+00:00",
	    "Feb 30 or Monday fires on Mondays in February");
	fires_are("*/20 * * * *", "UTC", "2026-01-01T00:20:00Z", 2,
	    "2026-01-01T00:40:00+00:00 2026-01-01T01:00:00+00:00",
	    "the next fire is strictly after the instant");
	fires_are("59 23 31 12 *", "UTC", "2026-12-31T23:59:30Z", 1, "2027-12-31T23:59:00+00:00",
	    "a year's last minute, from inside it");
}

static void
test_dst(void)
{
	/* Europe/Berlin: 2025-03-30 02:00 CET -> 03:00 CEST; 2025-10-26 03:00 CEST -> 02:00 CET */
	fires_are("30 2 * * *", "Europe/Berlin", "2025-03-29T12:00:00Z", 3,
	    "2025-03-30T03:00:00+02:00 2025-03-31T02:30:00+02:00 2025-04-01T02:30:00+02:00",
	    "Berlin spring: 02:30 runs once, at the end of the gap");
	fires_are("0 3 * * *", "Europe/Berlin", "2025-03-29T12:00:00Z", 1, "2025-03-30T03:00:00+02:00",
	    "Berlin spring: 03:00 is unaffected");
	fires_are("30 2 * * *", "Europe/Berlin", "2025-10-25T12:00:00Z", 2,
	    "2025-10-26T02:30:00+02:00 2025-10-27T02:30:00+01:00",
	    "Berlin autumn: 02:30 runs once, the first time");
	fires_are("0 * * * *", "Europe/Berlin", "2025-03-30T00:30:00+01:00", 3,
	    "2025-03-30T01:00:00+01:00 2025-03-30T03:00:00+02:00 2025-03-30T04:00:00+02:00",
	    "Berlin spring: hourly keeps 60 real minutes apart");
	fires_are("0 * * * *", "Europe/Berlin", "2025-10-26T01:30:00+02:00", 4,
	    "2025-10-26T02:00:00+02:00 2025-10-26T02:00:00+01:00 2025-10-26T03:00:00+01:00 "
	    "2025-10-26T04:00:00+01:00",
	    "Berlin autumn: hourly runs in both 02:00 hours");
	fires_are("*/15 2 * * *", "Europe/Berlin", "2025-03-29T02:50:00+01:00", 2,
	    "2025-03-31T02:00:00+02:00 2025-03-31T02:15:00+02:00",
	    "Berlin spring: */15 2 * * * has no 02:xx on the day the hour is skipped");
	fires_are("*/30 2 * * *", "Europe/Berlin", "2025-10-26T01:00:00+02:00", 4,
	    "2025-10-26T02:00:00+02:00 2025-10-26T02:30:00+02:00 2025-10-26T02:00:00+01:00 "
	    "2025-10-26T02:30:00+01:00",
	    "Berlin autumn: a wildcard job runs in the repeated hour twice");
	/* America/New_York: 2025-03-09 02:00 EST -> 03:00 EDT; 2025-11-02 02:00 EDT -> 01:00 EST */
	fires_are("15 2 * * *", "America/New_York", "2025-03-08T12:00:00Z", 2,
	    "2025-03-09T03:00:00-04:00 2025-03-10T02:15:00-04:00", "New York spring: 02:15 runs at 03:00");
	fires_are("30 1 * * *", "America/New_York", "2025-11-01T12:00:00Z", 2,
	    "2025-11-02T01:30:00-04:00 2025-11-03T01:30:00-05:00",
	    "New York autumn: 01:30 runs once, in EDT");
	fires_are("0 * * * *", "America/New_York", "2025-11-02T00:30:00-04:00", 3,
	    "2025-11-02T01:00:00-04:00 2025-11-02T01:00:00-05:00 2025-11-02T02:00:00-05:00",
	    "New York autumn: hourly runs in both 01:00 hours");
	fires_are("0 * * * *", "America/New_York", "2025-03-09T01:30:00-05:00", 2,
	    "2025-03-09T03:00:00-04:00 2025-03-09T04:00:00-04:00",
	    "New York spring: hourly skips the missing 02:00");
	/* Australia/Sydney: 2025-04-06 03:00 AEDT -> 02:00 AEST; 2025-10-05 02:00 AEST -> 03:00 AEDT */
	fires_are("30 2 * * *", "Australia/Sydney", "2025-10-04T12:00:00+10:00", 2,
	    "2025-10-05T03:00:00+11:00 2025-10-06T02:30:00+11:00",
	    "Sydney spring (October): 02:30 runs at 03:00");
	fires_are("30 2 * * *", "Australia/Sydney", "2025-04-05T12:00:00+11:00", 2,
	    "2025-04-06T02:30:00+11:00 2025-04-07T02:30:00+10:00",
	    "Sydney autumn (April): 02:30 runs once, in AEDT");
	fires_are("0 * * * *", "Australia/Sydney", "2025-04-06T01:30:00+11:00", 3,
	    "2025-04-06T02:00:00+11:00 2025-04-06T02:00:00+10:00 2025-04-06T03:00:00+10:00",
	    "Sydney autumn: hourly runs in both 02:00 hours");
	fires_are("0 * * * *", "Australia/Sydney", "2025-10-05T01:30:00+10:00", 2,
	    "2025-10-05T03:00:00+11:00 2025-10-05T04:00:00+11:00",
	    "Sydney spring: hourly skips the missing 02:00");
	fires_are("0 9 * * *", "+05:30", "2025-03-30T00:00:00Z", 2,
	    "2025-03-30T09:00:00+05:30 2025-03-31T09:00:00+05:30",
	    "a fixed offset (as [worker] timezone allows) is a zone");
	fires_are("0 9 * * *", "-03:00", "2025-03-30T12:30:00Z", 1, "2025-03-31T09:00:00-03:00",
	    "a negative fixed offset");
	fires_are("30 2 * * *", "Europe/Berlin", "2025-03-30 02:30", 1, "2025-03-31T02:30:00+02:00",
	    "a local --from inside the gap means the end of the gap");
}

static void
test_descriptions(void)
{
	describes("*/15 * * * *", "every 15 minutes");
	describes("30 9-17/2 * * 1-5", "at 09:30, 11:30, 13:30, 15:30 and 17:30, Monday through Friday");
	describes("0 3 * * *", "at 03:00");
	describes("0 0 1 */3 *", "at 00:00 on day 1 of every 3rd month");
	describes("* * * * *", "every minute");
	describes("0 * * * *", "every hour");
	describes("5 * * * *", "at minute 5 of every hour");
	describes("0,30 * * * *", "every 30 minutes");
	describes("0,45 * * * *", "at minutes 0 and 45 of every hour");
	describes("0 0 * * 0", "at 00:00, on Sunday");
	describes("@weekly", "at 00:00, on Sunday");
	describes("0 8 * * 1,3,5", "at 08:00, on Monday, Wednesday and Friday");
	describes("0 0 1 1 *", "at 00:00 on day 1 of January");
	describes("15 4 1,15 * *", "at 04:15 on days 1 and 15 of the month");
	describes("0 12 * 6-8 *", "at 12:00 in June through August");
	describes("*/10 9-17 * * *", "every 10 minutes during hours 9 through 17");
	describes("5 */2 * * *", "at minute 5 of every 2nd hour");
	describes("0 0 1 * 1", "at 00:00 on day 1 of the month and every Monday");
	describes("0 0 1 6 1", "at 00:00 on day 1 of June and every Monday in June");
	describes("0 0 */2 * 1", "at 00:00 on every 2nd day of the month, if it is a Monday");
	describes("0 0 */2 * 1,5", "at 00:00 on every 2nd day of the month, if it is a Monday or Friday");
	describes("0 0 1,15 * 1,5", "at 00:00 on days 1 and 15 of the month and every Monday and Friday");
	describes("0 0 */2 * 1-5", "at 00:00 on every 2nd day of the month, if it is Monday through Friday");
	describes("0 0 1-31 * 1", "at 00:00");
	describes("0 0 30 2 *", "never (no such day)");
	describes("0 22 * * 1-5", "at 22:00, Monday through Friday");
	describes("0 9 * * sat,sun", "at 09:00, on Sunday and Saturday");
}

static void
test_wildcard(void)
{
	char err[ERRSZ];
	struct cron *a = cron_parse("*/5 3 * * *", err), *b = cron_parse("5 3 * * *", err);

	is_int(cron_is_wildcard(a), 1, "a '*' minute makes a wildcard job");
	is_int(cron_is_wildcard(b), 0, "fixed minute and hour make a fixed-time job");
	cron_free(a);
	cron_free(b);
}

int
main(void)
{
	test_matching();
	test_errors();
	test_calendar();
	test_dst();
	test_descriptions();
	test_wildcard();
	return done();
}
