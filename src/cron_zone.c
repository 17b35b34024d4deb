/* cron_zone.c -- the time zones of the cron module: opening an IANA
 * zone by name (or a fixed offset), switching the C library to it, and
 * the clock changes it holds: which instants have a given wall time
 * (none in a gap when the clocks go forward, two in the repeated hour
 * when they go back).  "Wall" times are the local clock's reading written
 * as if it were UTC (seconds since 1970-01-01 00:00 local); times are
 * seconds since the epoch (UTC).  Calls nothing else of the cron module;
 * cron_next.c is built on it. */
#include "config.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "cron.h"
#include "cron_int.h"
#include "util.h"

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

/* Frees what cron_zone_open returned (NULL is fine). */
void
cron_zone_free(struct cron_zone *z)
{
	if (z != NULL)
		free(z->name);
	free(z);
}

/* The name the zone was opened by ("UTC" for the UTC aliases). */
const char *
cron_zone_name(const struct cron_zone *z)
{
	return z->name;
}

/* Whether z is a constant offset (UTC, +01:00): no clock changes. */
int
cron_zone_fixed(const struct cron_zone *z)
{
	return z->utc;
}

/* The C library knows one zone at a time, through TZ.  Each public
 * function that needs a zone sets TZ on entry and puts the caller's TZ
 * (or its absence) back on exit, so the rest of the process never sees
 * the change.  The dashboard computes fire times on several request
 * threads at once (its Schedules page, /metrics, times shown in a
 * schedule's zone), so every switch, from setting TZ to putting it
 * back, holds tz_lock: one thread's zone is never read by another's
 * localtime_r() in between, whichever caller forgot to serialise.
 * setenv() still races with a getenv() of another thread that is no
 * cron_* function; jobq serve keeps TZ set before its threads start
 * (serve_schedules_init), so the variable is replaced, not added. */
static pthread_mutex_t tz_lock = PTHREAD_MUTEX_INITIALIZER;

void
cron_zone_enter(const struct cron_zone *z, struct tz_saved *s)
{
	const char *old;

	if (!z->utc)
		pthread_mutex_lock(&tz_lock);
	old = getenv("TZ");
	s->was_set = old != NULL;
	s->value = old != NULL ? xstrdup(old) : NULL;
	if (!z->utc) {
		setenv("TZ", z->name, 1);
		tzset();
	}
}

/* Puts back the TZ that cron_zone_enter found, and lets the next
 * thread switch it. */
void
cron_zone_leave(const struct cron_zone *z, struct tz_saved *s)
{
	if (!z->utc) {
		if (s->was_set)
			setenv("TZ", s->value, 1);
		else
			unsetenv("TZ");
		tzset();
		pthread_mutex_unlock(&tz_lock);
	}
	free(s->value);
}

/* The zone's offset from UTC at t, in seconds; only inside cron_zone_enter. */
int64_t
cron_zone_offset(const struct cron_zone *z, int64_t t)
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
int
cron_zone_instants(const struct cron_zone *z, int64_t wall, int64_t u[2], int64_t *gap_end)
{
	int64_t cand[3], lo, hi;
	int i, j, n = 0;

	if (z->utc) {
		u[0] = wall - z->off;
		return 1;
	}
	cand[0] = cron_zone_offset(z, wall - 18 * 3600);
	cand[1] = cron_zone_offset(z, wall);
	cand[2] = cron_zone_offset(z, wall + 18 * 3600);
	for (i = 0; i < 3; i++) {
		int64_t t = wall - cand[i];

		for (j = 0; j < n && u[j] != t; j++)
			;
		if (j == n && n < 2 && cron_zone_offset(z, t) == cand[i])
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

		if (mid + cron_zone_offset(z, mid) > wall)
			hi = mid;
		else
			lo = mid;
	}
	*gap_end = hi;
	return 0;
}
