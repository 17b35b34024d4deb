/* serve_limit.h -- the login rate limit per address and per name, counted
 * before a password is checked (serve_limit.c). */
#ifndef JOBQ_SERVE_LIMIT_H
#define JOBQ_SERVE_LIMIT_H

#include "serve_http.h"

int serve_limit_reserve(struct req *r, const char *name, uint64_t *id, int64_t *retry_s, char *err);
void serve_limit_release(struct req *r, uint64_t id);

#endif
