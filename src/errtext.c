/* errtext.c -- the one line that names a handler's error.
 *
 * Every list that shows an error in one line (jobq failed list, the
 * runs of jobq show, their --json, the dashboard) shows this line, and
 * only this function picks it.  The first line of stderr is often not
 * it: Python prints "Traceback (most recent call last):" first and the
 * error last; PHP may warn before its fatal error.  So:
 *   - a Python traceback: its last non-blank, unindented line
 *     ("ValueError: boom");
 *   - PHP: the first fatal line ("PHP Fatal error:  Uncaught ..."), else
 *     the first "PHP Warning:"-style line;
 *   - anything else: the first non-blank line.
 * A dead job whose handler wrote no such line (exit 65, stderr empty)
 * is summed up by the reason it was dead-lettered for, and a failed run
 * by how it ended ("exit 3": errtext_summary_or): a blank would hide why
 * it failed. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "errtext.h"
#include "utf8.h"
#include "util.h"

#define PY_HEADER "Traceback (most recent call last):"

/* One line of a text: [p, p + len), without its \r\n or \n. */
struct line {
	const char *p;
	size_t len;
};

/* The line at *s, and *s moved past it; 0 at the end of the text. */
static int
next_line(const char **s, struct line *l)
{
	const char *nl;

	if (**s == '\0')
		return 0;
	nl = strchr(*s, '\n');
	l->p = *s;
	l->len = nl ? (size_t)(nl - *s) : strlen(*s);
	*s = nl ? nl + 1 : *s + l->len;
	if (l->len > 0 && l->p[l->len - 1] == '\r')
		l->len--;
	return 1;
}

static int
blank(const struct line *l)
{
	size_t i;

	for (i = 0; i < l->len; i++)
		if (l->p[i] != ' ' && l->p[i] != '\t')
			return 0;
	return 1;
}

/* Whether l begins with prefix, or does after a "[exit 1] " tag (the
 * worker writes a retry's last_error so). */
static int
starts(const struct line *l, const char *prefix)
{
	size_t n = strlen(prefix);
	const char *tag = l->len > 0 && l->p[0] == '[' ? memchr(l->p, ']', l->len) : NULL;

	if (l->len >= n && memcmp(l->p, prefix, n) == 0)
		return 1;
	if (tag == NULL || (size_t)(tag - l->p) + 2 + n > l->len || tag[1] != ' ')
		return 0;
	return memcmp(tag + 2, prefix, n) == 0;
}

/* PHP's error lines: 2 for a fatal one, 1 for a warning, notice or
 * deprecation (only with the "PHP " of the CLI's log), else 0. */
static int
php_rank(const struct line *l)
{
	static const char *const fatal[] = { "Fatal error:", "Parse error:", "Recoverable fatal error:" };
	static const char *const minor[] = { "Warning:", "Notice:", "Deprecated:", "Strict Standards:" };
	struct line rest = *l;
	int php = starts(l, "PHP ");
	size_t i;

	if (php) {
		rest.p += 4;
		rest.len -= 4;
	}
	for (i = 0; i < ARRAY_LEN(fatal); i++)
		if (starts(&rest, fatal[i]))
			return 2;
	for (i = 0; php && i < ARRAY_LEN(minor); i++)
		if (starts(&rest, minor[i]))
			return 1;
	return 0;
}

/* The line that names the error in text, found as the file's comment
 * says; a zero-length line when text has none. */
static struct line
pick(const char *text)
{
	struct line l, first = { text, 0 }, php = { text, 0 }, py_last = { text, 0 };
	int php_best = 0, in_py = 0;
	const char *s = text;

	while (next_line(&s, &l)) {
		int rank;

		if (blank(&l))
			continue;
		if (first.len == 0)
			first = l;
		if (starts(&l, PY_HEADER))
			in_py = 1;
		else if (in_py && l.p[0] != ' ' && l.p[0] != '\t')
			py_last = l;
		if ((rank = php_rank(&l)) > php_best) {
			php_best = rank;
			php = l;
		}
	}
	if (py_last.len > 0)
		return py_last;
	return php_best > 0 ? php : first;
}

/* The one line of text that names the error (see above), at most
 * ERRTEXT_SUMMARY_MAX bytes of valid UTF-8; "" for NULL or blank text.
 * Returns a string to free. */
char *
errtext_summary(const char *text)
{
	struct line l;
	size_t len;

	if (text == NULL)
		return xstrdup("");
	l = pick(text);
	while (l.len > 0 && (l.p[l.len - 1] == ' ' || l.p[l.len - 1] == '\t'))
		l.len--;
	len = utf8_valid_prefix(l.p, l.len < ERRTEXT_SUMMARY_MAX ? l.len : ERRTEXT_SUMMARY_MAX);
	return xstrndup(l.p, len);
}

/* errtext_summary(text), or when text names no error, the one line of
 * reason (the outcome's words, "exit 65 is a permanent failure"; may be
 * NULL).  Every summary of a dead job is picked here, so that the text
 * and the JSON of a list say the same.  Returns a string to free. */
char *
errtext_summary_or(const char *text, const char *reason)
{
	char *s = errtext_summary(text);

	if (*s != '\0' || reason == NULL)
		return s;
	free(s);
	return errtext_summary(reason);
}
