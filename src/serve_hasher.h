/* serve_hasher.h -- the one thread of `jobq serve` that verifies
 * password hashes, and its short queue of suspended logins. */
#ifndef JOBQ_SERVE_HASHER_H
#define JOBQ_SERVE_HASHER_H

#include "serve_http.h"

/* How many logins may wait for (or be in) a verification at once. */
#define SERVE_HASHER_SLOTS 4

/* What a login hands to the thread and gets back. */
struct login_check {
	char name[NAME_MAX_LEN + 1];
	char addr[64];       /* the client's: one slot per address at a time */
	char hash[160];      /* the user's argon2id hash, or the dummy one */
	char password[1024]; /* wiped once verified */
	uint64_t failure_id; /* its reserved row of jobq_login_failures */
	int remember;
	unsigned char body_sha[32]; /* of the request: tells a reused connection apart */
	int good;                   /* set by the thread: the password matched */
};

int serve_hasher_start(void);
int serve_hasher_has_room(const char *addr);
int serve_hasher_submit(struct MHD_Connection *conn, const struct login_check *in);
int serve_hasher_take(struct MHD_Connection *conn, const unsigned char *body_sha, struct login_check *out);
void serve_hasher_stop(void);

#endif
