/* serve_workers.h -- GET /api/workers. */
#ifndef JOBQ_SERVE_WORKERS_H
#define JOBQ_SERVE_WORKERS_H

#include "serve_http.h"

MHD_RESULT api_workers(struct req *r);

#endif
