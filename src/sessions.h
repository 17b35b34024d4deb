/* sessions.h -- the dashboard's sessions in the database (jobq_sessions),
 * as both `jobq serve` and `jobq sessions` see them. */
#ifndef JOBQ_SESSIONS_H
#define JOBQ_SESSIONS_H

#include <stddef.h>
#include <stdint.h>

#include "conf.h"
#include "db.h"

#define SESSIONS_TAG_LEN 64

/* The live sessions of one user. */
struct sessions_user {
	char *user;
	uint64_t count;
	char *last_login; /* UTC, "YYYY-MM-DD HH:MM:SS" */
	char *last_address;
};

void sessions_tag(const char *password_hash, char *tag);
int sessions_tag_ok(const char *password_hash, const char *tag);
const char *sessions_user_hash(const struct conf *c, const char *user, const char *db_hash);
int sessions_end_user(struct db *db, const char *user, uint64_t *ended, char *err);
/* sessions_end_user on name, as audit_tx runs it in the transaction of
 * its audit row (sessions_end_act), which writes the row's detail ("user
 * NAME: N sessions") into detail, len bytes, once it knows N. */
struct sessions_end {
	const char *name;
	uint64_t n;
	char *detail;
	size_t len;
};
int sessions_end_act(struct db *db, void *arg, char *err);
int sessions_end_stale(struct db *db, const struct conf *c, const char *address, char *err);
int sessions_list(struct db *db, struct sessions_user **list, size_t *n, char *err);
void sessions_list_free(struct sessions_user *list, size_t n);

#endif
