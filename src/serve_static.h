/* serve_static.h -- the pages and the static files. */
#ifndef JOBQ_SERVE_STATIC_H
#define JOBQ_SERVE_STATIC_H

#include "serve_http.h"

MHD_RESULT serve_static(struct req *r);
MHD_RESULT serve_page(struct req *r);

#endif
