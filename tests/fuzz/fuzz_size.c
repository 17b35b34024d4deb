/* fuzz_size.c -- size_parse (the output limits, max_payload) on any bytes.
 *
 * Properties: no crash or undefined behaviour; a refused input leaves a
 * message; an accepted one is the digits times a power of 1024, so a bare
 * number reads back as itself. */
#include "config.h"

#include <ctype.h>
#include <string.h>

#include "fuzz.h"
#include "util.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = xstrndup((const char *)data, size);
	char err[ERRSZ], text[32];
	size_t v = 0, again = 0;

	err[0] = '\0';
	if (size_parse(s, &v, err) == 0) {
		FUZZ_ASSERT(isdigit((unsigned char)s[0]));
		snprintf(text, sizeof text, "%zu", v);
		FUZZ_ASSERT(size_parse(text, &again, err) == 0 && again == v);
	} else
		FUZZ_ASSERT(err[0] != '\0');
	free(s);
	return 0;
}
