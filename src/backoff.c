/* backoff.c -- delays between attempts.
 *
 * Two shapes: "exponential BASE CAP" doubles from BASE after each failed
 * attempt up to CAP (default 10s doubling to 600s), and a list "30,60,120"
 * gives the delay after attempt 1, 2, 3 and repeats its last entry.
 * Jitter (default 10%) shortens each delay by a random part of itself so
 * that a burst of jobs failing together does not come back together. */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backoff.h"
#include "duration.h"
#include "util.h"

void
backoff_default(struct backoff *b)
{
	memset(b, 0, sizeof *b);
	b->kind = BACKOFF_EXPONENTIAL;
	b->base_ms = 10000;
	b->cap_ms = 600000;
	b->jitter = 0.1;
}

static int
parse_exponential(const char *args, struct backoff *out, char *err)
{
	char base[64], cap[64], extra[2];
	int n = sscanf(args, "%63s %63s %1s", base, cap, extra);

	while (*args == ' ' || *args == '\t')
		args++;
	if (n < 1 || n > 2) {
		errf(err,
		    "bad backoff 'exponential %s' (expected 'exponential BASE CAP', e.g. 'exponential 10s "
		    "10m')",
		    args);
		return -1;
	}
	if (duration_parse(base, &out->base_ms, err) < 0)
		return -1;
	out->cap_ms = 600000;
	if (n == 2 && duration_parse(cap, &out->cap_ms, err) < 0)
		return -1;
	if (n == 1 && out->base_ms > out->cap_ms) { /* the CAP left out is 10m */
		errf(err, "bad backoff 'exponential %s' (BASE is over the default CAP of 10m: give a CAP, e.g. "
		    "'exponential %s 1h')", args, base);
		return -1;
	}
	if (out->base_ms <= 0 || out->cap_ms < out->base_ms) {
		errf(err, "bad backoff 'exponential %s' (BASE must be positive and CAP at least BASE)", args);
		return -1;
	}
	return 0;
}

static int
parse_list(const char *s, struct backoff *out, char *err)
{
	char **items = NULL;
	int n = split_list(s, &items), i;

	/* a word first ("linear 5s", "fixed 5s") names a kind jobq lacks:
	 * say which kinds there are, not that "linear 5s" is no duration */
	if (n <= 0 || isalpha((unsigned char)items[0][0])) {
		errf(err, "bad backoff '%s' (expected 'exponential BASE [CAP]' or a list of delays like 30s,1m,2m)",
		    s);
		strv_free(items);
		return -1;
	}
	out->steps = xcalloc((size_t)n, sizeof *out->steps);
	out->nsteps = (size_t)n;
	for (i = 0; i < n; i++)
		if (duration_parse(items[i], &out->steps[i], err) < 0) {
			strv_free(items);
			return -1;
		}
	strv_free(items);
	return 0;
}

/* Parses "exponential BASE [CAP]" or "D1,D2,...".  The jitter is not
 * part of the syntax (it has its own key) and is left unchanged. */
int
backoff_parse(const char *s, struct backoff *out, char *err)
{
	double jitter = out->jitter;

	backoff_free(out);
	out->jitter = jitter;
	while (isspace((unsigned char)*s))
		s++;
	if (strncmp(s, "exponential", 11) == 0 && (s[11] == '\0' || isspace((unsigned char)s[11]))) {
		out->kind = BACKOFF_EXPONENTIAL;
		return parse_exponential(s + 11, out, err);
	}
	out->kind = BACKOFF_LIST;
	return parse_list(s, out, err);
}

void
backoff_copy(struct backoff *dst, const struct backoff *src)
{
	*dst = *src;
	if (src->nsteps > 0) {
		dst->steps = xcalloc(src->nsteps, sizeof *dst->steps);
		memcpy(dst->steps, src->steps, src->nsteps * sizeof *dst->steps);
	}
}

void
backoff_free(struct backoff *b)
{
	free(b->steps);
	b->steps = NULL;
	b->nsteps = 0;
}

/* The delay after failed attempt number attempt (1-based), without
 * jitter. */
int64_t
backoff_nominal(const struct backoff *b, unsigned attempt)
{
	int64_t d;
	unsigned i;

	if (attempt == 0)
		attempt = 1;
	if (b->kind == BACKOFF_LIST)
		return b->steps[attempt - 1 < b->nsteps ? attempt - 1 : b->nsteps - 1];
	d = b->base_ms;
	for (i = 1; i < attempt && d < b->cap_ms; i++)
		d *= 2;
	return d < b->cap_ms ? d : b->cap_ms;
}

/* The delay to apply: the nominal one less a random part of at most
 * jitter times itself. */
int64_t
backoff_delay(const struct backoff *b, unsigned attempt)
{
	int64_t d = backoff_nominal(b, attempt);

	if (b->jitter <= 0 || d <= 0)
		return d;
	/* Each process draws its own: see random_u32. */
	return d - (int64_t)((double)d * b->jitter * ((double)random_u32() / 4294967296.0));
}

/* "exponential 10s..10m, jitter 10%" or "30s,1m,2m, jitter 0%". */
void
backoff_describe(const struct backoff *b, char *out, size_t outlen)
{
	char d1[32], d2[32];
	size_t used = 0, i;

	if (b->kind == BACKOFF_EXPONENTIAL) {
		duration_format(b->base_ms, d1, sizeof d1);
		duration_format(b->cap_ms, d2, sizeof d2);
		used = (size_t)snprintf(out, outlen, "exponential %s..%s", d1, d2);
	} else {
		out[0] = '\0';
		for (i = 0; i < b->nsteps && used < outlen; i++) {
			duration_format(b->steps[i], d1, sizeof d1);
			used += (size_t)snprintf(out + used, outlen - used, "%s%s", i ? "," : "", d1);
		}
	}
	if (used < outlen)
		snprintf(out + used, outlen - used, ", jitter %.0f%%", b->jitter * 100);
}
