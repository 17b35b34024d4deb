/* fuzz_utf8.c -- utf8_repair (handler output before it is stored).
 *
 * Properties: the output is valid UTF-8 with no NUL (utf8_valid_prefix
 * covers all of it), at most 3 bytes per input byte, the input unchanged
 * when it already was valid, and repairing the output again changes
 * nothing.  utf8_valid_prefix never runs past the input and ends on the
 * same boundary as the repair would keep. */
#include "config.h"

#include <string.h>

#include "fuzz.h"
#include "utf8.h"
#include "util.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* A copy of exactly size bytes, so ASan sees any read past the end. */
	char *in = xmalloc(size ? size : 1);
	struct buf out, again;
	size_t valid;

	memcpy(in, data, size);
	buf_init(&out);
	buf_init(&again);
	utf8_repair(in, size, &out);
	FUZZ_ASSERT(out.len <= 3 * size);
	FUZZ_ASSERT(memchr(out.data, '\0', out.len) == NULL);
	FUZZ_ASSERT(utf8_valid_prefix(out.data, out.len) == out.len);
	valid = utf8_valid_prefix(in, size);
	FUZZ_ASSERT(valid <= size);
	FUZZ_ASSERT(out.len >= valid && memcmp(out.data, in, valid) == 0);
	if (valid == size)
		FUZZ_ASSERT(out.len == size);
	utf8_repair(out.data, out.len, &again);
	FUZZ_ASSERT(again.len == out.len && memcmp(again.data, out.data, out.len) == 0);
	buf_free(&out);
	buf_free(&again);
	free(in);
	return 0;
}
