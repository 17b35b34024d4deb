/* serve_overview.h -- GET /api/overview and its shared snapshot. */
#ifndef JOBQ_SERVE_OVERVIEW_H
#define JOBQ_SERVE_OVERVIEW_H

#include "serve_http.h"

MHD_RESULT api_overview(struct req *r);
int serve_overview_start(struct serve *s);
void serve_overview_stop(void);
void serve_overview_invalidate(void);

#endif
