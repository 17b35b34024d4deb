/* serve_auditlog.h -- the admins' view of the whole audit trail
 * (serve_auditlog.c). */
#ifndef JOBQ_SERVE_AUDITLOG_H
#define JOBQ_SERVE_AUDITLOG_H

#include "serve_http.h"

MHD_RESULT api_audit(struct req *r);

#endif
