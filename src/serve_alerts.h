/* serve_alerts.h -- GET /api/alerts. */
#ifndef JOBQ_SERVE_ALERTS_H
#define JOBQ_SERVE_ALERTS_H

#include "serve_http.h"

MHD_RESULT api_alerts(struct req *r);

#endif
