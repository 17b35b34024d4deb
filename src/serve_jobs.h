/* serve_jobs.h -- the jobs list, one job, and the actions on one job. */
#ifndef JOBQ_SERVE_JOBS_H
#define JOBQ_SERVE_JOBS_H

#include "serve_http.h"

MHD_RESULT api_jobs(struct req *r);
MHD_RESULT api_job(struct req *r);
MHD_RESULT api_job_run_now(struct req *r);
MHD_RESULT api_job_release(struct req *r);
MHD_RESULT api_job_delete(struct req *r);
MHD_RESULT api_job_cancel(struct req *r);

#endif
