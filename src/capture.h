/* capture.h -- keep the head and the tail of a stream in bounded memory. */
#ifndef JOBQ_CAPTURE_H
#define JOBQ_CAPTURE_H

#include <stddef.h>
#include <stdint.h>

#include "util.h"

struct capture;

struct capture *capture_new(size_t limit);
void capture_free(struct capture *c);
void capture_add(struct capture *c, const char *data, size_t len);
uint64_t capture_total(const struct capture *c);
char *capture_text(const struct capture *c);
size_t capture_stored_max(size_t limit);

#endif
