/* fuzz.h -- what every fuzz target shares.
 *
 * A target is tests/fuzz/fuzz_NAME.c and defines only
 * LLVMFuzzerTestOneInput.  contrib/fuzz links it with libFuzzer (clang);
 * tests/fuzz/replay.c links the same file into a plain program that
 * `make check` runs over tests/fuzz/seeds/NAME and tests/fuzz/regress/NAME.
 * A target reports a broken property with FUZZ_ASSERT, which aborts: under
 * libFuzzer that is a crash with the input saved, under replay a failed
 * test. */
#ifndef JOBQ_FUZZ_H
#define JOBQ_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_ASSERT(cond)                                                                           \
	do {                                                                                        \
		if (!(cond)) {                                                                      \
			fprintf(stderr, "%s:%d: property broken: %s\n", __FILE__, __LINE__, #cond); \
			abort();                                                                    \
		}                                                                                   \
	} while (0)

#endif
