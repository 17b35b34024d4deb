/* failed_count.h -- the size of the dead letter. */
#ifndef JOBQ_FAILED_COUNT_H
#define JOBQ_FAILED_COUNT_H

#include <stdint.h>

#include "db.h"

int failed_count(struct db *db, uint64_t *n, char *err);

#endif
