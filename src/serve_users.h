/* serve_users.h -- the Users page's changes: add, remove, change the
 * role or the password of a user kept in the database (serve_users.c). */
#ifndef JOBQ_SERVE_USERS_H
#define JOBQ_SERVE_USERS_H

#include "serve_http.h"

MHD_RESULT api_user_add(struct req *r);
MHD_RESULT api_user_role(struct req *r);
MHD_RESULT api_user_password(struct req *r);
MHD_RESULT api_user_remove(struct req *r);

#endif
