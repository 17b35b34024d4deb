/* fuzz_cron.c -- libFuzzer target for the cron parser and everything a
 * parsed expression feeds: description, next fire times in UTC and in a
 * zone with daylight saving, "never".  Besides crashes and sanitizer
 * reports it checks the module's promises: a fire time is strictly after
 * the instant asked about, and in UTC it matches the expression. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cron.h"
#include "fuzz.h"
#include "util.h"

static struct cron_zone *utc, *berlin;

static void
check_utc(const struct cron *c, int64_t from)
{
	int64_t t = from, next;
	int i;

	for (i = 0; i < 3; i++) {
		time_t tt;
		struct tm tm;

		if (cron_next(c, utc, t, &next) != CRON_FOUND)
			return;
		if (next <= t)
			abort(); /* not strictly after */
		tt = (time_t)next;
		gmtime_r(&tt, &tm);
		if (tm.tm_sec != 0 || !cron_matches(c, tm.tm_min, tm.tm_hour, tm.tm_mday, tm.tm_mon + 1, tm.tm_wday))
			abort(); /* a fire time that does not match */
		t = next;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[ERRSZ], when[64], *text, *desc;
	struct cron *c;
	int64_t next, from = 1743296400; /* 2025-03-30T01:00:00Z: Berlin skips 02:00-03:00 */

	if (utc == NULL) {
		utc = cron_zone_open("UTC", err);
		berlin = cron_zone_open("Europe/Berlin", err);
		if (utc == NULL || berlin == NULL)
			abort();
	}
	if (size > 200)
		return 0;
	text = xstrndup((const char *)data, size);
	if ((c = cron_parse(text, err)) == NULL) {
		if (strlen(err) == 0)
			abort(); /* a refusal must say why */
		free(text);
		return 0;
	}
	desc = cron_describe(c);
	if (desc == NULL || *desc == '\0')
		abort();
	free(desc);
	check_utc(c, from - 3600);
	if (cron_next(c, berlin, from - 7200, &next) == CRON_FOUND) {
		if (next <= from - 7200)
			abort();
		cron_format(berlin, next, when, sizeof when);
	}
	cron_free(c);
	free(text);
	return 0;
}
