/* text.c -- unit tests of utf8.c (repair, valid prefix) and capture.c
 * (bounded head + tail capture of a handler's output). */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture.h"
#include "db.h"
#include "utf8.h"
#include "util.h"

#include "../tap.h"

#define FFFD "\xEF\xBF\xBD"

/* Repairs len bytes of in and compares with want (a C string). */
static void
repairs(const char *name, const char *in, size_t len, const char *want)
{
	struct buf out;

	buf_init(&out);
	utf8_repair(in, len, &out);
	ok(out.data != NULL && out.len == strlen(want) && memcmp(out.data, want, out.len) == 0, "%s", name);
	if (out.data == NULL || out.len != strlen(want) || memcmp(out.data, want, out.len) != 0)
		printf("#   got %zu bytes, want %zu\n", out.len, strlen(want));
	buf_free(&out);
}

/* Whether s[0..len) is valid UTF-8 without NUL bytes. */
static int
valid_utf8(const char *s, size_t len)
{
	return utf8_valid_prefix(s, len) == len;
}

static void
test_utf8_repair(void)
{
	struct buf out;

	repairs("empty input", "", 0, "");
	repairs("ASCII untouched", "hello, world\n\t!", 15, "hello, world\n\t!");
	repairs("2-, 3- and 4-byte characters untouched", "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80", 9,
	    "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80");
	repairs("U+FFFF and U+10FFFF untouched", "\xEF\xBF\xBF\xF4\x8F\xBF\xBF", 7,
	    "\xEF\xBF\xBF\xF4\x8F\xBF\xBF");
	repairs("U+D7FF and U+E000 untouched", "\xED\x9F\xBF\xEE\x80\x80", 6, "\xED\x9F\xBF\xEE\x80\x80");
	repairs("lone 0xFF",
	    "a\xFF"
	    "b",
	    3, "a" FFFD "b");
	repairs("lone continuation byte",
	    "a\x80"
	    "b",
	    3, "a" FFFD "b");
	repairs("0xFE 0xFF", "\xFE\xFF", 2, FFFD FFFD);
	repairs("overlong C0 AF ('/')", "x\xC0\xAFy", 4, "x" FFFD FFFD "y");
	repairs("overlong C1 81", "\xC1\x81", 2, FFFD FFFD);
	repairs("overlong E0 80 AF", "x\xE0\x80\xAFy", 5, "x" FFFD FFFD FFFD "y");
	repairs("overlong F0 80 80 AF", "\xF0\x80\x80\xAF", 4, FFFD FFFD FFFD FFFD);
	repairs("surrogate ED A0 80", "x\xED\xA0\x80y", 5, "x" FFFD FFFD FFFD "y");
	repairs("surrogate ED BF BF", "\xED\xBF\xBF", 3, FFFD FFFD FFFD);
	repairs("beyond U+10FFFF: F4 90 80 80", "\xF4\x90\x80\x80", 4, FFFD FFFD FFFD FFFD);
	repairs("F5 lead byte", "\xF5\x80\x80\x80", 4, FFFD FFFD FFFD FFFD);
	repairs("truncated 3-byte sequence at end", "ab\xE2\x82", 4, "ab" FFFD FFFD);
	repairs("truncated 4-byte sequence at end", "\xF0\x9F\x98", 3, FFFD FFFD FFFD);
	repairs("lead byte followed by ASCII",
	    "\xC3"
	    "A",
	    2, FFFD "A");
	repairs("NUL byte", "a\0b", 3, "a" FFFD "b");
	repairs("only NUL bytes", "\0\0", 2, FFFD FFFD);
	repairs("valid character after invalid byte", "\xFF\xC3\xA9", 3, FFFD "\xC3\xA9");

	/* utf8_repair appends: it must not lose what the buffer held. */
	buf_init(&out);
	buf_adds(&out, "head:");
	utf8_repair("\xFFz", 2, &out);
	is_str(out.data, "head:" FFFD "z", "utf8_repair appends to the buffer");
	buf_free(&out);
}

static void
test_utf8_valid_prefix(void)
{
	is_int((long long)utf8_valid_prefix("", 0), 0, "valid prefix of empty");
	is_int((long long)utf8_valid_prefix("abc", 3), 3, "valid prefix of ASCII is all of it");
	is_int(
	    (long long)utf8_valid_prefix("a\xC3\xA9\xE2\x82\xAC", 6), 6, "valid prefix of valid multibyte");
	is_int((long long)utf8_valid_prefix("ab\xE2\x82", 4), 2, "cut before a truncated character");
	is_int(
	    (long long)utf8_valid_prefix("ab\xE2\x82\xAC", 4), 2, "len cuts a character: prefix before it");
	is_int((long long)utf8_valid_prefix("ab\xFF"
	                                    "cd",
	           5),
	    2, "stops at an invalid byte");
	is_int((long long)utf8_valid_prefix("ab\0cd", 5), 2, "stops at NUL");
	is_int((long long)utf8_valid_prefix("\xC0\xAF", 2), 0, "overlong at start: 0");
	is_int((long long)utf8_valid_prefix("\xF0\x9F\x98\x80", 3), 0, "3 of 4 bytes: 0");
}

