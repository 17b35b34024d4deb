/* serve_bulk.h -- bulk actions on a filter: POST /api/bulk/count and
 * POST /api/bulk. */
#ifndef JOBQ_SERVE_BULK_H
#define JOBQ_SERVE_BULK_H

#include "serve_http.h"

unsigned serve_bulk_names(struct req *r, cJSON *in, const char **queue, const char **type, const char **msg);
MHD_RESULT api_bulk_count(struct req *r);
MHD_RESULT api_bulk(struct req *r);

#endif
