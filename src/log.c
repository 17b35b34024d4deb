/* log.c -- the worker's log: one line per event on stderr.
 *
 * Text lines read "TIME LEVEL message key=value ..." for people and
 * grep; --log-format json prints one JSON object per line for log
 * shippers.  A line is built whole and written with one write(2), so
 * lines from several workers sharing a file do not interleave. */
#include "config.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

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

/* A text value needs quotes when it holds blanks, quotes or '='. */
static void
text_value(struct buf *b, const char *v)
{
	const char *p;

	if (*v != '\0' && strpbrk(v, " \t\"=\n") == NULL) {
		buf_adds(b, v);
		return;
	}
	buf_addc(b, '"');
	for (p = v; *p != '\0'; p++) {
		if (*p == '"' || *p == '\\')
			buf_addc(b, '\\');
		if (*p == '\n')
			buf_adds(b, "\\n");
		else
			buf_addc(b, *p);
	}
	buf_addc(b, '"');
}

/* Writes one event: msg plus fields. */
void
log_fields(enum log_level level, const char *msg, const struct log_field *f, int n)
{
	char now[40];
	struct buf b;
	int i;

	if (level < log_min)
		return;
	wall_iso8601(now, sizeof now);
	buf_init(&b);
	if (log_fmt == LOG_JSON) {
		cJSON *o = cJSON_CreateObject();
		char *s;

		cJSON_AddStringToObject(o, "time", now);
		cJSON_AddStringToObject(o, "level", level_names[level]);
		cJSON_AddStringToObject(o, "msg", msg);
		for (i = 0; i < n; i++) {
			if (f[i].str != NULL)
				cJSON_AddStringToObject(o, f[i].key, f[i].str);
			else
				cJSON_AddNumberToObject(o, f[i].key, (double)f[i].num);
		}
		s = cJSON_PrintUnformatted(o);
		if (s == NULL)
			fatal("cJSON_PrintUnformatted: out of memory");
		buf_adds(&b, s);
		cJSON_free(s);
		cJSON_Delete(o);
	} else {
		buf_printf(&b, "%s %-5s %s", now, level_names[level], msg);
		for (i = 0; i < n; i++) {
			buf_printf(&b, " %s=", f[i].key);
			if (f[i].str != NULL)
				text_value(&b, f[i].str);
			else
				buf_printf(&b, "%lld", (long long)f[i].num);
		}
	}
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
