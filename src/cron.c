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
 * This file parses an expression and matches it against a local time;
 * it is the bottom of the cron module.  Above it: cron_next.c (next fire
 * times in a schedule's time zone, with the daylight-saving policy),
 * built on cron_zone.c (time zones), and cron_describe.c (the English
 * sentence).  The rest of jobq sees only cron.h. */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cron.h"
#include "cron_int.h"
#include "util.h"

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
	{ "day of week", 0, 7, 7, day_names }, /* 0-7 as in Vixie cron: a step of 7 is Sunday */
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
	if (v < f->lo || v > f->hi) { /* as written: v stops growing past 100000 */
		errf(err, "%s: %.*s is out of range %d-%d (column %d)", f->name, (int)(s - *p), *p, f->lo,
		    f->hi, col);
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
		errf(err, "%s: step %.*s is wider than the field (%d-%d) (column %d)", f->name, (int)(s - *p),
		    *p, f->lo, f->lo + f->width, col);
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
	int lo, hi, step = 1, v, ranged = 0;

	if (*p == '*') {
		lo = f->lo, hi = f->hi, p++;
	} else {
		if (parse_value(f, &p, col + (int)(p - s), &lo, err) < 0)
			return -1;
		hi = lo;
		if (*p == '-') {
			ranged = 1;
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
		if (lo == hi && !ranged)
			hi = f->hi; /* "5/15" means 5-59/15; "5-5/15" is 5 alone, as in Vixie cron */
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
			    "unknown macro '%.*s' (@hourly, @daily or @midnight, @weekly, @monthly, @yearly or @annually) (column %d)",
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

/* Frees what cron_parse returned (NULL is fine). */
void
cron_free(struct cron *c)
{
	free(c);
}

/* ---- matching ---- */

/* Whether the day matches, by the day-of-month/day-of-week rule at the
 * top of the file (mon 1-12, wday 0-6). */
int
cron_day_matches(const struct cron *c, int mday, int mon, int wday)
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
	    cron_day_matches(c, mday, mon, wday);
}

/* Whether the DST policy treats the schedule as a wildcard job: its
 * minute or hour field starts with '*'. */
int
cron_is_wildcard(const struct cron *c)
{
	return c->star[F_MIN] || c->star[F_HOUR];
}

/* The values of one field (F_MIN ... F_WDAY) as bits: bit v is value v. */
uint64_t
cron_field(const struct cron *c, int field)
{
	return c->bits[field];
}

/* Whether the field was written starting with '*'. */
int
cron_field_star(const struct cron *c, int field)
{
	return c->star[field];
}
