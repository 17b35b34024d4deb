/* serve_rate.c -- the API rate limit per session of `jobq serve`, below
 * the router (serve.c), which asks it before each /api/ call of a
 * logged-in session.
 *
 * Each session has a token bucket: it holds up to api_burst calls and
 * fills at api_rate; a call takes one, and a call that finds none is
 * refused (429) with the seconds until one is there.  The buckets live
 * in this process's memory, not the database: counting must cost nothing
 * next to the call it guards, and a limit that several servers behind a
 * balancer each apply to their share is still a limit.  Only sessions
 * the database confirmed get a bucket, so their number is bounded by the
 * sessions people opened; a bucket that has filled up again is the same
 * as none, and such buckets are dropped once a minute. */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve_rate.h"
#include "util.h"

#define RATE_SLOTS 1024
#define RATE_KEY 64           /* a session's token hash, hex */
#define RATE_SWEEP_MS 60000

struct bucket {
	struct bucket *next;
	char key[RATE_KEY + 1];
	double tokens;
	int64_t at_ms; /* when tokens was right */
};

struct serve_rate {
	pthread_mutex_t mu;
	double per_ms; /* tokens added per millisecond */
	double burst;  /* the most a bucket holds */
	int64_t swept_ms;
	struct bucket *slots[RATE_SLOTS];
};

/* The limit of conf, or NULL when api_rate is off (every call goes). */
struct serve_rate *
serve_rate_new(const struct serve_conf *conf)
{
	struct serve_rate *rl;

	if (conf->api_rate_count == 0)
		return NULL;
	rl = xcalloc(1, sizeof *rl);
	pthread_mutex_init(&rl->mu, NULL);
	rl->per_ms = (double)conf->api_rate_count / (double)conf->api_rate_window_ms;
	rl->burst = conf->api_burst;
	rl->swept_ms = mono_ms();
	return rl;
}

void
serve_rate_free(struct serve_rate *rl)
{
	struct bucket *b, *next;
	size_t i;

	if (rl == NULL)
		return;
	for (i = 0; i < RATE_SLOTS; i++)
		for (b = rl->slots[i]; b != NULL; b = next) {
			next = b->next;
			free(b);
		}
	pthread_mutex_destroy(&rl->mu);
	free(rl);
}

/* Brings b's tokens up to now (never past the burst). */
static void
refill(const struct serve_rate *rl, struct bucket *b, int64_t now)
{
	b->tokens += (double)(now - b->at_ms) * rl->per_ms;
	if (b->tokens > rl->burst)
		b->tokens = rl->burst;
	b->at_ms = now;
}

/* Drops the buckets that are full again (caller holds mu). */
static void
sweep(struct serve_rate *rl, int64_t now)
{
	struct bucket **pp, *b;
	size_t i;

	rl->swept_ms = now;
	for (i = 0; i < RATE_SLOTS; i++)
		for (pp = &rl->slots[i]; (b = *pp) != NULL;) {
			refill(rl, b, now);
			if (b->tokens >= rl->burst) {
				*pp = b->next;
				free(b);
			} else
				pp = &b->next;
		}
}

/* The bucket of key, made full when absent (caller holds mu). */
static struct bucket *
bucket_get(struct serve_rate *rl, const char *key, int64_t now)
{
	unsigned h = 0;
	const char *p;
	struct bucket *b;

	for (p = key; *p != '\0'; p++)
		h = h * 31 + (unsigned char)*p;
	for (b = rl->slots[h % RATE_SLOTS]; b != NULL; b = b->next)
		if (strcmp(b->key, key) == 0)
			return b;
	b = xcalloc(1, sizeof *b);
	snprintf(b->key, sizeof b->key, "%s", key);
	b->tokens = rl->burst;
	b->at_ms = now;
	b->next = rl->slots[h % RATE_SLOTS];
	rl->slots[h % RATE_SLOTS] = b;
	return b;
}

/* Counts one API call of session (its token hash).  0 when it may go
 * ahead; else the whole seconds (at least 1) until the session may call
 * again, and the call must be refused.  rl NULL: no limit. */
int64_t
serve_rate_take(struct serve_rate *rl, const char *session)
{
	int64_t now = mono_ms(), wait_s = 0;
	struct bucket *b;

	if (rl == NULL)
		return 0;
	pthread_mutex_lock(&rl->mu);
	if (now - rl->swept_ms >= RATE_SWEEP_MS)
		sweep(rl, now);
	b = bucket_get(rl, session, now);
	refill(rl, b, now);
	if (b->tokens >= 1.0)
		b->tokens -= 1.0;
	else /* rounded up: a client that waits that long gets through */
		wait_s = (int64_t)((1.0 - b->tokens) / rl->per_ms / 1000.0) + 1;
	pthread_mutex_unlock(&rl->mu);
	return wait_s;
}