/* Fills s with n bytes of a repeating lowercase pattern. */
static void
pattern(char *s, size_t n, size_t from)
{
	size_t i;

	for (i = 0; i < n; i++)
		s[i] = (char)('a' + (from + i) % 26);
}

static void
test_capture_short(void)
{
	struct capture *c = capture_new(1024);
	char *t;

	t = capture_text(c);
	is_str(t, "", "empty capture gives empty text");
	free(t);
	is_int((long long)capture_total(c), 0, "empty capture total 0");
	capture_add(c, "hello ", 6);
	capture_add(c, "", 0);
	capture_add(c, "world", 5);
	t = capture_text(c);
	is_str(t, "hello world", "short input kept whole");
	free(t);
	is_int((long long)capture_total(c), 11, "capture_total counts bytes");
	/* capture_text does not consume: asking twice gives the same. */
	t = capture_text(c);
	is_str(t, "hello world", "capture_text can be called again");
	free(t);
	capture_free(c);
}

/* Input of exactly the limit, fed in pieces that cross the head/tail
 * boundary, is kept whole and unmarked. */
static void
test_capture_exact_limit(void)
{
	struct capture *c = capture_new(1024);
	char in[1024];
	char *t;
	size_t i;

	pattern(in, sizeof in, 0);
	for (i = 0; i < sizeof in; i += 100)
		capture_add(c, in + i, sizeof in - i < 100 ? sizeof in - i : 100);
	t = capture_text(c);
	ok(strlen(t) == sizeof in && memcmp(t, in, sizeof in) == 0, "input of exactly the limit kept whole");
	ok(strstr(t, "dropped") == NULL, "no marker when nothing was dropped");
	free(t);
	capture_free(c);
}

/* Input just over the limit: head bytes, marker with the exact count,
 * tail bytes. */
static void
test_capture_drop(void)
{
	const size_t limit = 1024, head = 1024 / 16, tail = 1024 - 1024 / 16;
	const size_t n = 5000;
	struct capture *c = capture_new(limit);
	char *in = xmalloc(n), *t, *want;
	size_t i;

	pattern(in, n, 0);
	for (i = 0; i < n; i += 7)
		capture_add(c, in + i, n - i < 7 ? n - i : 7);
	is_int((long long)capture_total(c), (long long)n, "total counts every byte, kept or not");
	t = capture_text(c);
	want = xasprintf("%.*s\n[... %zu bytes dropped ...]\n%.*s", (int)head, in, n - head - tail, (int)tail,
	    in + n - tail);
	is_str(t, want, "head + marker with the exact count + tail");
	ok(strncmp(t, in, head) == 0, "text starts with the first head bytes");
	ok(strlen(t) >= tail && memcmp(t + strlen(t) - tail, in + n - tail, tail) == 0,
	    "text ends with the last tail bytes");
	free(want);
	free(t);

	/* One byte more than the limit: one byte dropped, in a single chunk. */
	capture_free(c);
	c = capture_new(limit);
	capture_add(c, in, limit + 1);
	t = capture_text(c);
	ok(strstr(t, "[... 1 bytes dropped ...]") != NULL, "limit + 1 bytes: exactly 1 dropped");
	if (strstr(t, "dropped") != NULL)
		printf("#   marker: %.40s\n", strstr(t, "[..."));
	free(t);
	capture_free(c);
	free(in);
}

/* A tiny limit is raised to a workable minimum rather than crash. */
static void
test_capture_tiny_limit(void)
{
	struct capture *c = capture_new(0);
	char in[300], *t;

	pattern(in, sizeof in, 0);
	capture_add(c, in, sizeof in);
	t = capture_text(c);
	ok(t != NULL && strstr(t, "bytes dropped") != NULL && strlen(t) < 200,
	    "capture_new(0) still works and stays bounded");
	free(t);
	capture_free(c);
}

