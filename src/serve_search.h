/* serve_search.h -- the history search's endpoint (serve_search.c). */
#ifndef JOBQ_SERVE_SEARCH_H
#define JOBQ_SERVE_SEARCH_H

#include "serve_http.h"

MHD_RESULT api_search(struct req *r);

#endif
