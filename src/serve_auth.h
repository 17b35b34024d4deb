/* serve_auth.h -- sessions and CSRF: what the router checks before a
 * handler runs, opening a session, and the logout and "who am I"
 * endpoints (the login itself: serve_login.h). */
#ifndef JOBQ_SERVE_AUTH_H
#define JOBQ_SERVE_AUTH_H

#include "audit.h"
#include "serve_http.h"

/* The check a long admin action makes before each job (before each
 * chunk of a clear): the request's session still open, its user still
 * an admin, as the router's guard found when the request began.  Once
 * it refused, refused holds the answer's status: 403 the admin role was
 * taken away, 401 the session ended (logged out, the user removed or
 * given a new password), 503 the database could not be reached to look,
 * 500 the session could not be looked up. */
struct serve_still {
	struct req *r;
	unsigned refused;
	struct audit_still check;
};

int serve_auth_init(struct serve *s);
int serve_session(struct req *r);
int serve_csrf_ok(struct req *r);
const struct audit_still *serve_still_admin(struct serve_still *s, struct req *r);
MHD_RESULT serve_still_answer(struct req *r, const struct serve_still *s, int rc, const char *err, cJSON *doc);
int serve_session_open(
    struct req *r, const struct user_rec *u, int remember, char *cookie, size_t len, char *err);
cJSON *serve_me_doc(struct req *r);
MHD_RESULT api_logout(struct req *r);
MHD_RESULT api_me(struct req *r);

#endif
