/* serve.h -- the dashboard (`jobq serve`) as `jobq serve` starts it: the
 * top of its files (serve.c, the route table and the daemon), over the
 * page handlers (serve_*.c, each with its own header) and the HTTP layer
 * below them (serve_http.h). */
#ifndef JOBQ_SERVE_H
#define JOBQ_SERVE_H

#include "conf.h"

int serve_run(const struct conf *c, const char *listen, char *err);

#endif
