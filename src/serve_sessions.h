/* serve_sessions.h -- the admin's view of who is logged in, and ending a
 * user's sessions (serve_sessions.c). */
#ifndef JOBQ_SERVE_SESSIONS_H
#define JOBQ_SERVE_SESSIONS_H

#include "serve_http.h"

MHD_RESULT api_sessions(struct req *r);
MHD_RESULT api_sessions_end(struct req *r);

#endif
