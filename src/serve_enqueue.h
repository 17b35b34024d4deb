/* serve_enqueue.h -- the enqueue form and POST /api/enqueue. */
#ifndef JOBQ_SERVE_ENQUEUE_H
#define JOBQ_SERVE_ENQUEUE_H

#include "serve_http.h"

MHD_RESULT api_enqueue_form(struct req *r);
MHD_RESULT api_enqueue(struct req *r);

#endif
