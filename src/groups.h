/* groups.h -- groups of jobs with callbacks (sql/023-groups.sql): the
 * count each ending job adds, the callbacks of a complete group, and
 * what `jobq group show` prints. */
#ifndef JOBQ_GROUPS_H
#define JOBQ_GROUPS_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "db.h"
#include "util.h"

/* The longest group name (jobq_groups.name), in characters. */
#define GROUPS_NAME_MAX 128

/* groups_open's and groups_add_sql's callers' answer when the group has
 * completed (no job may join it any more), and when it exists with
 * other callbacks. */
#define GROUPS_ECLOSED 3
#define GROUPS_EDIFFER 4

/* A group as `jobq enqueue --group` names it. */
struct group_spec {
	const char *name;
	const char *on_complete, *complete_queue; /* NULL: no such callback */
	const char *on_success, *success_queue;
};

/* A group as `jobq group show` prints it. */
struct group_view {
	uint64_t id;
	char name[GROUPS_NAME_MAX * 4 + 1];
	char on_complete[65], on_success[65];
	uint64_t total, holds, done, dead, cancelled, expired;
	uint64_t complete_job, success_job;         /* 0: not enqueued */
	char created_at[32], ended_at[32];          /* ended_at "": open */
	char complete_state[32], success_state[32]; /* of the callback jobs, "" when none */
	/* 1: the callback job ended dead and was forgotten from the dead
	 * letter since (its state "dead"; jobq show calls it forgotten) */
	int complete_forgotten, success_forgotten;
	/* Its jobs still queued, by state (ready, delayed, waiting,
	 * reserved, stale: QUEUED_STATES). */
	uint64_t queued[5];
};

/* A group as the dashboard's list of groups shows it. */
struct group_row {
	uint64_t id;
	char *name;
	uint64_t total, done, dead, cancelled, expired;
	char created_at[32], ended_at[32]; /* UTC; ended_at "": open */
};

/* The most bytes groups_tally_sql and a group's share of
 * groups_tally_reset_sql append. */
#define GROUPS_TALLY_MAX 4096

/* The most groups groups_list answers with. */
#define GROUPS_LIST_MAX 200

/* A waiting job of a group and the jobs it waits for ("12,13"). */
struct group_wait {
	uint64_t id;
	uint64_t *after; /* the jobs it still waits for, by id */
	size_t nafter;
};

int groups_name_check(const char *name, char *err);
int groups_open(struct db *db, const struct group_spec *g, uint64_t *id, char *err);
int groups_open_alone(struct db *db, const struct group_spec *g, uint64_t *id, char *err);
int groups_drop_empty(struct db *db, uint64_t id, char *err);
void groups_add_sql(struct db *db, struct buf *sql, uint64_t id, uint64_t n, int hold, int release);
size_t groups_join_sql(struct db *db, struct buf *sql, const struct group_spec *g, const char *guard);
size_t groups_ended_sql(struct db *db, struct buf *sql, const char *gid, const char *how, const char *guard);
void groups_tally_var(char *out, size_t len, uint64_t gid, const char *how);
size_t groups_tally_reset_sql(struct db *db, struct buf *sql, const uint64_t *gid, size_t n);
size_t groups_tally_sql(struct db *db, struct buf *sql, uint64_t gid);
size_t groups_settle_sql(struct db *db, struct buf *sql, const char *gid, const char *guard);
int groups_show(struct db *db, const char *id_or_name, unsigned max, struct group_view *v, int *found,
    struct group_wait **w, size_t *n, char *err);
void groups_waiting_free(struct group_wait *w, size_t n);
int groups_list(struct db *db, const char *prefix, uint64_t before, unsigned limit, struct group_row **rows,
    size_t *n, char *err);
void groups_list_free(struct group_row *rows, size_t n);
cJSON *groups_json(const struct group_view *v, const struct group_wait *w, size_t nw);

#endif
