/* serve_auth.h -- sessions, logins, CSRF: what the router checks before a
 * handler runs, and the login, logout and "who am I" endpoints. */
#ifndef JOBQ_SERVE_AUTH_H
#define JOBQ_SERVE_AUTH_H

#include "serve_http.h"

int serve_auth_init(struct serve *s);
int serve_session(struct req *r);
int serve_csrf_ok(struct req *r);
MHD_RESULT api_login(struct req *r);
MHD_RESULT api_logout(struct req *r);
MHD_RESULT api_me(struct req *r);

#endif
