/* serve_schedules.h -- the Schedules page; every call into the cron
 * module's time-zone code is serialised by one mutex there. */
#ifndef JOBQ_SERVE_SCHEDULES_H
#define JOBQ_SERVE_SCHEDULES_H

#include "serve_http.h"

void serve_schedules_init(void);
MHD_RESULT api_schedules(struct req *r);
MHD_RESULT api_schedule_history(struct req *r);
MHD_RESULT api_schedule_enable(struct req *r);
MHD_RESULT api_schedule_disable(struct req *r);
MHD_RESULT api_schedule_run_now(struct req *r);
MHD_RESULT api_schedule_add(struct req *r);
MHD_RESULT api_schedule_edit(struct req *r);
MHD_RESULT api_schedule_remove(struct req *r);
MHD_RESULT api_cron_preview(struct req *r);

#endif
