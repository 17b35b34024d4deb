/* timefmt.c -- every time jobq prints: one format for people, one for
 * programs.
 *
 * People read "2026-12-01 18:05:03 +01:00 (3m20s ago)": the wall time in
 * [worker] timezone, its offset from UTC (so that two hosts' output can
 * be compared, and a time in a repeated hour is not ambiguous) and, where
 * it helps, how far it is from now.  Programs (--json) read ISO 8601
 * with its offset: "2026-12-01T17:05:03.611279+00:00", always in UTC.
 *
 * The times come from the database in UTC ("2026-12-01 17:05:03.611279");
 * "now" is the database's clock too, read by the caller: the host's
 * clock is never compared with the database's. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cron.h"
#include "duration.h"
#include "isotime.h"
#include "timefmt.h"
#include "util.h"

struct timefmt {
	struct cron_zone *zone;
	int64_t now_ms; /* the database's clock, ms since 1970 UTC */
};

/* A formatter for times in zone (a tz database name, UTC or an offset)
 * relative to now_ms; NULL with err filled when zone cannot be opened. */
struct timefmt *
timefmt_new(const char *zone, int64_t now_ms, char *err)
{
	struct cron_zone *z = cron_zone_open(zone, err);
	struct timefmt *f;

	if (z == NULL)
		return NULL;
	f = xcalloc(1, sizeof *f);
	f->zone = z;
	f->now_ms = now_ms;
	return f;
}

void
timefmt_free(struct timefmt *f)
{
	if (f == NULL)
		return;
	cron_zone_free(f->zone);
	free(f);
}

/* "in 4.0s", "3m20s ago", "now": tenths of a second below ten seconds
 * (not "3s993ms"), whole seconds above. */
void
timefmt_relative(int64_t ms, char *out, size_t len)
{
	int64_t a = ms < 0 ? -ms : ms;
	char d[32];

	if (a < 10000)
		snprintf(d, sizeof d, "%lld.%llds", (long long)((a + 50) / 1000),
		    (long long)((a + 50) % 1000 / 100));
	else
		duration_format(a / 1000 * 1000, d, sizeof d);
	snprintf(out, len, ms < 0 ? "%s ago" : ms == 0 ? "now" : "in %s", d);
}

/* The instant t_ms (ms since 1970 UTC) for people (see above), with how
 * far it is from now when rel.  Returns out. */
const char *
timefmt_human_at(const struct timefmt *f, int64_t t_ms, int rel, char *out, size_t len)
{
	int64_t t = t_ms >= 0 ? t_ms / 1000 : -((-t_ms + 999) / 1000);
	char iso[64], when[32];

	cron_format(f->zone, t, iso, sizeof iso); /* 2026-12-01T18:05:03+01:00 */
	if (strlen(iso) < 20) {
		snprintf(out, len, "%s", iso);
		return out;
	}
	iso[10] = ' ';
	if (rel)
		timefmt_relative(t_ms - f->now_ms, when, sizeof when);
	snprintf(out, len, "%.19s %s%s%s%s", iso, iso + 19, rel ? " (" : "", rel ? when : "", rel ? ")" : "");
	return out;
}

/* The UTC time utc as the database prints it ("2026-12-01
 * 17:05:03.611279"), as timefmt_human_at does; "-" for NULL or a time
 * that does not parse (a zero date another program stored). */
const char *
timefmt_human(const struct timefmt *f, const char *utc, int rel, char *out, size_t len)
{
	char err[ERRSZ];
	int64_t t;
	int usec;

	if (utc == NULL || isotime_parse(utc, &t, &usec, err) != 0) {
		snprintf(out, len, "-");
		return out;
	}
	return timefmt_human_at(f, t * 1000 + usec / 1000, rel, out, len);
}

/* The UTC time utc as ISO 8601 with its offset, for --json; NULL for
 * NULL, and the text as it is when it does not parse.  Returns a string
 * to free. */
char *
timefmt_json(const char *utc)
{
	char err[ERRSZ];
	struct tm tm;
	int64_t t;
	time_t tt;
	int usec;

	if (utc == NULL)
		return NULL;
	if (isotime_parse(utc, &t, &usec, err) != 0)
		return xstrdup(utc);
	tt = (time_t)t;
	gmtime_r(&tt, &tm);
	return xasprintf("%04d-%02d-%02dT%02d:%02d:%02d.%06d+00:00", tm.tm_year + 1900, tm.tm_mon + 1,
	    tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, usec);
}
