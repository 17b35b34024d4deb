/* listen.h -- a listening TCP socket for an HTTP server. */
#ifndef JOBQ_LISTEN_H
#define JOBQ_LISTEN_H

#include <stddef.h>

#include "util.h"

int listen_open(const char *listen_at, char *bound, size_t boundlen, char *err);

#endif
