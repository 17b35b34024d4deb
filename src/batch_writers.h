/* batch_writers.h -- the threads that write the chunks of `jobq enqueue
 * --batch`, one connection each, committing in input order (see
 * batch_writers.c). */
#ifndef JOBQ_BATCH_WRITERS_H
#define JOBQ_BATCH_WRITERS_H

#include "queue.h"

#define BATCH_WRITERS_MAX 2

/* One chunk as a writer takes it: the lines after p.lines_done through
 * to_line, as n items; rc and err say how it went once it is settled. */
struct batch_piece {
	struct batch_progress p;
	uint64_t to_line;
	const struct enqueue_item *items;
	size_t n;
	int rc;
	unsigned long session; /* the server's id of the connection that wrote it */
	char err[ERRSZ];
};

struct batch_writers;

struct batch_writers *batch_writers_start(struct db **db, size_t n, const char *key, uint64_t gid);
void batch_writers_submit(struct batch_writers *w, struct batch_piece *piece);
struct batch_piece *batch_writers_settled(struct batch_writers *w);
size_t batch_writers_count(const struct batch_writers *w);
void batch_writers_stop(struct batch_writers *w);

#endif
