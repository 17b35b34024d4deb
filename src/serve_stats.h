/* serve_stats.h -- GET /api/stats and the roll-up thread behind it. */
#ifndef JOBQ_SERVE_STATS_H
#define JOBQ_SERVE_STATS_H

#include "serve_http.h"

MHD_RESULT api_stats(struct req *r);
int serve_stats_start(struct serve *s);
void serve_stats_stop(void);

#endif
