/* serve_login.h -- POST /api/login (serve_login.c). */
#ifndef JOBQ_SERVE_LOGIN_H
#define JOBQ_SERVE_LOGIN_H

#include "serve_http.h"

MHD_RESULT api_login(struct req *r);

#endif
