/* fuzz_duration.c -- duration_parse on any bytes.
 *
 * Properties: no crash or undefined behaviour; a value it accepts is in
 * [0, 100 years]; printing it with duration_format and parsing that again
 * gives the same value (what `jobq check` prints reads back). */
#include "config.h"

#include <string.h>

#include "duration.h"
#include "fuzz.h"
#include "util.h"

#define MAX_MS (100LL * 365 * 24 * 3600 * 1000)

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = xstrndup((const char *)data, size);
	char err[ERRSZ], text[128];
	int64_t ms = -1, again = -1;

	if (duration_parse(s, &ms, err) == 0) {
		FUZZ_ASSERT(ms >= 0 && ms <= MAX_MS);
		duration_format(ms, text, sizeof text);
		FUZZ_ASSERT(duration_parse(text, &again, err) == 0);
		FUZZ_ASSERT(again == ms);
	} else
		FUZZ_ASSERT(err[0] != '\0');
	free(s);
	return 0;
}
