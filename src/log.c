/* log.c -- the worker's log: one line per event on stderr.
 *
 * Text lines read "TIME LEVEL message key=value ..." for people and
 * grep; --log-format json prints one JSON object per line for log
 * shippers.  A line is built whole and written with one write(2), so
 * lines from several workers sharing a file do not interleave.
 *
 * Messages and fields carry text from outside (a login name, a job type
 * an application inserted, a handler's words), so this is the one place
 * that makes it harmless: whatever a caller passes, a line stays one
 * line and cannot drive a terminal.  In text every control character,
 * DEL, byte that is not UTF-8, C1 control, line or paragraph separator
 * and bidi override is written as an escape (\n, \xHH, \uHHHH); in JSON
 * the same characters are \u escapes of a valid JSON string (a byte that
 * is not UTF-8 becomes U+FFFD there).  log_escape lends the same rule to
 * the other one-line messages on stderr (cli_error). */
#include "config.h"

#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "utf8.h"

static enum log_format log_fmt = LOG_TEXT;
static enum log_level log_min = LOG_INFO;

static const char *const level_names[] = { "debug", "info", "warn", "error" };

void
log_set_format(enum log_format f)
{
	log_fmt = f;
}

void
log_set_verbose(int verbose)
{
	log_min = verbose ? LOG_DEBUG : LOG_INFO;
}

/* Lines below level are dropped: LOG_WARN is --quiet (cron mails only
 * what went wrong), LOG_DEBUG is -v. */
void
log_set_level(enum log_level level)
{
	log_min = level;
}

/* The names log_level = accepts: the level names, plus "quiet" for warn
 * and "verbose" for debug, the words the command line uses. */
int
log_level_parse(const char *s, enum log_level *level)
{
	size_t i;

	for (i = 0; i < sizeof level_names / sizeof level_names[0]; i++)
		if (strcmp(s, level_names[i]) == 0) {
			*level = (enum log_level)i;
			return 0;
		}
	if (strcmp(s, "quiet") == 0)
		*level = LOG_WARN;
	else if (strcmp(s, "verbose") == 0)
		*level = LOG_DEBUG;
	else
		return -1;
	return 0;
}

int
log_format_parse(const char *s, enum log_format *f)
{
	if (strcmp(s, "text") == 0)
		*f = LOG_TEXT;
	else if (strcmp(s, "json") == 0)
		*f = LOG_JSON;
	else
		return -1;
	return 0;
}

static void
emit(struct buf *b)
{
	const char *p;
	size_t left;

	buf_addc(b, '\n');
	p = b->data;
	left = b->len;
	while (left > 0) {
		ssize_t n = write(STDERR_FILENO, p, left);

		if (n <= 0)
			break;
		p += n;
		left -= (size_t)n;
	}
}

/* Code points that are printable UTF-8 but shown escaped: the C1
 * controls (some terminals obey them), the line and paragraph separators
 * (some viewers break lines there) and the bidi embeddings, overrides and
 * isolates (they reorder what a reader sees). */
static int
hidden_code_point(uint32_t cp)
{
	return (cp >= 0x80 && cp <= 0x9f) || cp == 0x2028 || cp == 0x2029 || (cp >= 0x202a && cp <= 0x202e) ||
	    (cp >= 0x2066 && cp <= 0x2069);
}

/* Appends the character at p (a C string), escaped when it is a control
 * character, DEL, a hidden code point or a byte that does not start
 * well-formed UTF-8; returns how many bytes of p it took. */
static size_t
add_visible_char(struct buf *b, const char *p)
{
	unsigned char c = (unsigned char)*p;
	uint32_t cp;
	size_t n;

	if (c >= 0x20 && c < 0x7f) {
		buf_addc(b, *p);
		return 1;
	}
	if (c == '\n') {
		buf_adds(b, "\\n");
		return 1;
	}
	if (c < 0x80 || (n = utf8_decode(p, strnlen(p, 4), &cp)) == 0) {
		buf_printf(b, "\\x%02x", c);
		return 1;
	}
	if (hidden_code_point(cp))
		buf_printf(b, "\\u%04x", (unsigned)cp);
	else
		buf_add(b, p, n);
	return n;
}

/* Appends s with every character a log line must not carry raw written
 * as an escape (see the top of this file); with quoted, '"' and '\\'
 * are escaped too, for a value between quotes. */
static void
add_escaped(struct buf *b, const char *s, int quoted)
{
	const char *p = s;

	while (*p != '\0') {
		if (quoted && (*p == '"' || *p == '\\')) {
			buf_addc(b, '\\');
			buf_addc(b, *p++);
		} else
			p += add_visible_char(b, p);
	}
}

