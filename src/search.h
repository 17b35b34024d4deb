/* search.h -- every job the database knows, whatever its state: queued
 * (jobs), dead (failed_jobs) and done (kept as its runs), found by the
 * same filters and paged by id. */
#ifndef JOBQ_SEARCH_H
#define JOBQ_SEARCH_H

#include <stddef.h>
#include <stdint.h>

#include "db.h"

struct search_filter {
	const char *state;      /* ready, delayed, reserved, stale, queued, done, dead; NULL: any */
	const char *queue;      /* NULL: any */
	const char *type;       /* NULL: any */
	const char *unique_key; /* NULL: any (done jobs keep none: none of them match one) */
	const char *text;       /* in the payload, case-insensitive; NULL: any */
	const char *since;      /* created at or after, UTC "YYYY-MM-DD HH:MM:SS[.ffffff]"; NULL */
	const char *until;      /* created before; NULL */
	uint64_t after_id;      /* keyset: ids above this one */
	unsigned limit;         /* 1..500 */
};

struct search_row {
	uint64_t id;
	char *state, *queue, *type;
	unsigned attempts;
	char *created_at; /* UTC; NULL when a done job's runs did not keep it */
	char *ended_at;   /* done or dead: when; else NULL */
};

int search_state_valid(const char *state);
int search_jobs(struct db *db, const struct search_filter *f, struct search_row **rows, size_t *n, char *err);
void search_rows_free(struct search_row *rows, size_t n);

#endif
