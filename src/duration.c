/* duration.c -- parse and print durations.
 *
 * A duration is one or more NUMBER UNIT groups ("1h30m"), each unit at
 * most once and the largest first, or a bare number of seconds ("90").
 * Units: ms, s, m, h, d.  Values are kept in milliseconds; anything over
 * 100 years is refused so that sums and conversions to microseconds
 * cannot overflow. */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "duration.h"
#include "util.h"

#define DURATION_MAX_MS (100LL * 365 * 24 * 3600 * 1000)

static int64_t
unit_ms(const char *u, size_t len)
{
	static const struct {
		const char *name;
		int64_t ms;
	} units[] = {
		{ "ms", 1 },
		{ "s", 1000 },
		{ "m", 60000 },
		{ "h", 3600000 },
		{ "d", 86400000 },
	};
	size_t i;

	for (i = 0; i < ARRAY_LEN(units); i++)
		if (strlen(units[i].name) == len && strncmp(units[i].name, u, len) == 0)
			return units[i].ms;
	return -1;
}

enum shape { SHAPE_BAD, SHAPE_ORDER, SHAPE_OK };

/* How s is written, whatever its size: SHAPE_OK for a bare number or
 * groups of digits each with a unit, the units largest first and each
 * once; SHAPE_ORDER for such groups whose units repeat or climb ("1m1m",
 * "30m1h": most likely a typo, which a sum would hide); else SHAPE_BAD. */
static enum shape
shape(const char *s)
{
	const char *p = s, *u;
	int64_t mult, last = INT64_MAX;
	int groups = 0, ordered = 1;

	if (s == NULL || *s == '\0')
		return SHAPE_BAD;
	while (*p != '\0') {
		if (!isdigit((unsigned char)*p))
			return SHAPE_BAD;
		while (isdigit((unsigned char)*p))
			p++;
		for (u = p; isalpha((unsigned char)*p); p++)
			;
		if (p == u) /* a bare number means seconds, and only on its own */
			return groups == 0 && *p == '\0' ? SHAPE_OK : SHAPE_BAD;
		if ((mult = unit_ms(u, (size_t)(p - u))) < 0)
			return SHAPE_BAD;
		ordered = ordered && mult < last;
		last = mult;
		groups++;
	}
	return ordered ? SHAPE_OK : SHAPE_ORDER;
}

/* Parses s into milliseconds; 0 on success, -1 with a message in err
 * (one over the bound, 100 years, is named as that; so are units out of
 * order or given twice). */
int
duration_parse(const char *s, int64_t *ms, char *err)
{
	const char *p = s, *u;
	int64_t total = 0;

	switch (shape(s)) {
	case SHAPE_BAD:
		errf(
		    err, "bad duration '%s' (expected e.g. 90, 90s, 250ms, 5m, 2h, 1d or 1h30m)", s ? s : "");
		return -1;
	case SHAPE_ORDER:
		errf(
		    err, "bad duration '%s' (give each unit once, the largest first: e.g. 1h30m or 1d2h)", s);
		return -1;
	case SHAPE_OK:
		break;
	}
	while (*p != '\0') {
		int64_t n = 0, mult;

		while (isdigit((unsigned char)*p)) {
			n = n * 10 + (*p++ - '0');
			if (n > DURATION_MAX_MS)
				goto too_long;
		}
		for (u = p; isalpha((unsigned char)*p); p++)
			;
		mult = p == u ? 1000 : unit_ms(u, (size_t)(p - u));
		if (n > DURATION_MAX_MS / mult || (total += n * mult) > DURATION_MAX_MS)
			goto too_long;
	}
	*ms = total;
	return 0;
too_long:
	errf(err, "duration '%s' is over 100 years, the most any duration may be", s);
	return -1;
}

/* Prints ms as the shortest exact form: 250ms, 30s, 1m30s, 2h, 1d2h. */
void
duration_format(int64_t ms, char *out, size_t outlen)
{
	static const struct {
		const char *name;
		int64_t ms;
	} units[] = {
		{ "d", 86400000 },
		{ "h", 3600000 },
		{ "m", 60000 },
		{ "s", 1000 },
		{ "ms", 1 },
	};
	size_t i, used = 0;

	if (outlen == 0)
		return;
	out[0] = '\0';
	if (ms <= 0) {
		snprintf(out, outlen, "%s0s", ms < 0 ? "-" : "");
		if (ms == 0)
			return;
		ms = -ms;
		used = 1;
	}
	for (i = 0; i < ARRAY_LEN(units) && ms > 0; i++) {
		int64_t n = ms / units[i].ms;

		if (n == 0)
			continue;
		ms -= n * units[i].ms;
		if (used < outlen)
			used += (size_t)snprintf(
			    out + used, outlen - used, "%lld%s", (long long)n, units[i].name);
	}
}
