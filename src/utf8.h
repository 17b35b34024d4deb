/* utf8.h -- make arbitrary bytes into valid UTF-8 text. */
#ifndef JOBQ_UTF8_H
#define JOBQ_UTF8_H

#include <stddef.h>
#include <stdint.h>

#include "util.h"

void utf8_repair(const char *in, size_t len, struct buf *out);
size_t utf8_valid_prefix(const char *s, size_t len);
size_t utf8_decode(const char *s, size_t avail, uint32_t *cp);
char *utf8_shorten(
    const char *s, size_t len, size_t max, size_t (*cost)(const char *, size_t), const char *why);

#endif
