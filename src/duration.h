/* duration.h -- "90", "90s", "250ms", "5m", "2h", "1d", "1h30m". */
#ifndef JOBQ_DURATION_H
#define JOBQ_DURATION_H

#include <stddef.h>
#include <stdint.h>

int duration_parse(const char *s, int64_t *ms, char *err);
void duration_format(int64_t ms, char *out, size_t outlen);

#endif