/* Appends s as a log line may carry it: one line, no terminal control,
 * valid UTF-8 (see the top of this file). */
void
log_escape(struct buf *b, const char *s)
{
	add_escaped(b, s, 0);
}

/* A text value is written bare when it is not empty and holds no blank,
 * quote or '=' and nothing to escape; otherwise between quotes, escaped. */
static void
text_value(struct buf *b, const char *v)
{
	size_t start = b->len;

	if (*v != '\0' && strpbrk(v, " \"=") == NULL) {
		add_escaped(b, v, 0);
		if (b->len - start == strlen(v))
			return; /* escapes only ever lengthen: nothing was escaped */
		b->len = start;
		b->data[start] = '\0';
	}
	buf_addc(b, '"');
	add_escaped(b, v, 1);
	buf_addc(b, '"');
}

/* Adds key: v to o as a valid JSON string: bytes that are not UTF-8
 * become U+FFFD (cJSON copies them as they are otherwise). */
static void
json_add_str(cJSON *o, const char *key, const char *v)
{
	struct buf fixed;
	size_t len = strlen(v);

	if (utf8_valid_prefix(v, len) == len) {
		cJSON_AddStringToObject(o, key, v);
		return;
	}
	buf_init(&fixed);
	utf8_repair(v, len, &fixed);
	cJSON_AddStringToObject(o, key, fixed.data);
	buf_free(&fixed);
}

/* Appends the printed JSON s with DEL and the hidden code points, which
 * cJSON leaves raw, as \u escapes: they only occur inside strings there,
 * so the line stays the same JSON. */
static void
add_json_visible(struct buf *b, const char *s)
{
	const char *p = s;
	uint32_t cp;
	size_t n;

	while (*p != '\0') {
		n = utf8_decode(p, strnlen(p, 4), &cp);
		if (n > 0 && (cp == 0x7f || hidden_code_point(cp)))
			buf_printf(b, "\\u%04x", (unsigned)cp);
		else
			buf_add(b, p, n > 0 ? n : 1);
		p += n > 0 ? n : 1;
	}
}

/* One event as a JSON object on one line. */
static void
json_line(
    struct buf *b, const char *now, enum log_level level, const char *msg, const struct log_field *f, int n)
{
	cJSON *o = cJSON_CreateObject();
	char *s;
	int i;

	cJSON_AddStringToObject(o, "time", now);
	cJSON_AddStringToObject(o, "level", level_names[level]);
	json_add_str(o, "msg", msg);
	for (i = 0; i < n; i++) {
		if (f[i].str != NULL)
			json_add_str(o, f[i].key, f[i].str);
		else
			cJSON_AddNumberToObject(o, f[i].key, (double)f[i].num);
	}
	s = cJSON_PrintUnformatted(o);
	if (s == NULL)
		fatal("cJSON_PrintUnformatted: out of memory");
	add_json_visible(b, s);
	cJSON_free(s);
	cJSON_Delete(o);
}

/* One event as "TIME LEVEL message key=value ..." on one line. */
static void
text_line(
    struct buf *b, const char *now, enum log_level level, const char *msg, const struct log_field *f, int n)
{
	int i;

	buf_printf(b, "%s %-5s ", now, level_names[level]);
	add_escaped(b, msg, 0);
	for (i = 0; i < n; i++) {
		buf_printf(b, " %s=", f[i].key);
		if (f[i].str != NULL)
			text_value(b, f[i].str);
		else
			buf_printf(b, "%lld", (long long)f[i].num);
	}
}

/* Writes one event: msg plus fields, escaped as the top of this file
 * says, as one line of the chosen format. */
void
log_fields(enum log_level level, const char *msg, const struct log_field *f, int n)
{
	char now[40];
	struct buf b;

	if (level < log_min)
		return;
	wall_iso8601(now, sizeof now);
	buf_init(&b);
	if (log_fmt == LOG_JSON)
		json_line(&b, now, level, msg, f, n);
	else
		text_line(&b, now, level, msg, f, n);
	emit(&b);
	buf_free(&b);
}

void
log_msg(enum log_level level, const char *fmt, ...)
{
	struct buf b;
	va_list ap;

	buf_init(&b);
	va_start(ap, fmt);
	buf_vprintf(&b, fmt, ap);
	va_end(ap);
	log_fields(level, b.data, NULL, 0);
	buf_free(&b);
}
