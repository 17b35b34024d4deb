/* nameset.c -- a set of names, each with a number: open addressing
 * with linear probing, the table doubled before it is half full.  The
 * names are borrowed: each must outlive the set unchanged (they are the
 * configuration's own strings). */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nameset.h"
#include "util.h"

struct slot {
	const char *name; /* NULL: empty */
	size_t value;
};

struct nameset {
	struct slot *slots;
	size_t cap; /* a power of two */
	size_t n;
};

/* FNV-1a, 64 bits: short names, spread well enough for probing. */
static uint64_t
hash(const char *s)
{
	uint64_t h = 14695981039346656037ULL;

	for (; *s != '\0'; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

/* The slot of name, or the empty one where it would go. */
static struct slot *
find(const struct nameset *s, const char *name)
{
	size_t i = (size_t)hash(name) & (s->cap - 1);

	while (s->slots[i].name != NULL && strcmp(s->slots[i].name, name) != 0)
		i = (i + 1) & (s->cap - 1);
	return &s->slots[i];
}

/* An empty set. */
struct nameset *
nameset_new(void)
{
	struct nameset *s = xcalloc(1, sizeof *s);

	s->cap = 16;
	s->slots = xcalloc(s->cap, sizeof *s->slots);
	return s;
}

/* Frees s (not the names); NULL is allowed. */
void
nameset_free(struct nameset *s)
{
	if (s == NULL)
		return;
	free(s->slots);
	free(s);
}

/* Doubles the table, every name moved to its new slot. */
static void
grow(struct nameset *s)
{
	struct slot *old = s->slots;
	size_t oldcap = s->cap, i;

	s->cap *= 2;
	s->slots = xcalloc(s->cap, sizeof *s->slots);
	for (i = 0; i < oldcap; i++)
		if (old[i].name != NULL)
			*find(s, old[i].name) = old[i];
	free(old);
}

/* Adds name with value, unless the set holds it: returns NAMESET_NONE
 * when added, else the value it was first added with (kept). */
size_t
nameset_add(struct nameset *s, const char *name, size_t value)
{
	struct slot *slot;

	if ((s->n + 1) * 2 > s->cap)
		grow(s);
	slot = find(s, name);
	if (slot->name != NULL)
		return slot->value;
	slot->name = name;
	slot->value = value;
	s->n++;
	return NAMESET_NONE;
}

/* The value of name, or NAMESET_NONE when the set does not hold it. */
size_t
nameset_get(const struct nameset *s, const char *name)
{
	const struct slot *slot = find(s, name);

	return slot->name != NULL ? slot->value : NAMESET_NONE;
}
