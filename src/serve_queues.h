/* serve_queues.h -- pause and resume, as `jobq pause|resume`. */
#ifndef JOBQ_SERVE_QUEUES_H
#define JOBQ_SERVE_QUEUES_H

#include "serve_http.h"

MHD_RESULT api_queue_pause(struct req *r);
MHD_RESULT api_queue_resume(struct req *r);

#endif
