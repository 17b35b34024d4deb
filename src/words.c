/* words.c -- split `exec =` into an argv, like sh(1) splits words.
 *
 * Supported: blanks separate words; 'single quotes' keep everything
 * literally; "double quotes" keep everything but \" \\ \$ \` which lose
 * their backslash; a backslash outside quotes keeps the next character.
 * Nothing is expanded: no $VARIABLES, no globs, no ~, no command
 * substitution.  The result is executed directly, never through a shell,
 * so these rules are the whole story. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "words.h"

static void
push_word(char ***v, size_t *n, struct buf *w)
{
	*v = xrealloc(*v, (*n + 2) * sizeof **v);
	(*v)[(*n)++] = buf_steal(w);
	(*v)[*n] = NULL;
}

/* Returns a NULL-terminated argv (free with strv_free), or NULL with a
 * message in err for an unterminated quote, a trailing backslash or an
 * empty line. */
char **
words_split(const char *s, char *err)
{
	char **v = NULL;
	size_t n = 0;
	struct buf w;
	int in_word = 0;
	const char *p;

	buf_init(&w);
	for (p = s; *p != '\0'; p++) {
		if (*p == ' ' || *p == '\t' || *p == '\n') {
			if (in_word)
				push_word(&v, &n, &w);
			in_word = 0;
			continue;
		}
		in_word = 1;
		if (*p == '\'') {
			const char *q = strchr(p + 1, '\'');

			if (q == NULL) {
				errf(err, "unterminated single quote in '%s'", s);
				goto fail;
			}
			buf_add(&w, p + 1, (size_t)(q - p - 1));
			p = q;
		} else if (*p == '"') {
			for (p++; *p != '"'; p++) {
				if (*p == '\0') {
					errf(err, "unterminated double quote in '%s'", s);
					goto fail;
				}
				if (*p == '\\' && p[1] != '\0' && strchr("\"\\$`", p[1]) != NULL)
					p++;
				buf_addc(&w, *p);
			}
		} else if (*p == '\\') {
			if (p[1] == '\0') {
				errf(err, "trailing backslash in '%s'", s);
				goto fail;
			}
			buf_addc(&w, *++p);
		} else
			buf_addc(&w, *p);
	}
	if (in_word)
		push_word(&v, &n, &w);
	if (n == 0) {
		errf(err, "empty command");
		goto fail;
	}
	buf_free(&w);
	return v;
fail:
	buf_free(&w);
	strv_free(v);
	return NULL;
}
