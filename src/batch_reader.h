/* batch_reader.h -- the input of `jobq enqueue --batch`, line by line
 * (batch_reader.c). */
#ifndef JOBQ_BATCH_READER_H
#define JOBQ_BATCH_READER_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "util.h"

struct reader {
	FILE *in;
	FILE *copy; /* pass 1 of a pipe: every byte read is written here too */
	char *block;
	size_t pos, end;
	struct buf line;
	size_t max;      /* a longer line is skipped (too_long) */
	int too_long;    /* the last line was longer than max */
	int error;       /* errno of a failed read or write, 0 if none */
	int read_error;  /* the failure was the input's read (not the copy's write) */
	uint64_t lineno; /* of the last line returned, 1-based */
	uint64_t hash;   /* FNV-1a of every byte read */
};

void reader_init(struct reader *r, FILE *in, FILE *copy, size_t max);
void reader_free(struct reader *r);
int reader_line(struct reader *r);
const char *reader_trimmed(const struct reader *r, size_t *len);
int reader_spool_open(FILE **spool, off_t *start);
int reader_rewind(FILE *spool, off_t start, FILE **in);

#endif
