/* serve_failed.h -- the dead letter: list, retry, forget, clear. */
#ifndef JOBQ_SERVE_FAILED_H
#define JOBQ_SERVE_FAILED_H

#include "serve_http.h"

MHD_RESULT api_failed(struct req *r);
MHD_RESULT api_failed_retry(struct req *r);
MHD_RESULT api_failed_retry_edited(struct req *r);
MHD_RESULT api_failed_forget(struct req *r);
MHD_RESULT api_failed_clear(struct req *r);

#endif
