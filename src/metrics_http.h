/* metrics_http.h -- a worker's /metrics, served on a thread of its own. */
#ifndef JOBQ_METRICS_HTTP_H
#define JOBQ_METRICS_HTTP_H

#include <stddef.h>

/* The most descriptors the server holds: its connections, the listening
 * socket, its poll set and wakeup pipe. */
#define METRICS_HTTP_CONNS 16
#define METRICS_HTTP_FDS (METRICS_HTTP_CONNS + 4)

struct metrics_http;

struct metrics_http *metrics_http_start(const char *listen_at, const char *token, char *bound, size_t boundlen,
    char *err);
void metrics_http_stop(struct metrics_http *h);

#endif