/* 100 MiB in 64 KiB chunks: the text stays near the limit. */
static void
test_capture_bounded(void)
{
	const size_t limit = 64 * 1024, chunk = 64 * 1024;
	const uint64_t total = 100ULL * 1024 * 1024;
	struct capture *c = capture_new(limit);
	char *buf = xmalloc(chunk), *t, marker[64];
	uint64_t fed;

	for (fed = 0; fed < total; fed += chunk) {
		pattern(buf, chunk, (size_t)(fed % 26));
		capture_add(c, buf, chunk);
	}
	is_int((long long)capture_total(c), (long long)total, "100 MiB counted");
	t = capture_text(c);
	ok(strlen(t) < limit + 100, "100 MiB captured in %zu bytes (limit %zu)", strlen(t), limit);
	snprintf(marker, sizeof marker, "[... %" PRIu64 " bytes dropped ...]", total - limit);
	ok(strstr(t, marker) != NULL, "marker counts %" PRIu64 " dropped bytes", total - limit);
	/* The last bytes are the last bytes fed. */
	pattern(buf, 26, (size_t)((total - 26) % 26));
	ok(memcmp(t + strlen(t) - 26, buf, 26) == 0, "text ends with the last bytes fed");
	free(t);
	free(buf);
	capture_free(c);
}

/* Multibyte characters across every possible cut: whatever the phase,
 * valid input gives valid output without U+FFFD, and the tail starts on
 * a character boundary. */
static void
test_capture_multibyte_tail(void)
{
	const char *euro = "\xE2\x82\xAC"; /* 3 bytes */
	int phase, all_valid = 1, no_fffd = 1;

	for (phase = 0; phase < 3; phase++) {
		struct capture *c = capture_new(1024);
		char *t;
		int i;

		/* ASCII first, so that only the tail boundary can cut a
		 * character; the phase ASCII bytes at the end shift where
		 * the tail (the last 960 bytes) starts. */
		capture_add(c, "0123456789012345678901234567890123456789012345678901234567890123", 64);
		for (i = 0; i < 2000; i++)
			capture_add(c, euro, 3);
		capture_add(c, "xx", (size_t)phase);
		t = capture_text(c);
		if (!valid_utf8(t, strlen(t)))
			all_valid = 0;
		if (strstr(t, FFFD) != NULL) {
			no_fffd = 0;
			printf("#   phase %d: U+FFFD in the text\n", phase);
		}
		{
			const char *m = strstr(t, "dropped ...]\n");

			ok(m != NULL && strncmp(m + 13, euro, 3) == 0,
			    "phase %d: the tail starts with a whole character", phase);
		}
		free(t);
		capture_free(c);
	}
	ok(all_valid, "a character cut at the tail boundary leaves valid UTF-8");
	ok(no_fffd, "a character cut at the tail boundary gives no U+FFFD");
}

/* Input shorter than the limit is kept whole, also when a character
 * straddles the internal head/tail split (limit/16 bytes). */
static void
test_capture_multibyte_short(void)
{
	struct capture *c = capture_new(1024);
	struct buf in;
	char *t;
	int i;

	buf_init(&in);
	for (i = 0; i < 63; i++)
		buf_addc(&in, 'a');
	for (i = 0; i < 10; i++)
		buf_adds(&in, "\xC3\xA9"); /* byte 64 is inside the first é */
	capture_add(c, in.data, in.len);
	t = capture_text(c);
	is_str(t, in.data, "short input with a character across the head split kept whole");
	free(t);
	capture_free(c);
	buf_free(&in);
}

/* A character cut at the end of the head, with bytes dropped: the head
 * must not end in replacement characters made from a valid input. */
static void
test_capture_multibyte_head(void)
{
	struct capture *c = capture_new(1024);
	char *t;
	int i;

	capture_add(c, "ab", 2); /* head is 64 bytes: 2 + 62, and 62 is not 3n */
	for (i = 0; i < 1000; i++)
		capture_add(c, "\xE2\x82\xAC", 3);
	t = capture_text(c);
	ok(valid_utf8(t, strlen(t)), "head cut inside a character: valid UTF-8");
	ok(strstr(t, FFFD) == NULL, "head cut inside a character: no U+FFFD from valid input");
	free(t);
	capture_free(c);
}

/* Invalid input is repaired in both the head and the tail. */
static void
test_capture_invalid(void)
{
	struct capture *c = capture_new(1024);
	char junk[4096], *t;
	size_t i;

	for (i = 0; i < sizeof junk; i++)
		junk[i] = (char)(i * 37 + 11); /* every byte value, NULs included */
	capture_add(c, junk, sizeof junk);
	t = capture_text(c);
	ok(valid_utf8(t, strlen(t)), "binary input gives valid UTF-8 text");
	ok(strstr(t, "bytes dropped") != NULL, "binary input over the limit is marked");
	free(t);
	capture_free(c);

	c = capture_new(1024);
	capture_add(c, "ok\0\xFF", 4);
	t = capture_text(c);
	is_str(t, "ok" FFFD FFFD, "NUL and 0xFF in a short capture become U+FFFD");
	free(t);
	capture_free(c);
}

