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

/* A payload text is found only by reading the payloads: such a search
 * reads one window at a time, the ids up to where each place has had
 * this many rows (the runs of a done job count one each), and the caller
 * goes on from the window's end ("searched up to id N").  So a request
 * reads at most this many rows of each place however sparse or dense
 * the ids: about 30 ms on a 2-core machine. */
#define SEARCH_TEXT_WINDOW 15000

/* A page: its rows, and where the next one starts (0: this is the last). */
struct search_page {
	struct search_row *rows;
	size_t n;
	uint64_t next_after;
	uint64_t searched_to; /* a text search that stopped at its window: the last id read; else 0 */
};

struct search_row {
	uint64_t id;
	char *state, *queue, *type;
	unsigned attempts;
	char *created_at; /* UTC; NULL when a done job's runs did not keep it */
	char *ended_at;   /* done or dead: when; else NULL */
};

int search_state_valid(const char *state);
int search_jobs(struct db *db, const struct search_filter *f, struct search_page *p, char *err);
void search_page_free(struct search_page *p);

#endif
