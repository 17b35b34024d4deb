/* isotime.h -- ISO 8601 times given on the command line. */
#ifndef JOBQ_ISOTIME_H
#define JOBQ_ISOTIME_H

#include <stddef.h>

int isotime_to_utc(const char *s, char *out, size_t outlen, char *err);

#endif
