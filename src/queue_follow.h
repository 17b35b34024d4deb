/* queue_follow.h -- follow-ups that wait for other jobs, written in
 * their parent's outcome transaction (queue_follow.c). */
#ifndef JOBQ_QUEUE_FOLLOW_H
#define JOBQ_QUEUE_FOLLOW_H

#include "db.h"
#include "queue.h"

/* follow_begin's answers besides DB_OK and the DB_* errors. */
#define FOLLOW_LOST 101
#define FOLLOW_REBUILD 102

int follow_waits(const struct outcome *o);
int follow_begin(struct db *db, const struct outcome *o, char *err);

#endif
