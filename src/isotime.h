/* isotime.h -- ISO 8601 times given on the command line. */
#ifndef JOBQ_ISOTIME_H
#define JOBQ_ISOTIME_H

#include <stddef.h>
#include <stdint.h>

/* isotime_to_utc fails with -1 when s is not an ISO 8601 time, and with
 * ISOTIME_RANGE when it is one but falls outside years 0001-9999 in UTC
 * (what the database can store): the first is a usage error on the
 * command line, the second bad data. */
#define ISOTIME_RANGE (-2)

int isotime_parse(const char *s, int64_t *t, int *usec, char *err);
int isotime_to_utc(const char *s, char *out, size_t outlen, char *err);
void isotime_utc_text(int64_t t, char *out, size_t len);
void isotime_add_ms(char *ts, size_t size, int64_t ms);

#endif
