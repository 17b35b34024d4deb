/* cron.c -- "MIN HOUR DOM MON DOW" the way Vixie cron (and cronie) read it.
 *
 * Each field is a comma list of *, N, N-M, each with an optional /STEP;
 * months and weekdays also take names (jan, mon), weekday 7 is Sunday,
 * and @hourly, @daily (@midnight), @weekly, @monthly, @yearly (@annually)
 * stand for the usual lines.
 *
 * Day of month and day of week: when both are restricted a day matches
 * if either matches; when either field starts with '*' both must match
 * (so "0 0 * * 1" is every Monday and "0 0 1 * 1" is the 1st and every
 * Monday), as in every cron since V7.
 *
 * Next fire times are computed in the schedule's IANA time zone with the
 * Vixie/cronie daylight-saving policy; see cron_next().  Times are seconds
 * since the epoch (UTC); "wall" times are the local clock's reading
 * written as if it were UTC (seconds since 1970-01-01 00:00 local). */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

#include "cron.h"
#include "isotime.h"
#include "util.h"

enum { F_MIN, F_HOUR, F_MDAY, F_MON, F_WDAY, NFIELDS };

struct cron {
	uint64_t bits[NFIELDS]; /* minute 0-59, hour 0-23, mday 1-31, mon 1-12, wday 0-6 */
	int star[NFIELDS];      /* the field starts with '*' */
};

struct field {
	const char *name;
	int lo, hi;               /* values written */
	int width;                /* largest sensible step */
	const char *const *names; /* names[i] is value lo + i */
};

static const char *const month_names[] = { "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep",
	"oct", "nov", "dec", NULL };
static const char *const day_names[] = { "sun", "mon", "tue", "wed", "thu", "fri", "sat", NULL };

static const struct field fields[NFIELDS] = {
	{ "minute", 0, 59, 59, NULL },
	{ "hour", 0, 23, 23, NULL },
	{ "day of month", 1, 31, 30, NULL },
	{ "month", 1, 12, 11, month_names },
	{ "day of week", 0, 7, 6, day_names },
};

/* ---- parsing ---- */

/* "unexpected '?'", or the byte in hex when it is not printable ASCII:
 * half of a UTF-8 character must not reach a terminal or a JSON string. */
static void
unexpected(const struct field *f, char ch, int col, char *err)
{
	if (isprint((unsigned char)ch) && (unsigned char)ch < 0x80)
		errf(err, "%s: unexpected '%c' (column %d)", f->name, ch, col);
	else
		errf(err, "%s: unexpected byte 0x%02X (column %d)", f->name, (unsigned char)ch, col);
}

/* Reads a number or a name at *p; col is the column of *p. */
static int
parse_value(const struct field *f, const char **p, int col, int *out, char *err)
{
	const char *s = *p;
	long v = 0;
	int i, n = 0;

	if (isdigit((unsigned char)*s)) {
		while (isdigit((unsigned char)*s)) {
			if (v < 100000)
				v = v * 10 + (*s - '0');
			s++;
		}
	} else if (isalpha((unsigned char)*s)) {
		while (isalpha((unsigned char)s[n]))
			n++;
		for (i = 0; f->names != NULL && f->names[i] != NULL; i++)
			if (n == 3 && strncasecmp(s, f->names[i], 3) == 0)
				break;
		if (f->names == NULL) {
			errf(err, "%s: unknown name '%.*s'; this field takes numbers only (column %d)",
			    f->name, n, s, col);
			return -1;
		}
		if (f->names[i] == NULL) {
			errf(err, "%s: unknown name '%.*s' (column %d)", f->name, n, s, col);
			return -1;
		}
		v = f->lo + i;
		s += n;
	} else {
		if (*s == '\0')
			errf(err, "%s: a value is missing (column %d)", f->name, col);
		else
			unexpected(f, *s, col, err);
		return -1;
	}
	if (v < f->lo || v > f->hi) {
		errf(err, "%s: %ld is out of range %d-%d (column %d)", f->name, v, f->lo, f->hi, col);
		return -1;
	}
	*p = s;
	*out = (int)v;
	return 0;
}

