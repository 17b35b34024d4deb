/* backoff.h -- how long a failed job waits before its next attempt. */
#ifndef JOBQ_BACKOFF_H
#define JOBQ_BACKOFF_H

#include <stddef.h>
#include <stdint.h>

enum backoff_kind { BACKOFF_EXPONENTIAL, BACKOFF_LIST };

struct backoff {
	enum backoff_kind kind;
	int64_t base_ms; /* exponential: delay after the first attempt */
	int64_t cap_ms;  /* exponential: largest delay */
	int64_t *steps;  /* list: delay after attempt 1, 2, ...; the last repeats */
	size_t nsteps;
	double jitter; /* a delay is drawn from [d * (1 - jitter), d] */
};

void backoff_default(struct backoff *b);
int backoff_parse(const char *s, struct backoff *out, char *err);
void backoff_copy(struct backoff *dst, const struct backoff *src);
void backoff_free(struct backoff *b);
int64_t backoff_nominal(const struct backoff *b, unsigned attempt);
int64_t backoff_delay(const struct backoff *b, unsigned attempt);
void backoff_describe(const struct backoff *b, char *out, size_t outlen);

#endif
