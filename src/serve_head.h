/* serve_head.h -- checks on a request's head before any route
 * (serve_head.c). */
#ifndef JOBQ_SERVE_HEAD_H
#define JOBQ_SERVE_HEAD_H

#include "serve_http.h"

int serve_head_url_has_nul(const char *raw);
unsigned serve_head_check(struct req *r, const char **msg);
uint64_t serve_head_declared_length(struct req *r);

#endif
