/* cron.h -- five-field cron expressions. */
#ifndef JOBQ_CRON_H
#define JOBQ_CRON_H

#include <stdint.h>

struct cron;

struct cron *cron_parse(const char *expr, char *err);
void cron_free(struct cron *c);
int cron_matches(const struct cron *c, int min, int hour, int mday, int mon, int wday);

#endif