/* Reads "/STEP" at *p (after the '/'). */
static int
parse_step(const struct field *f, const char **p, int col, int *step, char *err)
{
	const char *s = *p;
	long v = 0;

	if (!isdigit((unsigned char)*s)) {
		errf(err, "%s: a step must be a number (column %d)", f->name, col);
		return -1;
	}
	while (isdigit((unsigned char)*s)) {
		if (v < 100000)
			v = v * 10 + (*s - '0');
		s++;
	}
	if (v == 0) {
		errf(err, "%s: step 0 (a step must be at least 1) (column %d)", f->name, col);
		return -1;
	}
	if (v > f->width) {
		errf(err, "%s: step %ld is wider than the field (%d-%d) (column %d)", f->name, v, f->lo,
		    f->lo + f->width, col);
		return -1;
	}
	*p = s;
	*step = (int)v;
	return 0;
}

/* Parses one comma item s[0..len) starting at column col into bits. */
static int
parse_item(const struct field *f, const char *s, int col, uint64_t *bits, char *err)
{
	const char *p = s;
	int lo, hi, step = 1, v;

	if (*p == '*') {
		lo = f->lo, hi = f->hi, p++;
	} else {
		if (parse_value(f, &p, col + (int)(p - s), &lo, err) < 0)
			return -1;
		hi = lo;
		if (*p == '-') {
			p++;
			if (parse_value(f, &p, col + (int)(p - s), &hi, err) < 0)
				return -1;
			if (hi < lo) {
				errf(err, "%s: range %d-%d is reversed (column %d)", f->name, lo, hi, col);
				return -1;
			}
		}
	}
	if (*p == '/') {
		p++;
		if (parse_step(f, &p, col + (int)(p - s), &step, err) < 0)
			return -1;
		if (lo == hi)
			hi = f->hi; /* "5/15" means 5-59/15 */
	}
	if (*p != '\0') {
		unexpected(f, *p, col + (int)(p - s), err);
		return -1;
	}
	for (v = lo; v <= hi; v += step)
		*bits |= 1ULL << v;
	return 0;
}

/* Parses one field text[0..len) starting at column col. */
static int
parse_field(const struct field *f, const char *text, size_t len, int col, uint64_t *bits, char *err)
{
	char *copy = xstrndup(text, len), *item = copy, *comma;
	int rc = 0;

	*bits = 0;
	for (;;) {
		comma = strchr(item, ',');
		if (comma != NULL)
			*comma = '\0';
		if (*item == '\0') {
			errf(err, "%s: empty list item (column %d)", f->name, col + (int)(item - copy));
			rc = -1;
			break;
		}
		if ((rc = parse_item(f, item, col + (int)(item - copy), bits, err)) < 0)
			break;
		if (comma == NULL)
			break;
		item = comma + 1;
	}
	free(copy);
	return rc;
}

static const char *
expand_macro(const char *name, size_t len)
{
	static const struct {
		const char *name, *line;
	} macros[] = {
		{ "@yearly", "0 0 1 1 *" },
		{ "@annually", "0 0 1 1 *" },
		{ "@monthly", "0 0 1 * *" },
		{ "@weekly", "0 0 * * 0" },
		{ "@daily", "0 0 * * *" },
		{ "@midnight", "0 0 * * *" },
		{ "@hourly", "0 * * * *" },
	};
	size_t i;

	for (i = 0; i < ARRAY_LEN(macros); i++)
		if (strlen(macros[i].name) == len && strncasecmp(name, macros[i].name, len) == 0)
			return macros[i].line;
	return NULL;
}

static int
is_blank(char ch)
{
	return ch == ' ' || ch == '\t';
}

