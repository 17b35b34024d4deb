/* fuzz_status.c -- the persistent protocol's status line
 * (runner_status_line) on any bytes, cut into lines at '\n' as the
 * worker cuts what a persistent handler writes on descriptor 3.
 *
 * Properties: no crash, leak or undefined behaviour; each line is a
 * status line (1), a control line (0) or a violation (-1); a status is
 * 0-255; a status line is a JSON object whose only key is "status" (so
 * nothing after it on the line, and no second key, is taken); the same
 * line gives the same answer twice. */
#include "config.h"

#include <string.h>

#include <cjson/cJSON.h>

#include "fuzz.h"
#include "runner.h"
#include "util.h"

static void
check_line(const char *line, size_t len)
{
	char *copy = xstrndup(line, len); /* exactly len bytes: reading past is caught */
	int st = -1, again = -1, rc = runner_status_line(copy, len, &st);

	FUZZ_ASSERT(rc == -1 || rc == 0 || rc == 1);
	FUZZ_ASSERT(runner_status_line(copy, len, &again) == rc);
	if (rc == 1) {
		/* the whole line, not a prefix of it, and no NUL in it */
		cJSON *o = cJSON_ParseWithOpts(copy, NULL, 1);

		FUZZ_ASSERT(memchr(copy, '\0', len) == NULL);
		FUZZ_ASSERT(st >= 0 && st <= 255 && again == st);
		FUZZ_ASSERT(o != NULL && cJSON_IsObject(o) && cJSON_GetArraySize(o) == 1);
		FUZZ_ASSERT(cJSON_GetObjectItemCaseSensitive(o, "status") != NULL);
		cJSON_Delete(o);
	}
	free(copy);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *end = p + size;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl != NULL ? (size_t)(nl - p) : (size_t)(end - p);

		check_line(p, len);
		p += len + (nl != NULL);
	}
	return 0;
}
