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

#include "../testconf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_ASSERT(cond)                                                                           \
	do {                                                                                        \
		if (!(cond)) {                                                                      \
			fprintf(stderr, "%s:%d: property broken: %s\n", __FILE__, __LINE__, #cond); \
			abort();                                                                    \
		}                                                                                   \
	} while (0)

/* The configuration the batch and control targets check jobs against. */
#define FUZZ_CONF_TEXT                     \
	"[database]\n"                     \
	"socket = /nonexistent/jobq.sock\n" \
	"database = jobq\n"                 \
	"[worker]\n"                        \
	"max_payload = 2K\n"                \
	"[queue default]\n"                 \
	"[queue mail]\n"                    \
	"[handler echo]\n"                  \
	"exec = /bin/true\n"                \
	"[handler send_email]\n"            \
	"exec = /bin/true\n"                \
	"queue = mail\n"

/* FUZZ_CONF_TEXT, loaded once per process. */
static inline const struct conf *
fuzz_fixed_conf(const char *name)
{
	static struct conf *c;

	if (c == NULL)
		c = testconf_load(name, FUZZ_CONF_TEXT);
	return c;
}

/* Whether s holds a control character: a message must be one line and
 * must not drive the terminal it is printed on. */
static inline int
fuzz_has_control(const char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return 1;
	return 0;
}

#endif