/* Finds the (up to 6) blank-separated fields of line; returns their count. */
static int
split_fields(const char *line, const char **start, size_t *len)
{
	const char *p = line;
	int n = 0;

	for (;;) {
		while (is_blank(*p))
			p++;
		if (*p == '\0' || n == 6)
			return n;
		start[n] = p;
		while (*p != '\0' && !is_blank(*p))
			p++;
		len[n] = (size_t)(p - start[n]);
		n++;
	}
}

/* Returns the parsed expression, or NULL with the reason in err: one
 * line naming the field and the 1-based column of the problem. */
struct cron *
cron_parse(const char *expr, char *err)
{
	const char *line = expr, *start[6];
	size_t len[6];
	struct cron c;
	int n, i, base = 0;

	memset(&c, 0, sizeof c);
	n = split_fields(line, start, len);
	if (n == 1 && start[0][0] == '@') {
		if ((line = expand_macro(start[0], len[0])) == NULL) {
			errf(err,
			    "unknown macro '%.*s' (@hourly, @daily, @weekly, @monthly, @yearly) (column %d)",
			    (int)len[0], start[0], (int)(start[0] - expr) + 1);
			return NULL;
		}
		n = split_fields(line, start, len);
		base = -1; /* columns of the expansion mean nothing to the user */
	}
	if (n != 5) {
		if (n > 5)
			errf(err,
			    "more than 5 fields (column %d); a cron expression is: minute hour day-of-month "
			    "month day-of-week",
			    (int)(start[5] - line) + 1);
		else
			errf(err, "%d field%s where 5 are needed: minute hour day-of-month month day-of-week",
			    n, n == 1 ? "" : "s");
		return NULL;
	}
	for (i = 0; i < NFIELDS; i++)
		if (parse_field(&fields[i], start[i], len[i], base < 0 ? 1 : (int)(start[i] - line) + 1,
		        &c.bits[i], err) < 0)
			return NULL;
	c.bits[F_WDAY] = (c.bits[F_WDAY] | (c.bits[F_WDAY] >> 7)) & 0x7F; /* 7 is Sunday */
	for (i = 0; i < NFIELDS; i++)
		c.star[i] = start[i][0] == '*';
	return memcpy(xmalloc(sizeof c), &c, sizeof c);
}

void
cron_free(struct cron *c)
{
	free(c);
}

/* ---- matching ---- */

static int
day_matches(const struct cron *c, int mday, int mon, int wday)
{
	int dom_ok = (int)((c->bits[F_MDAY] >> mday) & 1), dow_ok = (int)((c->bits[F_WDAY] >> wday) & 1);

	if (!((c->bits[F_MON] >> mon) & 1))
		return 0;
	if (c->star[F_MDAY] || c->star[F_WDAY])
		return dom_ok && dow_ok;
	return dom_ok || dow_ok;
}

/* Whether the broken-down local time matches (mon 1-12, wday 0-6). */
int
cron_matches(const struct cron *c, int min, int hour, int mday, int mon, int wday)
{
	return ((c->bits[F_MIN] >> min) & 1) && ((c->bits[F_HOUR] >> hour) & 1) &&
	    day_matches(c, mday, mon, wday);
}

/* Whether the DST policy treats the schedule as a wildcard job: its
 * minute or hour field starts with '*'. */
