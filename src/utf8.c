/* utf8.c -- repair handler output before it is stored.
 *
 * Handlers print whatever they like; the database columns are utf8mb4 and
 * the JSON we print must be valid.  Every byte that does not start a
 * well-formed UTF-8 sequence (overlong forms, surrogates and code points
 * past U+10FFFF included) becomes U+FFFD, and so does NUL, which C strings
 * and many clients cannot carry. */
#include "config.h"

#include "utf8.h"

static const char REPLACEMENT[] = "\xEF\xBF\xBD";

/* Length of the well-formed sequence at s (1..4), or 0 if none. */
static size_t
seq_len(const unsigned char *s, size_t avail)
{
	unsigned char c = s[0];
	size_t n, i;
	unsigned long cp;

	if (c >= 0x01 && c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF)
		n = 2, cp = c & 0x1F;
	else if (c >= 0xE0 && c <= 0xEF)
		n = 3, cp = c & 0x0F;
	else if (c >= 0xF0 && c <= 0xF4)
		n = 4, cp = c & 0x07;
	else
		return 0;
	if (avail < n)
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3F);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10FFFF ||
	    (cp >= 0xD800 && cp <= 0xDFFF))
		return 0;
	return n;
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
