/* timefmt.h -- every time jobq prints: one format for people, one for
 * programs. */
#ifndef JOBQ_TIMEFMT_H
#define JOBQ_TIMEFMT_H

#include <stddef.h>
#include <stdint.h>

struct timefmt;

/* Room for the longest timefmt_human text. */
#define TIMEFMT_HUMAN_MAX 80

struct timefmt *timefmt_new(const char *zone, int64_t now_ms, char *err);
void timefmt_free(struct timefmt *f);
const char *timefmt_human_at(const struct timefmt *f, int64_t t_ms, int rel, char *out, size_t len);
const char *timefmt_human(const struct timefmt *f, const char *utc, int rel, char *out, size_t len);
void timefmt_relative(int64_t ms, char *out, size_t len);
char *timefmt_json(const char *utc);

#endif
