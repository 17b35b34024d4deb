/* duration.c -- parse and print durations.
 *
 * A duration is one or more NUMBER UNIT groups ("1h30m") or a bare number
 * of seconds ("90").  Units: ms, s, m, h, d.  Values are kept in
 * milliseconds; anything over 100 years is refused so that sums and
 * conversions to microseconds cannot overflow. */
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

/* Whether s is written as a duration, whatever its size: a bare number,
 * or groups of digits each with a unit. */
static int
well_formed(const char *s)
{
	const char *p = s, *u;
	int groups = 0;

	while (*p != '\0') {
		if (!isdigit((unsigned char)*p))
			return 0;
		while (isdigit((unsigned char)*p))
			p++;
		for (u = p; isalpha((unsigned char)*p); p++)
			;
		if (p == u ? groups > 0 || *p != '\0' : unit_ms(u, (size_t)(p - u)) < 0)
			return 0;
		groups++;
	}
	return groups > 0;
}

/* Parses s into milliseconds; 0 on success, -1 with a message in err
 * (one over the bound, 100 years, is named as that). */
int
duration_parse(const char *s, int64_t *ms, char *err)
{
	const char *p = s;
	int64_t total = 0;
	int groups = 0;

	if (s == NULL || *s == '\0')
		goto bad;
	while (*p != '\0') {
		int64_t n = 0, mult;
		const char *u;

		if (!isdigit((unsigned char)*p))
			goto bad;
		while (isdigit((unsigned char)*p)) {
			n = n * 10 + (*p++ - '0');
			if (n > DURATION_MAX_MS)
				goto too_long;
		}
		u = p;
		while (isalpha((unsigned char)*p))
			p++;
		if (p == u) {
			/* A bare number means seconds, and only on its own. */
			if (groups > 0 || *p != '\0')
				goto bad;
			mult = 1000;
		} else if ((mult = unit_ms(u, (size_t)(p - u))) < 0)
			goto bad;
		if (n > DURATION_MAX_MS / mult)
			goto too_long;
		total += n * mult;
		if (total > DURATION_MAX_MS)
			goto too_long;
		groups++;
	}
	*ms = total;
	return 0;
too_long:
	if (well_formed(s)) {
		errf(err, "duration '%s' is over 100 years, the most any duration may be", s);
		return -1;
	}
bad:
	errf(err, "bad duration '%s' (expected e.g. 90, 90s, 250ms, 5m, 2h, 1d or 1h30m)", s ? s : "");
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
