/* fuzz_words.c -- words_split (the `exec =` line) on any bytes.
 *
 * Properties: no crash, leak or undefined behaviour; an accepted line
 * gives at least one word and no word longer than the line; a refused
 * one leaves a message. */
#include "config.h"

#include <string.h>

#include "fuzz.h"
#include "util.h"
#include "words.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = xstrndup((const char *)data, size);
	char err[ERRSZ];
	char **argv;
	size_t i;

	err[0] = '\0';
	argv = words_split(s, err);
	if (argv != NULL) {
		FUZZ_ASSERT(argv[0] != NULL);
		for (i = 0; argv[i] != NULL; i++)
			FUZZ_ASSERT(strlen(argv[i]) <= strlen(s));
		strv_free(argv);
	} else
		FUZZ_ASSERT(err[0] != '\0');
	free(s);
	return 0;
}
