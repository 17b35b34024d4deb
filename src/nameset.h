/* nameset.h -- a set of names, each with a number (nameset.c): hashed,
 * so that the configuration's duplicate checks and lookups cost the same
 * for the 100,000th name as for the first. */
#ifndef JOBQ_NAMESET_H
#define JOBQ_NAMESET_H

#include <stddef.h>

#define NAMESET_NONE ((size_t)-1)

struct nameset;

struct nameset *nameset_new(void);
void nameset_free(struct nameset *s);
size_t nameset_add(struct nameset *s, const char *name, size_t value);
size_t nameset_get(const struct nameset *s, const char *name);

#endif
