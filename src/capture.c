/* capture.c -- bounded capture of a handler's stdout or stderr.
 *
 * A handler may print gigabytes; the worker must not care.  A capture
 * keeps the first HEAD bytes (where a program says what it was doing) and
 * the last limit-HEAD bytes in a ring (where it says why it died), counts
 * what fell in between, and turns that into valid UTF-8 text with a marker
 * where bytes were dropped.  Memory is fixed at creation. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "capture.h"
#include "utf8.h"

struct capture {
	char *head;
	size_t head_cap, head_len;
	char *ring;
	size_t ring_cap, ring_pos, ring_len;
	uint64_t total;
};

/* limit is the most bytes kept; a sixteenth of it (at most 4 KiB) is the
 * head. */
struct capture *
capture_new(size_t limit)
{
	struct capture *c = xcalloc(1, sizeof *c);

	if (limit < 64)
		limit = 64;
	c->head_cap = limit / 16 < 4096 ? limit / 16 : 4096;
	c->ring_cap = limit - c->head_cap;
	c->head = xmalloc(c->head_cap);
	c->ring = xmalloc(c->ring_cap);
	return c;
}

void
capture_free(struct capture *c)
{
	if (c == NULL)
		return;
	free(c->head);
	free(c->ring);
	free(c);
}

void
capture_add(struct capture *c, const char *data, size_t len)
{
	size_t n;

	c->total += len;
	n = c->head_cap - c->head_len;
	if (n > len)
		n = len;
	memcpy(c->head + c->head_len, data, n);
	c->head_len += n;
	data += n;
	len -= n;
	if (len >= c->ring_cap) {
		/* Only the last ring_cap bytes of this chunk can survive. */
		data += len - c->ring_cap;
		len = c->ring_cap;
	}
	while (len > 0) {
		n = c->ring_cap - c->ring_pos;
		if (n > len)
			n = len;
		memcpy(c->ring + c->ring_pos, data, n);
		c->ring_pos = (c->ring_pos + n) % c->ring_cap;
		c->ring_len = c->ring_len + n > c->ring_cap ? c->ring_cap : c->ring_len + n;
		data += n;
		len -= n;
	}
}

/* The most bytes the text of a capture of limit bytes can take once
 * stored as an escaped SQL string: each kept byte becomes at most three
 * (an invalid byte turns into U+FFFD, three bytes that need no escaping;
 * a byte that needs escaping takes two), plus the dropped-bytes line. */
size_t
capture_stored_max(size_t limit)
{
	return 3 * (limit < 64 ? 64 : limit) + 64;
}

/* Bytes seen in all, kept or not. */
uint64_t
capture_total(const struct capture *c)
{
	return c->total;
}

/* Length of s without a last character that was cut short: where the
 * head may end when what followed it was dropped. */
static size_t
trim_partial(const char *s, size_t len)
{
	size_t i = len, back;

	for (back = 0; back < 4 && i > 0; back++) {
		unsigned char ch = (unsigned char)s[--i];

		if ((ch & 0xC0) != 0x80) {
			size_t need = ch >= 0xF0 ? 4 : ch >= 0xE0 ? 3 : ch >= 0xC0 ? 2 : 1;

			return need > len - i ? i : len;
		}
	}
	return len;
}

/* The kept text, repaired to UTF-8, with "[... N bytes dropped ...]"
 * between head and tail when the stream was longer than the limit.  A
 * stream that fit is repaired in one piece, so a character spanning the
 * head and the ring survives; around a cut, a character split by it is
 * counted as dropped rather than shown as U+FFFD. */
char *
capture_text(const struct capture *c)
{
	struct buf raw, out;
	uint64_t dropped = c->total - c->head_len - c->ring_len;
	size_t start = (c->ring_pos + c->ring_cap - c->ring_len) % c->ring_cap;
	size_t first = c->ring_len < c->ring_cap - start ? c->ring_len : c->ring_cap - start;

	buf_init(&raw);
	buf_init(&out);
	if (dropped == 0)
		buf_add(&raw, c->head, c->head_len);
	buf_add(&raw, c->ring + start, first);
	buf_add(&raw, c->ring, c->ring_len - first);
	if (dropped > 0) {
		size_t keep = trim_partial(c->head, c->head_len), skip = 0;

		while (skip < raw.len && skip < 3 && ((unsigned char)raw.data[skip] & 0xC0) == 0x80)
			skip++;
		utf8_repair(c->head, keep, &out);
		buf_printf(&out, "\n[... %llu bytes dropped ...]\n",
		    (unsigned long long)(dropped + (c->head_len - keep) + skip));
		utf8_repair(raw.data + skip, raw.len - skip, &out);
	} else
		utf8_repair(raw.data, raw.len, &out);
	buf_free(&raw);
	return buf_steal(&out);
}
