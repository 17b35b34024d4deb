/* park.h -- jobs a dead dependency cancelled, kept so that retrying it
 * re-opens them (sql/024-parked.sql). */
#ifndef JOBQ_PARK_H
#define JOBQ_PARK_H

#include <stddef.h>
#include <stdint.h>

#include "db.h"
#include "util.h"

/* park_reopen's answer when a job to re-open is held by a worker that
 * finalizes it now (err says until when): roll back, try again. */
#define PARK_EBUSY 7

size_t park_waiters_sql(struct db *db, struct buf *sql, uint64_t id, const char *how, const char *guard);
void park_job_sql(struct db *db, struct buf *sql, uint64_t id, uint64_t cause, const char *how, const uint64_t *deps,
    size_t n);
void park_unpark_sql(struct db *db, struct buf *sql, const char *ids);
int park_reopen(struct db *db, uint64_t id, uint64_t *n, char *err);
int park_drop(struct db *db, uint64_t id, char *err);
int park_drop_counted(struct db *db, uint64_t id, char *err);
int park_collect(struct db *db, uint64_t *dropped, char *err);

#endif
