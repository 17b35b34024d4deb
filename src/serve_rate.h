/* serve_rate.h -- the API rate limit per session of `jobq serve`: a
 * token bucket each, in memory (serve_rate.c). */
#ifndef JOBQ_SERVE_RATE_H
#define JOBQ_SERVE_RATE_H

#include <stdint.h>

#include "conf.h"

struct serve_rate;

struct serve_rate *serve_rate_new(const struct serve_conf *conf);
void serve_rate_free(struct serve_rate *rl);
int64_t serve_rate_take(struct serve_rate *rl, const char *session);

#endif
