/* serve_auth.h -- sessions and CSRF: what the router checks before a
 * handler runs, opening a session, and the logout and "who am I"
 * endpoints (the login itself: serve_login.h). */
#ifndef JOBQ_SERVE_AUTH_H
#define JOBQ_SERVE_AUTH_H

#include "serve_http.h"

int serve_auth_init(struct serve *s);
int serve_session(struct req *r);
int serve_csrf_ok(struct req *r);
int serve_session_open(
    struct req *r, const struct user_rec *u, int remember, char *cookie, size_t len, char *err);
cJSON *serve_me_doc(struct req *r);
MHD_RESULT api_logout(struct req *r);
MHD_RESULT api_me(struct req *r);

#endif
