/* serve_groups.h -- groups of jobs on the dashboard, as `jobq group
 * show`. */
#ifndef JOBQ_SERVE_GROUPS_H
#define JOBQ_SERVE_GROUPS_H

#include "groups.h"
#include "serve_http.h"

MHD_RESULT api_groups(struct req *r);
MHD_RESULT api_group(struct req *r);
cJSON *serve_groups_rows(const struct group_row *g, size_t n);

#endif
