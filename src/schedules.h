/* schedules.h -- the one list of schedules: [schedule NAME] sections of
 * the INI and rows of jobq_schedules, with the on/off switches kept in
 * jobq_schedule_state; and the clock they are judged by. */
#ifndef JOBQ_SCHEDULES_H
#define JOBQ_SCHEDULES_H

#include <stddef.h>

#include "conf.h"
#include "db.h"

/* schedules_add/update/remove/switch: no such schedule */
#define SCHEDULES_NOT_FOUND 2
/* schedules_add: the name is taken */
#define SCHEDULES_EXISTS 4
/* schedules_add/remove: the name is an INI schedule's */
#define SCHEDULES_IN_INI 5
/* schedules_add: a bad name, or no cron or type (err says which) */
#define SCHEDULES_INVALID 6

int schedules_load(const struct conf *c, struct db *db, struct schedule ***out, size_t *n, char *err);
void schedules_free(struct schedule **v, size_t n);
const struct schedule *schedules_find(struct schedule *const *v, size_t n, const char *name);
const struct schedule *schedules_ini(const struct conf *c, const char *name);
int schedules_add(const struct conf *c, struct db *db, struct schedule *s, char *err);
int schedules_add_tx(const struct conf *c, struct db *db, struct schedule *s, char *err);
int schedules_update(struct db *db, const struct schedule *s, char *err);
int schedules_remove(const struct conf *c, struct db *db, const char *name, char *err);
struct audit_entry;
int schedules_remove_audited(
    const struct conf *c, struct db *db, const char *name, const struct audit_entry *a, char *err);
int schedules_ini_off(const struct schedule *s);
int schedules_switch(struct db *db, const char *name, int enabled, char *err);
int schedules_checked(struct db *db, const char *name, const char *until, int ini_on, char *err);
/* How far the ticks have looked at a schedule (schedules_checked_until). */
struct schedule_checked {
	int64_t until;  /* the later of checked_until and its last timed fire */
	int64_t ticked; /* checked_until alone */
	int found;      /* 0: never looked at, never fired */
	int has_state;  /* its jobq_schedule_state row exists */
	int ini_off;    /* the last tick read enabled = no in its file */
};
int schedules_checked_until(struct db *db, const char *name, struct schedule_checked *ck, char *err);
void schedules_fire_guard(struct db *db, struct buf *b, const struct schedule *s, int manual);
int schedules_state_row(struct db *db, const char *name, char *err);
int schedules_now(struct db *db, int64_t *now, char *err);
int schedules_clock_check(char *err);
int schedules_prune(struct db *db, int64_t older_ms, int count_only, uint64_t *removed, char *err);
const char *schedules_catch_up_name(enum catch_up m);
int schedules_orphans(
    struct db *db, struct schedule *const *v, size_t n, char ***out, size_t *nout, char *err);
int schedules_orphans_checked(struct db *db, char *const *names, size_t n, const char *until, char *err);
int schedules_watched_since(struct db *db, const char *name, const char *now_utc, int64_t *since, char *err);

#endif
