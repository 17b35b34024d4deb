/* cron.c -- parse "MIN HOUR DOM MON DOW" the way Vixie cron does.
 *
 * Each field is a comma list of *, N, N-M, with an optional /STEP;
 * months and weekdays also take names (jan, mon), weekday 7 is Sunday,
 * and @hourly, @daily (@midnight), @weekly, @monthly, @yearly (@annually)
 * stand for the usual lines.  When both day fields are restricted, a day
 * matches if either does, as in every cron since V7. */
#include "config.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cron.h"
#include "util.h"

struct cron {
	uint64_t min;  /* bits 0-59 */
	uint32_t hour; /* bits 0-23 */
	uint32_t mday; /* bits 1-31 */
	uint16_t mon;  /* bits 1-12 */
	uint8_t wday;  /* bits 0-6, Sunday 0 */
	int mday_star, wday_star;
};

struct field {
	const char *name;
	int lo, hi;
	const char *const *names; /* names[i] is value lo + i */
};

static const char *const month_names[] = { "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep",
	"oct", "nov", "dec", NULL };
static const char *const day_names[] = { "sun", "mon", "tue", "wed", "thu", "fri", "sat", NULL };

static const struct field fields[5] = {
	{ "minute", 0, 59, NULL },
	{ "hour", 0, 23, NULL },
	{ "day of month", 1, 31, NULL },
	{ "month", 1, 12, month_names },
	{ "day of week", 0, 7, day_names },
};

static int
parse_value(const struct field *f, const char **p, int *out)
{
	const char *s = *p;
	int v = 0, i;

	if (isdigit((unsigned char)*s)) {
		while (isdigit((unsigned char)*s) && v < 1000)
			v = v * 10 + (*s++ - '0');
	} else {
		for (i = 0; f->names != NULL && f->names[i] != NULL; i++)
			if (strncasecmp(s, f->names[i], 3) == 0 && !isalpha((unsigned char)s[3]))
				break;
		if (f->names == NULL || f->names[i] == NULL)
			return -1;
		v = f->lo + i;
		s += 3;
	}
	if (v < f->lo || v > f->hi)
		return -1;
	*p = s;
	*out = v;
	return 0;
}

/* Parses one comma item into bits. */
static int
parse_item(const struct field *f, const char *s, uint64_t *bits)
{
	int lo, hi, step = 1, v;

	if (*s == '*') {
		lo = f->lo, hi = f->hi, s++;
	} else {
		if (parse_value(f, &s, &lo) < 0)
			return -1;
		hi = lo;
		if (*s == '-') {
			s++;
			if (parse_value(f, &s, &hi) < 0 || hi < lo)
				return -1;
		}
	}
	if (*s == '/') {
		s++;
		if (!isdigit((unsigned char)*s))
			return -1;
		step = atoi(s);
		while (isdigit((unsigned char)*s))
			s++;
		if (step < 1 || step > f->hi)
			return -1;
		if (lo == hi)
			hi = f->hi; /* "5/15" means 5-59/15 */
	}
	if (*s != '\0')
		return -1;
	for (v = lo; v <= hi; v += step)
		*bits |= 1ULL << v;
	return 0;
}

static int
parse_field(const struct field *f, const char *text, uint64_t *bits, char *err)
{
	char *copy = xstrdup(text), *save = NULL, *item;
	int rc = 0;

	*bits = 0;
	for (item = strtok_r(copy, ",", &save); item != NULL; item = strtok_r(NULL, ",", &save))
		if (parse_item(f, item, bits) < 0) {
			errf(err, "bad %s '%s' (expected *, N, N-M, */S or a list, values %d-%d)", f->name,
			    item, f->lo, f->hi);
			rc = -1;
			break;
		}
	if (rc == 0 && *bits == 0) {
		errf(err, "empty %s field", f->name);
		rc = -1;
	}
	free(copy);
	return rc;
}

static const char *
expand_macro(const char *expr)
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
		if (strcmp(expr, macros[i].name) == 0)
			return macros[i].line;
	return NULL;
}

/* Returns the parsed expression, or NULL with the reason in err. */
struct cron *
cron_parse(const char *expr, char *err)
{
	char *copy, *save = NULL, *tok, *parts[6];
	const char *line = expr;
	struct cron *c;
	uint64_t bits[5];
	int n = 0, i;

	while (isspace((unsigned char)*line))
		line++;
	if (*line == '@') {
		if ((line = expand_macro(line)) == NULL) {
			errf(err, "unknown cron macro '%s' (@hourly, @daily, @weekly, @monthly, @yearly)",
			    expr);
			return NULL;
		}
	}
	copy = xstrdup(line);
	for (tok = strtok_r(copy, " \t", &save); tok != NULL && n < 6; tok = strtok_r(NULL, " \t", &save))
		parts[n++] = tok;
	if (n != 5) {
		errf(err,
		    "'%s' has %s fields; a cron expression has 5: minute hour day-of-month month day-of-week",
		    expr, n > 5 ? "more than 5" : "fewer than 5");
		free(copy);
		return NULL;
	}
	for (i = 0; i < 5; i++)
		if (parse_field(&fields[i], parts[i], &bits[i], err) < 0) {
			free(copy);
			return NULL;
		}
	c = xcalloc(1, sizeof *c);
	c->min = bits[0];
	c->hour = (uint32_t)bits[1];
	c->mday = (uint32_t)bits[2];
	c->mon = (uint16_t)bits[3];
	c->wday = (uint8_t)((bits[4] | (bits[4] >> 7)) & 0x7F); /* 7 is Sunday */
	c->mday_star = parts[2][0] == '*';
	c->wday_star = parts[4][0] == '*';
	free(copy);
	return c;
}

void
cron_free(struct cron *c)
{
	free(c);
}

/* Whether the broken-down local time matches (mon 1-12, wday 0-6). */
int
cron_matches(const struct cron *c, int min, int hour, int mday, int mon, int wday)
{
	int dom_ok = (c->mday >> mday) & 1, dow_ok = (c->wday >> wday) & 1;
	int day_ok;

	if (c->mday_star || c->wday_star)
		day_ok = dom_ok && dow_ok;
	else
		day_ok = dom_ok || dow_ok;
	return ((c->min >> min) & 1) && ((c->hour >> hour) & 1) && ((c->mon >> mon) & 1) && day_ok;
}
