/* cron_next.c -- when an expression fires: the search through wall
 * minutes for the next matching one, the Vixie/cronie daylight-saving
 * policy that turns a matching wall minute into fire instants (see
 * fire_instants()), and times written and read in a schedule's zone.
 * Times are seconds since the epoch (UTC); "wall" times are the local
 * clock's reading written as if it were UTC (seconds since 1970-01-01
 * 00:00 local).  Built on cron.c (matching) and cron_zone.c (zones and
 * their clock changes). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cron.h"
#include "cron_int.h"
#include "isotime.h"
#include "util.h"

/* ---- the calendar (proleptic Gregorian, days since 1970-01-01) ---- */

static int64_t
days_from_civil(int64_t y, int m, int d)
{
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static void
civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
	int64_t era, doe, yoe, doy, mp;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*d = (int)(doy - (153 * mp + 2) / 5 + 1);
	*m = (int)(mp < 10 ? mp + 3 : mp - 9);
	*y = yoe + era * 400 + (*m <= 2);
}

static int64_t
floor_div(int64_t a, int64_t b)
{
	return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

/* The Gregorian calendar repeats every 400 years: a day pattern that
 * matches nowhere in 401 years matches never. */
#define SEARCH_DAYS (401LL * 366)

/* The first matching wall minute at or after wall (seconds), looking at
 * most SEARCH_DAYS days ahead; -1 when there is none. */
static int
next_wall(const struct cron *c, int64_t wall, int64_t *out)
{
	uint64_t hours = cron_field(c, F_HOUR), mins = cron_field(c, F_MIN);
	int64_t day0 = floor_div(wall, 86400), day, y;
	int start = (int)((wall - day0 * 86400) / 60), h, mi, m, d;

	for (day = day0; day < day0 + SEARCH_DAYS; day++, start = 0) {
		int wday = (int)(((day % 7) + 11) % 7); /* 1970-01-01 was a Thursday */

		civil_from_days(day, &y, &m, &d);
		if (!cron_day_matches(c, d, m, wday))
			continue;
		for (h = start / 60; h < 24; h++) {
			if (!((hours >> h) & 1))
				continue;
			for (mi = h == start / 60 ? start % 60 : 0; mi < 60; mi++)
				if ((mins >> mi) & 1) {
					*out = day * 86400 + h * 3600 + mi * 60;
					return 0;
				}
		}
	}
	return -1;
}

/* Whether no day ever matches ("0 0 30 2 *", "0 0 31 4 *"). */
int
cron_never(const struct cron *c)
{
	int64_t ignored;

	return next_wall(c, 0, &ignored) < 0;
}

/* The instants at which the schedule fires for the matching wall minute,
 * by the Vixie/cronie daylight-saving policy:
 *
 *  - A fixed-time job (minute and hour fields both without a leading
 *    '*', e.g. "30 2 * * *") fires once per matching wall time.  If the
 *    time does not exist because the clocks went forward, it fires at
 *    the end of the gap: Europe/Berlin 2025-03-30 02:30 fires at
 *    03:00+02:00 (01:00Z).  If the time happens twice because the
 *    clocks went back, it fires at the first one only: Berlin
 *    2025-10-26 02:30 fires at 02:30+02:00 (00:30Z), not at 02:30+01:00.
 *  - A wildcard job (minute or hour starts with '*', e.g. "0 * * * *",
 *    "*\/15 2 * * *") follows the wall clock: it fires at every instant
 *    whose local time matches, so in the repeated hour it fires twice
 *    and in the skipped hour not at all.  An hourly job thus keeps firing
 *    once every 60 minutes of real time across both changes, and
 *    "*\/15 2 * * *" has no 02:xx run on the spring-forward day.
 *
 * cronie gets the same result by running the skipped minutes' fixed-time
 * jobs when it sees the clock jump forward, and by running only wildcard
 * jobs while the clock repeats after a jump back. */
static int
fire_instants(const struct cron *c, const struct cron_zone *z, int64_t wall, int64_t f[2])
{
	int64_t gap_end = 0;
	int n = cron_zone_instants(z, wall, f, &gap_end);

	if (cron_is_wildcard(c))
		return n;
	if (n == 0) {
		f[0] = gap_end;
		return 1;
	}
	return 1;
}

/* Sets *next to the first fire time strictly after the instant after
 * (both seconds since the epoch) in zone z.  Returns CRON_NEVER when the
 * expression matches no day at all.
 *
 * Wall times are visited in order from three hours before after's own
 * wall time, because the two rules above do not keep fire instants in
 * the order of wall times near a change (the repeated hour's second
 * pass comes after the first pass's later minutes); once a candidate is
 * found, wall times up to three hours later can still beat it. */
int
cron_next(const struct cron *c, const struct cron_zone *z, int64_t after, int64_t *next)
{
	struct tz_saved saved;
	int64_t wall, best = 0, best_wall = 0, f[2];
	int found = 0, i, n;

	cron_zone_enter(z, &saved);
	wall = floor_div(after + cron_zone_offset(z, after), 60) * 60 - (cron_zone_fixed(z) ? 0 : 3 * 3600);
	while (next_wall(c, wall, &wall) == 0) {
		if (found && wall > best_wall + 3 * 3600)
			break;
		n = fire_instants(c, z, wall, f);
		for (i = 0; i < n; i++)
			if (f[i] > after && (!found || f[i] < best)) {
				best = f[i], best_wall = wall, found = 1;
			}
		if (found && cron_zone_fixed(z))
			break;
		wall += 60;
	}
	cron_zone_leave(z, &saved);
	if (!found)
		return CRON_NEVER;
	*next = best;
	return CRON_FOUND;
}

/* Writes t as ISO 8601 in zone z with its offset: 2025-03-30T03:00:00+02:00. */
void
cron_format(const struct cron_zone *z, int64_t t, char *out, size_t outlen)
{
	struct tz_saved saved;
	int64_t off, local, y;
	int m, d, secs;

	cron_zone_enter(z, &saved);
	off = cron_zone_offset(z, t);
	cron_zone_leave(z, &saved);
	local = t + off;
	civil_from_days(floor_div(local, 86400), &y, &m, &d);
	secs = (int)(local - floor_div(local, 86400) * 86400);
	snprintf(out, outlen, "%04lld-%02d-%02dT%02d:%02d:%02d%c%02d:%02d", (long long)y, m, d, secs / 3600,
	    secs / 60 % 60, secs % 60, off < 0 ? '-' : '+', (int)(llabs(off) / 3600),
	    (int)(llabs(off) / 60 % 60));
}

/* Parses an ISO 8601 time.  With an offset (Z, +02:00) it is that
 * instant; without one it is a wall time in zone z (a time skipped by a
 * clock change means the end of the gap, a repeated one its first
 * occurrence). */
int
cron_parse_time(const struct cron_zone *z, const char *s, int64_t *out, char *err)
{
	char utc[64];
	const char *tail = strlen(s) > 10 ? s + 10 : "";
	int has_offset = strpbrk(tail, "Zz+-") != NULL;
	struct tz_saved saved;
	long long y;
	int m, d, h, mi, sec, n;
	int64_t wall, u[2], gap_end = 0;

	if (isotime_to_utc(s, utc, sizeof utc, err) < 0)
		return -1;
	if (sscanf(utc, "%lld-%d-%d %d:%d:%d", &y, &m, &d, &h, &mi, &sec) != 6) {
		errf(err, "bad time '%s'", s);
		return -1;
	}
	wall = days_from_civil(y, m, d) * 86400 + h * 3600 + mi * 60 + sec;
	if (has_offset) {
		*out = wall;
		return 0;
	}
	cron_zone_enter(z, &saved);
	n = cron_zone_instants(z, wall, u, &gap_end);
	cron_zone_leave(z, &saved);
	*out = n > 0 ? u[0] : gap_end;
	return 0;
}