int
cron_is_wildcard(const struct cron *c)
{
	return c->star[F_MIN] || c->star[F_HOUR];
}

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
	int64_t day0 = floor_div(wall, 86400), day, y;
	int start = (int)((wall - day0 * 86400) / 60), h, mi, m, d;

	for (day = day0; day < day0 + SEARCH_DAYS; day++, start = 0) {
		int wday = (int)(((day % 7) + 11) % 7); /* 1970-01-01 was a Thursday */

		civil_from_days(day, &y, &m, &d);
		if (!day_matches(c, d, m, wday))
			continue;
		for (h = start / 60; h < 24; h++) {
			if (!((c->bits[F_HOUR] >> h) & 1))
				continue;
			for (mi = h == start / 60 ? start % 60 : 0; mi < 60; mi++)
				if ((c->bits[F_MIN] >> mi) & 1) {
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

/* ---- time zones ---- */

struct cron_zone {
	char *name;
	int utc;     /* a constant offset (UTC, +01:00): no tz database needed */
	int64_t off; /* that offset, seconds east of UTC */
};

/* "+01:00", "-0530": a fixed offset, as the [worker] timezone allows. */
static int
parse_fixed(const char *name, int64_t *off)
{
	int hh, mm, n = 0;

	if ((name[0] != '+' && name[0] != '-') ||
	    (sscanf(name + 1, "%2d:%2d%n", &hh, &mm, &n) != 2 &&
	        sscanf(name + 1, "%2d%2d%n", &hh, &mm, &n) != 2) ||
	    name[1 + n] != '\0' || strlen(name) < 5 || hh > 14 || mm > 59)
		return -1;
	*off = (name[0] == '-' ? -1 : 1) * (hh * 3600 + mm * 60);
	return 0;
}

static int
zone_name_ok(const char *name)
{
	const char *p;

	if (*name == '\0' || *name == '/' || *name == '.' || strstr(name, "..") != NULL || strlen(name) > 200)
		return 0;
	for (p = name; *p != '\0'; p++)
		if (!isalnum((unsigned char)*p) && strchr("/_+-", *p) == NULL)
			return 0;
	return 1;
}

/* Opens an IANA zone by name ("Europe/Berlin"); UTC needs no tz
 * database.  An unknown name is an error (the C library would silently
 * use UTC for it). */
struct cron_zone *
cron_zone_open(const char *name, char *err)
{
	const char *dir = getenv("TZDIR");
	struct cron_zone *z;
	char path[512], magic[4];
	FILE *fp;
	int ok = 0;

	int64_t off = 0;

	if (strcasecmp(name, "UTC") == 0 || strcmp(name, "Etc/UTC") == 0 || strcmp(name, "Z") == 0 ||
	    strcasecmp(name, "GMT") == 0 || parse_fixed(name, &off) == 0) {
		z = xcalloc(1, sizeof *z);
		z->name = xstrdup(off == 0 && name[0] != '+' && name[0] != '-' ? "UTC" : name);
		z->utc = 1;
		z->off = off;
		return z;
	}
	if (!zone_name_ok(name)) {
		errf(err, "unknown time zone '%s' (expected an IANA name such as Europe/Berlin)", name);
		return NULL;
	}
	snprintf(path, sizeof path, "%s/%s", dir != NULL && *dir != '\0' ? dir : "/usr/share/zoneinfo", name);
	if ((fp = fopen(path, "rb")) != NULL) {
		ok = fread(magic, 1, 4, fp) == 4 && memcmp(magic, "TZif", 4) == 0;
		fclose(fp);
	}
	if (!ok) {
		errf(err, "unknown time zone '%s' (no such zone in %s)", name,
		    dir != NULL && *dir != '\0' ? dir : "/usr/share/zoneinfo");
		return NULL;
	}
	z = xcalloc(1, sizeof *z);
	z->name = xstrdup(name);
	return z;
}

void
cron_zone_free(struct cron_zone *z)
{
	if (z != NULL)
		free(z->name);
	free(z);
}

const char *
cron_zone_name(const struct cron_zone *z)
{
	return z->name;
}

/* The C library knows one zone at a time, through TZ.  Each public
 * function that needs a zone sets TZ on entry and puts the caller's TZ
 * (or its absence) back on exit, so the rest of a one-thread process
 * never sees the change.  That is safe only while one thread runs:
 * setenv() races with getenv(), localtime_r() and tzset() in any other
 * thread.  Every caller today (jobq cron, jobq schedule, the worker's
 * tick) is single-threaded; a threaded caller (a dashboard serving
 * --list from request threads) must call the cron_* zone functions from
 * one thread only, or this module must read the TZif data itself. */
struct tz_saved {
	char *value;
	int was_set;
};

static void
zone_enter(const struct cron_zone *z, struct tz_saved *s)
{
	const char *old = getenv("TZ");

	s->was_set = old != NULL;
	s->value = old != NULL ? xstrdup(old) : NULL;
	if (!z->utc) {
		setenv("TZ", z->name, 1);
		tzset();
	}
}

static void
zone_leave(const struct cron_zone *z, struct tz_saved *s)
{
	if (!z->utc) {
		if (s->was_set)
			setenv("TZ", s->value, 1);
		else
			unsetenv("TZ");
		tzset();
	}
	free(s->value);
}

/* The zone's offset from UTC at t, in seconds; only inside zone_enter. */
static int64_t
offset_at(const struct cron_zone *z, int64_t t)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (z->utc)
		return z->off;
	if (localtime_r(&tt, &tm) == NULL)
		return 0;
	return tm.tm_gmtoff;
}

/* The instants whose wall time is wall: none (it falls in a gap when the
 * clocks go forward; *gap_end is then the first instant after the gap),
 * one, or two (the repeated hour when the clocks go back), in order.
 * Assumes the zone's offset changes at most once within 18 hours. */
static int
wall_instants(const struct cron_zone *z, int64_t wall, int64_t u[2], int64_t *gap_end)
{
	int64_t cand[3], lo, hi;
	int i, j, n = 0;

	if (z->utc) {
		u[0] = wall - z->off;
		return 1;
	}
	cand[0] = offset_at(z, wall - 18 * 3600);
	cand[1] = offset_at(z, wall);
	cand[2] = offset_at(z, wall + 18 * 3600);
	for (i = 0; i < 3; i++) {
		int64_t t = wall - cand[i];

		for (j = 0; j < n && u[j] != t; j++)
			;
		if (j == n && n < 2 && offset_at(z, t) == cand[i])
			u[n++] = t;
	}
	if (n == 2 && u[1] < u[0]) {
		int64_t t = u[0];

		u[0] = u[1], u[1] = t;
	}
	if (n > 0)
		return n;
	/* A gap: the local clock reads below wall at lo and above it at hi. */
	lo = wall - (cand[0] > cand[2] ? cand[0] : cand[2]);
	hi = wall - (cand[0] < cand[2] ? cand[0] : cand[2]);
	while (hi - lo > 1) {
		int64_t mid = lo + (hi - lo) / 2;

		if (mid + offset_at(z, mid) > wall)
			hi = mid;
		else
			lo = mid;
	}
	*gap_end = hi;
	return 0;
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
	int n = wall_instants(z, wall, f, &gap_end);

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

	zone_enter(z, &saved);
	wall = floor_div(after + offset_at(z, after), 60) * 60 - (z->utc ? 0 : 3 * 3600);
	while (next_wall(c, wall, &wall) == 0) {
		if (found && wall > best_wall + 3 * 3600)
			break;
		n = fire_instants(c, z, wall, f);
		for (i = 0; i < n; i++)
			if (f[i] > after && (!found || f[i] < best)) {
				best = f[i], best_wall = wall, found = 1;
			}
		if (found && z->utc)
			break;
		wall += 60;
	}
	zone_leave(z, &saved);
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

	zone_enter(z, &saved);
	off = offset_at(z, t);
	zone_leave(z, &saved);
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
	zone_enter(z, &saved);
	n = wall_instants(z, wall, u, &gap_end);
	zone_leave(z, &saved);
	*out = n > 0 ? u[0] : gap_end;
	return 0;
}

/* ---- English descriptions ---- */

static const char *const long_months[] = { "", "January", "February", "March", "April", "May", "June", "July",
	"August", "September", "October", "November", "December" };
static const char *const long_days[] = { "Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday",
	"Saturday" };

static int
count_bits(uint64_t b)
{
	int n = 0;

	for (; b != 0; b &= b - 1)
		n++;
	return n;
}

static uint64_t
range_bits(int lo, int hi)
{
	uint64_t b = 0;
	int v;

	for (v = lo; v <= hi; v++)
		b |= 1ULL << v;
	return b;
}

static const char *
ordinal_suffix(int n)
{
	if (n % 100 >= 11 && n % 100 <= 13)
		return "th";
	switch (n % 10) {
	case 1:
		return "st";
	case 2:
		return "nd";
	case 3:
		return "rd";
	default:
		return "th";
	}
}

/* The step N when bits are lo, lo+N, lo+2N ... up to hi (N >= 2, three
 * values at least); else 0. */
static int
step_of(uint64_t bits, int lo, int hi)
{
	int step = 0, v, first = -1, last = -1;

	if (!((bits >> lo) & 1) || count_bits(bits) < 2)
		return 0;
	for (v = lo + 1; v <= hi; v++)
		if ((bits >> v) & 1) {
			step = v - lo;
			break;
		}
	if (step < 2)
		return 0;
	for (v = lo; v <= hi; v++) {
		int want = (v - lo) % step == 0;

		if ((int)((bits >> v) & 1) != want)
			return 0;
		if (want)
			last = v, first = first < 0 ? v : first;
	}
	if (last + step <= hi)
		return 0;
	/* two values are "every N" only when N divides the field: 0,30 is
	 * every 30 minutes, 0,45 is not every 45 */
	return count_bits(bits) > 2 || (hi - lo + 1) % step == 0 ? step : 0;
}

/* Names one value of a field. */
static void
add_value(struct buf *b, int field, int v)
{
	if (field == F_MON)
		buf_adds(b, long_months[v]);
	else if (field == F_WDAY)
		buf_adds(b, long_days[v]);
	else
		buf_printf(b, "%d", v);
}

/* "1, 3 through 5 and 9": runs of three or more become ranges; last
 * joins the last two parts (" and ", " or "). */
static void
add_set_joined(struct buf *b, int field, uint64_t bits, int lo, int hi, const char *last)
{
	struct buf part[64];
	int v = lo, n = 0, i;

	while (v <= hi) {
		int end;

		if (!((bits >> v) & 1)) {
			v++;
			continue;
		}
		for (end = v; end + 1 <= hi && ((bits >> (end + 1)) & 1); end++)
			;
		if (end - v < 2)
			end = v; /* two in a row are listed, not joined */
		buf_init(&part[n]);
		add_value(&part[n], field, v);
		if (end > v) {
			buf_adds(&part[n], " through ");
			add_value(&part[n], field, end);
		}
		n++;
		v = end + 1;
	}
	for (i = 0; i < n; i++) {
		if (i > 0)
			buf_adds(b, i + 1 == n ? last : ", ");
		buf_adds(b, part[i].data);
		buf_free(&part[i]);
	}
}

static void
add_set(struct buf *b, int field, uint64_t bits, int lo, int hi)
{
	add_set_joined(b, field, bits, lo, hi, " and ");
}

/* "at 09:30, 11:30 and 13:30" */
static void
add_times(struct buf *b, const struct cron *c)
{
	int h, m, n = 0, total = count_bits(c->bits[F_HOUR]) * count_bits(c->bits[F_MIN]);

	buf_adds(b, "at ");
	for (h = 0; h < 24; h++)
		for (m = 0; m < 60; m++)
			if (((c->bits[F_HOUR] >> h) & 1) && ((c->bits[F_MIN] >> m) & 1)) {
				if (n > 0)
					buf_adds(b, n + 1 == total ? " and " : ", ");
				buf_printf(b, "%02d:%02d", h, m);
				n++;
			}
}

/* The minute part alone: "every minute", "every 15 minutes", "at minute 5". */
static void
add_minutes(struct buf *b, uint64_t bits)
{
	int step = step_of(bits, 0, 59);

	if (bits == range_bits(0, 59))
		buf_adds(b, "every minute");
	else if (step > 0)
		buf_printf(b, "every %d minutes", step);
	else {
		buf_adds(b, count_bits(bits) == 1 ? "at minute " : "at minutes ");
		add_set(b, F_MIN, bits, 0, 59);
	}
}

static void
add_time_part(struct buf *b, const struct cron *c)
{
	uint64_t hours = c->bits[F_HOUR], mins = c->bits[F_MIN];
	int hstep = step_of(hours, 0, 23);

	if (hours == range_bits(0, 23)) {
		if (mins == 1) {
			buf_adds(b, "every hour");
			return;
		}
		add_minutes(b, mins);
		if (mins != range_bits(0, 59) && step_of(mins, 0, 59) == 0)
			buf_adds(b, " of every hour");
		return;
	}
	if (count_bits(mins) * count_bits(hours) <= 8) {
		add_times(b, c);
		return;
	}
	add_minutes(b, mins);
	if (hstep > 0)
		buf_printf(b, " of every %d%s hour", hstep, ordinal_suffix(hstep));
	else {
		buf_adds(b, count_bits(hours) == 1 ? " during hour " : " during hours ");
		add_set(b, F_HOUR, hours, 0, 23);
	}
}

static void
add_months(struct buf *b, uint64_t bits)
{
	int step = step_of(bits, 1, 12);

	if (bits == range_bits(1, 12))
		buf_adds(b, "the month");
	else if (step > 0)
		buf_printf(b, "every %d%s month", step, ordinal_suffix(step));
	else
		add_set(b, F_MON, bits, 1, 12);
}

static void
add_mdays(struct buf *b, uint64_t bits)
{
	int step = step_of(bits, 1, 31);

	if (step > 0)
		buf_printf(b, "every %d%s day", step, ordinal_suffix(step));
	else {
		buf_adds(b, count_bits(bits) == 1 ? "day " : "days ");
		add_set(b, F_MDAY, bits, 1, 31);
	}
}

/* "Monday through Friday", else prefix and the days joined by last:
 * "on Monday and Friday" (every such day), "on Monday or Friday" (the
 * day-of-month/day-of-week "either" rule), "a Monday or Friday" (after
 * "if it is"). */
static void
add_wdays(struct buf *b, uint64_t bits, const char *prefix, const char *last)
{
	int lo = 0, hi = 6;

	while (!((bits >> lo) & 1))
		lo++;
	while (!((bits >> hi) & 1))
		hi--;
	if (hi - lo >= 2 && bits == range_bits(lo, hi)) {
		add_set(b, F_WDAY, bits, 0, 6);
		return;
	}
	buf_adds(b, prefix);
	add_set_joined(b, F_WDAY, bits, 0, 6, last);
}

static void
add_day_part(struct buf *b, const struct cron *c)
{
	uint64_t dom = c->bits[F_MDAY], dow = c->bits[F_WDAY], mon = c->bits[F_MON];
	int all_dom = dom == range_bits(1, 31), all_dow = dow == range_bits(0, 6);
	int either = !c->star[F_MDAY] && !c->star[F_WDAY];

	if (either && (all_dom || all_dow))
		all_dom = all_dow = 1; /* "1-31 or Monday" is every day */
	if (!all_dom) {
		buf_adds(b, " on ");
		add_mdays(b, dom);
		buf_adds(b, " of ");
		add_months(b, mon);
		if (!all_dow) {
			buf_adds(b, either ? ", or " : ", if it is ");
			add_wdays(b, dow, either ? "on " : "a ", " or ");
		}
		return;
	}
	if (!all_dow) {
		buf_adds(b, ", ");
		add_wdays(b, dow, "on ", " and ");
	}
	if (mon != range_bits(1, 12)) {
		buf_adds(b, all_dow ? " in " : ", in ");
		add_months(b, mon);
	}
}

/* An English sentence for the expression, as `jobq cron` and `jobq
 * schedule --list` print it; "never" when no day matches.  The caller
 * frees it. */
char *
cron_describe(const struct cron *c)
{
	struct buf b;

	if (cron_never(c))
		return xstrdup("never (no such day)");
	buf_init(&b);
	add_time_part(&b, c);
	add_day_part(&b, c);
	return buf_steal(&b);
}
