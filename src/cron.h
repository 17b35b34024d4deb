/* cron.h -- five-field cron expressions: parse and match (cron.c), next
 * fire time in a time zone (cron_next.c, on cron_zone.c), and an English
 * description (cron_describe.c). */
#ifndef JOBQ_CRON_H
#define JOBQ_CRON_H

#include <stddef.h>
#include <stdint.h>

struct cron;
struct cron_zone;

/* cron_next results */
#define CRON_FOUND 0
#define CRON_NEVER 1

struct cron *cron_parse(const char *expr, char *err);
void cron_free(struct cron *c);
int cron_matches(const struct cron *c, int min, int hour, int mday, int mon, int wday);
int cron_is_wildcard(const struct cron *c);
int cron_never(const struct cron *c);
char *cron_describe(const struct cron *c);

struct cron_zone *cron_zone_open(const char *name, char *err);
void cron_zone_free(struct cron_zone *z);
const char *cron_zone_name(const struct cron_zone *z);
int cron_next(const struct cron *c, const struct cron_zone *z, int64_t after, int64_t *next);
void cron_format(const struct cron_zone *z, int64_t t, char *out, size_t outlen);
int cron_parse_time(const struct cron_zone *z, const char *s, int64_t *out, char *err);

#endif
