/* enqueue_batch.h -- `jobq enqueue --batch`: many jobs from stdin, all
 * checked before any is written, then committed in resumable chunks
 * (see enqueue_batch.c). */
#ifndef JOBQ_ENQUEUE_BATCH_H
#define JOBQ_ENQUEUE_BATCH_H

#include "batch.h"
#include "db.h"

int enqueue_batch_run(const struct batch_ctx *ctx, struct db *db, const char *key, int dry_run);

#endif
