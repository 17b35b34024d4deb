/* final.h -- jobs that end without a handler's word: cancelled while no
 * worker ran them, or expired before they started (DESIGN 5b). */
#ifndef JOBQ_FINAL_H
#define JOBQ_FINAL_H

#include <stdint.h>

#include "db.h"
#include "util.h"

/* Rows of jobs the sweep finalizes in one transaction at most. */
#define FINAL_SWEEP_MAX 500

void final_sql(struct db *db, struct buf *sql, const char *by, const char *cond);
int final_cascade(struct db *db, const char *by, int skip_locked, const char *ids, uint64_t n[2], char *err);
int final_sweep(struct db *db, const char *by, int skip_locked, uint64_t only_id, uint64_t n[2], char *err);

#endif
