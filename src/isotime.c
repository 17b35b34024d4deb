/* isotime.c -- turn "2026-12-01T09:30:00+01:00" into a UTC DATETIME.
 *
 * Accepted: YYYY-MM-DD, then T or a blank and HH:MM[:SS[.fraction]],
 * then Z, +HH:MM, -HH:MM, +HHMM or nothing (nothing means UTC, like every
 * time jobq stores).  A date alone means midnight UTC.  The result is
 * "YYYY-MM-DD HH:MM:SS.ffffff", ready for a DATETIME(6) column, and lies
 * in years 0001-9999 once converted to UTC: "9999-12-31T23:30-01:00" is
 * refused here rather than by the server. */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "isotime.h"
#include "util.h"

/* 0001-01-01 00:00:00 and 9999-12-31 23:59:59 UTC, in seconds since
 * 1970: the DATETIME range jobq writes. */
#define UTC_MIN (-62135596800LL)
#define UTC_MAX 253402300799LL

static int
digits(const char **p, int n, int *out)
{
	int v = 0, i;

	for (i = 0; i < n; i++) {
		if (!isdigit((unsigned char)(*p)[i]))
			return -1;
		v = v * 10 + ((*p)[i] - '0');
	}
	*p += n;
	*out = v;
	return 0;
}

static int
parse_offset(const char **p, int *offset_s)
{
	int sign, hh, mm = 0;

	if (**p == 'Z' || **p == 'z') {
		(*p)++;
		*offset_s = 0;
		return 0;
	}
	if (**p != '+' && **p != '-')
		return **p == '\0' ? (*offset_s = 0, 0) : -1;
	sign = **p == '-' ? -1 : 1;
	(*p)++;
	if (digits(p, 2, &hh) < 0)
		return -1;
	if (**p == ':')
		(*p)++;
	if (**p != '\0' && digits(p, 2, &mm) < 0)
		return -1;
	if (hh > 23 || mm > 59)
		return -1;
	*offset_s = sign * (hh * 3600 + mm * 60);
	return 0;
}

/* Parses s (see the top of this file) into *t, seconds since 1970 UTC,
 * and *usec; see isotime_to_utc for the return values. */
int
isotime_parse(const char *s, int64_t *t, int *usec, char *err)
{
	const char *p = s;
	struct tm tm;
	int y, mo, d, h = 0, mi = 0, sec = 0, offset = 0, scale = 100000;

	*usec = 0;
	if (digits(&p, 4, &y) < 0 || *p++ != '-' || digits(&p, 2, &mo) < 0 || *p++ != '-' ||
	    digits(&p, 2, &d) < 0)
		goto bad;
	if (*p == 'T' || *p == 't' || *p == ' ') {
		p++;
		if (digits(&p, 2, &h) < 0 || *p++ != ':' || digits(&p, 2, &mi) < 0)
			goto bad;
		if (*p == ':') {
			p++;
			if (digits(&p, 2, &sec) < 0)
				goto bad;
			if (*p == '.' || *p == ',') {
				for (p++; isdigit((unsigned char)*p); p++, scale /= 10)
					*usec += (*p - '0') * scale;
			}
		}
	}
	if (parse_offset(&p, &offset) < 0 || *p != '\0')
		goto bad;
	if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60)
		goto bad;
	memset(&tm, 0, sizeof tm);
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	*t = (int64_t)timegm(&tm);
	if (tm.tm_mday != d) /* February 30th normalised into March */
		goto bad;
	*t += sec - offset; /* after the date check: a leap second 60 is the next minute's 0 */
	if (*t < UTC_MIN || *t > UTC_MAX) {
		errf(err, "time '%s' is outside years 0001-9999 once converted to UTC", s);
		return ISOTIME_RANGE;
	}
	return 0;
bad:
	errf(
	    err, "bad time '%s' (expected ISO 8601, e.g. 2026-12-01T09:30:00Z or 2026-12-01 10:30+01:00)", s);
	return -1;
}

int
isotime_to_utc(const char *s, char *out, size_t outlen, char *err)
{
	struct tm tm;
	int64_t t;
	time_t tt;
	int usec, rc;

	if ((rc = isotime_parse(s, &t, &usec, err)) != 0)
		return rc;
	tt = (time_t)t;
	gmtime_r(&tt, &tm);
	snprintf(out, outlen, "%04d-%02d-%02d %02d:%02d:%02d.%06d", tm.tm_year + 1900, tm.tm_mon + 1,
	    tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, usec);
	return 0;
}

/* "YYYY-MM-DD HH:MM:SS" in UTC of t (seconds since the epoch), for
 * DATETIME columns; "" when it does not fit len. */
void
isotime_utc_text(int64_t t, char *out, size_t len)
{
	time_t tt = (time_t)t;
	struct tm tm;

	gmtime_r(&tt, &tm);
	if (strftime(out, len, "%Y-%m-%d %H:%M:%S", &tm) == 0 && len > 0)
		out[0] = '\0';
}

/* Moves ts, a database time ("YYYY-MM-DD HH:MM:SS[.ffffff]", UTC), ms
 * later; left as it is when it does not parse. */
void
isotime_add_ms(char *ts, size_t size, int64_t ms)
{
	struct tm tm;
	const char *dot = strchr(ts, '.'), *f = dot != NULL ? dot + 1 : "";
	int64_t us = 0;
	char out[96];
	time_t t;
	int i;

	memset(&tm, 0, sizeof tm);
	if (sscanf(ts, "%4d-%2d-%2d %2d:%2d:%2d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
	        &tm.tm_min, &tm.tm_sec) != 6)
		return;
	for (i = 0; i < 6; i++) {
		us *= 10;
		if (*f >= '0' && *f <= '9')
			us += *f++ - '0';
	}
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	us += ms * 1000;
	t = timegm(&tm) + (time_t)(us / 1000000);
	us %= 1000000;
	if (gmtime_r(&t, &tm) == NULL)
		return;
	snprintf(out, sizeof out, "%04d-%02d-%02d %02d:%02d:%02d.%06lld", tm.tm_year + 1900, tm.tm_mon + 1,
	    tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (long long)us);
	if (strlen(out) < size)
		memcpy(ts, out, strlen(out) + 1);
}