/* Cost of text as a SQL string value: what utf8_shorten is given. */
static size_t
sql_cost(const char *s, size_t len)
{
	return db_quoted_len(s, len);
}

/* Checks one utf8_shorten result: within max, valid UTF-8, the start and
 * the end of the input kept, and the marker's count right. */
static void
shortens(const char *name, const char *in, size_t len, size_t max)
{
	char *t = utf8_shorten(in, len, max, sql_cost, "to fit X");
	size_t tl = strlen(t);
	const char *mark = strstr(t, "\n[... ");
	unsigned long long cut = 0;
	int counted = mark != NULL && sscanf(mark, "\n[... %llu bytes cut to fit X ...]\n", &cut) == 1;

	ok(sql_cost(t, tl) <= max, "%s: costs %zu, at most %zu", name, sql_cost(t, tl), max);
	ok(valid_utf8(t, tl), "%s: valid UTF-8", name);
	if (sql_cost(in, len) <= max) {
		ok(tl == len && memcmp(t, in, len) == 0, "%s: fits, copied whole", name);
	} else if (tl > 0) {
		const char *end = strstr(mark, "...]\n") + 5;
		size_t head = (size_t)(mark - t), tail = tl - (size_t)(end - t);

		ok(counted && head + tail + cut == len, "%s: marker counts the %llu bytes cut", name, cut);
		ok(memcmp(t, in, head) == 0 && memcmp(end, in + len - tail, tail) == 0,
		    "%s: keeps the start (%zu bytes) and the end (%zu bytes)", name, head, tail);
		ok(tail > head && sql_cost(t, tl) + 64 >= max, "%s: mostly the end, and nearly all of max",
		    name);
	}
	free(t);
}

static void
test_utf8_shorten(void)
{
	size_t n = 100000, i;
	char *a = xmalloc(n + 1), *e = xmalloc(2 * n + 1), *q = xmalloc(n + 1), *t;
	struct buf mixed;

	for (i = 0; i < n; i++)
		a[i] = (char)('a' + i % 26), q[i] = i % 3 ? '\'' : '\n';
	for (i = 0; i < n; i++)
		memcpy(e + 2 * i, "\xC3\xA9", 2);
	a[n] = q[n] = e[2 * n] = '\0';
	shortens("short ASCII", "hello", 5, 100);
	shortens("ASCII at exactly max", a, 1000, 1000);
	shortens("ASCII over max", a, n, 5000);
	shortens("ASCII, a large max", a, n, 60000);
	shortens("two-byte characters", e, 2 * n, 3001);
	shortens("bytes that need escaping cost two", q, n, 4000);
	buf_init(&mixed);
	for (i = 0; i < 20000; i++)
		buf_adds(&mixed,
		    i % 5 == 0       ? "\xF0\x9F\x98\x80"
		        : i % 5 == 1 ? "'"
		        : i % 5 == 2 ? FFFD
		                     : "x");
	for (i = 200; i < 40000; i = i * 3 + 7)
		shortens("mixed widths and escapes", mixed.data, mixed.len, i);
	buf_free(&mixed);
	t = utf8_shorten(a, n, 20, sql_cost, "to fit X");
	is_str(t, "", "a max below the marker's size gives an empty text");
	free(t);
	free(a);
	free(e);
	free(q);
}

/* capture_stored_max bounds the stored size of whatever a handler
 * prints: bytes that become U+FFFD, bytes that need escaping, a mix. */
static void
test_capture_stored_max(void)
{
	static const char *const fills[] = { "\xFF", "\n", "'", "\xFF\n", "\xC3", "\0", "\xE2\x82" };
	size_t f, limit;

	for (f = 0; f < ARRAY_LEN(fills); f++)
		for (limit = 64; limit <= 65536; limit *= 16) {
			struct capture *c = capture_new(limit);
			size_t flen = f == 5 ? 1 : strlen(fills[f]), i;
			char *t;

			for (i = 0; i < 3 * limit; i += flen)
				capture_add(c, fills[f], flen);
			t = capture_text(c);
			ok(db_quoted_len(t, strlen(t)) <= capture_stored_max(limit),
			    "fill %zu, limit %zu: stored %zu bytes, bound %zu", f, limit,
			    db_quoted_len(t, strlen(t)), capture_stored_max(limit));
			free(t);
			capture_free(c);
		}
}

int
main(void)
{
	test_utf8_repair();
	test_utf8_valid_prefix();
	test_capture_short();
	test_capture_exact_limit();
	test_capture_drop();
	test_capture_tiny_limit();
	test_capture_bounded();
	test_capture_multibyte_tail();
	test_capture_multibyte_short();
	test_capture_multibyte_head();
	test_capture_invalid();
	test_utf8_shorten();
	test_capture_stored_max();
	return done();
}
