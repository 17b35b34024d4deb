/* utf8.c -- repair handler output before it is stored.
 *
 * Handlers print whatever they like; the database columns are utf8mb4 and
 * the JSON we print must be valid.  Every byte that does not start a
 * well-formed UTF-8 sequence (overlong forms, surrogates and code points
 * past U+10FFFF included) becomes U+FFFD, and so does NUL, which C strings
 * and many clients cannot carry. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "utf8.h"

static const char REPLACEMENT[] = "\xEF\xBF\xBD";

/* Length of the well-formed sequence at s (1..4), or 0 if none (NUL
 * included); *cp is its code point. */
static size_t
seq_decode(const unsigned char *s, size_t avail, uint32_t *cp)
{
	unsigned char c = s[0];
	size_t n, i;
	uint32_t v;

	if (c >= 0x01 && c < 0x80)
		return *cp = c, 1;
	if (c >= 0xC2 && c <= 0xDF)
		n = 2, v = c & 0x1F;
	else if (c >= 0xE0 && c <= 0xEF)
		n = 3, v = c & 0x0F;
	else if (c >= 0xF0 && c <= 0xF4)
		n = 4, v = c & 0x07;
	else
		return 0;
	if (avail < n)
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		v = (v << 6) | (s[i] & 0x3F);
	}
	if ((n == 3 && v < 0x800) || (n == 4 && v < 0x10000) || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
		return 0;
	*cp = v;
	return n;
}

static size_t
seq_len(const unsigned char *s, size_t avail)
{
	uint32_t cp;

	return seq_decode(s, avail, &cp);
}

/* The character at s[0..avail): its length in bytes (1..4) and *cp its
 * code point, or 0 when s does not start with a well-formed UTF-8
 * sequence (a stray byte, an overlong form, a surrogate, NUL). */
size_t
utf8_decode(const char *s, size_t avail, uint32_t *cp)
{
	return avail > 0 ? seq_decode((const unsigned char *)s, avail, cp) : 0;
}

/* Appends the repaired text of in[0..len) to out. */
void
utf8_repair(const char *in, size_t len, struct buf *out)
{
	const unsigned char *s = (const unsigned char *)in;
	size_t i = 0, start = 0;

	buf_reserve(out, len);
	while (i < len) {
		size_t n = seq_len(s + i, len - i);

		if (n > 0) {
			i += n;
			continue;
		}
		buf_add(out, in + start, i - start);
		buf_add(out, REPLACEMENT, sizeof REPLACEMENT - 1);
		i++;
		start = i;
	}
	buf_add(out, in + start, i - start);
}

/* Length of the longest prefix of s that ends on a character boundary
 * and is valid UTF-8: where to cut a string without splitting a
 * character. */
size_t
utf8_valid_prefix(const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0;

	while (i < len) {
		size_t n = seq_len(u + i, len - i);

		if (n == 0)
			break;
		i += n;
	}
	return i;
}

/* Bytes in the character that starts at s[0] (1 for a stray byte, so
 * that a walk over text that is not valid UTF-8 still ends). */
static size_t
char_len(const unsigned char *s, size_t avail)
{
	size_t n = s[0] >= 0xF0 ? 4 : s[0] >= 0xE0 ? 3 : s[0] >= 0xC0 ? 2 : 1;

	return n <= avail ? n : 1;
}

/* Where a cut may end s[0..len) without splitting a character: the start
 * of the character that holds byte pos. */
static size_t
char_start(const char *s, size_t pos)
{
	while (pos > 0 && ((unsigned char)s[pos] & 0xC0) == 0x80)
		pos--;
	return pos;
}

/* A copy of the text s[0..len) whose cost, as cost() counts it, is at
 * most max.  A text within max is copied whole.  A longer one keeps its
 * first characters (a sixteenth of max, at most 4 KiB: where a program
 * says what it was doing) and its last ones (where it says why it
 * stopped) around the line "[... N bytes cut WHY ...]", cut on character
 * boundaries, so valid UTF-8 stays valid.  When max cannot even hold that
 * line the copy is empty.  cost(p, n) is what n bytes at p take once
 * stored (for SQL: escaped); it must be additive over characters. */
char *
utf8_shorten(const char *s, size_t len, size_t max, size_t (*cost)(const char *, size_t), const char *why)
{
	const unsigned char *u = (const unsigned char *)s;
	char widest[160];
	size_t avail, head_max, used = 0, head = 0, tail = len, c;
	struct buf out;

	if (cost(s, len) <= max)
		return xstrndup(s, len);
	/* The marker costs at most this, whatever the count in it. */
	snprintf(
	    widest, sizeof widest, "\n[... %llu bytes cut %s ...]\n", (unsigned long long)UINT64_MAX, why);
	if (cost(widest, strlen(widest)) >= max)
		return xstrdup("");
	avail = max - cost(widest, strlen(widest));
	head_max = avail / 16 < 4096 ? avail / 16 : 4096;
	while (head < len && used + (c = cost(s + head, char_len(u + head, len - head))) <= head_max) {
		used += c;
		head += char_len(u + head, len - head);
	}
	while (tail > head) {
		size_t start = char_start(s, tail - 1);

		if (start < head || used + (c = cost(s + start, tail - start)) > avail)
			break;
		used += c;
		tail = start;
	}
	buf_init(&out);
	buf_add(&out, s, head);
	buf_printf(&out, "\n[... %llu bytes cut %s ...]\n", (unsigned long long)(tail - head), why);
	buf_add(&out, s + tail, len - tail);
	return buf_steal(&out);
}
