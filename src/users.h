/* users.h -- the dashboard's users: the [user NAME] sections of jobq.ini
 * and the rows of jobq_users, as one list. */
#ifndef JOBQ_USERS_H
#define JOBQ_USERS_H

#include <stddef.h>

#include "conf.h"
#include "db.h"

/* Returned (beside the DB_* codes) when the name is not a user, and
 * when the change cannot be made to it (a name of jobq.ini, an existing
 * name); err says which. */
#define USERS_NOT_FOUND 2
#define USERS_CONFLICT 3

struct user_rec {
	char name[NAME_MAX_LEN + 1];
	char hash[160]; /* argon2id, as jobq passwd makes (the size of the hasher's) */
	int admin;
	int in_db;              /* 0: a [user] section of jobq.ini */
	char created_at[32];    /* in_db: UTC, "YYYY-MM-DD HH:MM:SS"; else "" */
	char created_by[NAME_MAX_LEN + 8];
};

const char *users_bad_name(const char *name);
int users_role(const char *role);
int users_find(struct db *db, const struct conf *c, const char *name, struct user_rec *u, char *err);
int users_list(struct db *db, const struct conf *c, struct user_rec **list, size_t *n, char *err);
int users_add(struct db *db, const struct conf *c, const struct user_rec *u, char *err);
int users_set_role(struct db *db, const struct conf *c, const char *name, int admin, char *err);
int users_changeable(struct db *db, const struct conf *c, const char *name, char *err);
int users_set_hash(struct db *db, const struct conf *c, const char *name, const char *hash, char *err);
int users_remove(struct db *db, const struct conf *c, const char *name, char *err);

/* One change of a table user, as audit_tx runs it in the transaction of
 * its audit row (users_change_act): the change `jobq user` and the
 * dashboard's Users page make, with its row, both or neither. */
enum users_op { USERS_ADD, USERS_ROLE, USERS_HASH, USERS_REMOVE };
struct users_change {
	const struct conf *conf;
	enum users_op op;
	const char *name;
	const struct user_rec *u; /* USERS_ADD */
	int admin;                /* USERS_ROLE */
	const char *hash;         /* USERS_HASH */
};
int users_change_act(struct db *db, void *arg, char *err);

#endif
