/* cron_int.h -- what the parts of the cron module share: the fields of a
 * parsed expression (read through cron.c's accessors; struct cron stays
 * in cron.c) and the zone calls the next-fire search is built on
 * (cron_zone.c).  Private to cron*.c; the rest of jobq sees only cron.h. */
#ifndef JOBQ_CRON_INT_H
#define JOBQ_CRON_INT_H

#include <stdint.h>

#include "cron.h"

enum { F_MIN, F_HOUR, F_MDAY, F_MON, F_WDAY, NFIELDS };

uint64_t cron_field(const struct cron *c, int field);
int cron_field_star(const struct cron *c, int field);
int cron_day_matches(const struct cron *c, int mday, int mon, int wday);

/* The caller's TZ while a zone is entered; see cron_zone_enter() for
 * why, and why only one thread may do it. */
struct tz_saved {
	char *value;
	int was_set;
};

void cron_zone_enter(const struct cron_zone *z, struct tz_saved *s);
void cron_zone_leave(const struct cron_zone *z, struct tz_saved *s);
int64_t cron_zone_offset(const struct cron_zone *z, int64_t t);
int cron_zone_instants(const struct cron_zone *z, int64_t wall, int64_t u[2], int64_t *gap_end);
int cron_zone_fixed(const struct cron_zone *z);

#endif
