/* serve_metrics.h -- GET /metrics in the Prometheus text format. */
#ifndef JOBQ_SERVE_METRICS_H
#define JOBQ_SERVE_METRICS_H

#include "serve_http.h"

MHD_RESULT serve_metrics(struct req *r);

#endif
