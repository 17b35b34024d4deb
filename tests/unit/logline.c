/* logline.c -- unit tests of the log's escaping (log.c): whatever text a
 * caller passes, an event is one line that cannot drive a terminal, in
 * text and in JSON. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

#include "../tap.h"

static void
esc(const char *in, const char *want, const char *name)
{
	struct buf b;

	buf_init(&b);
	buf_adds(&b, "");
	log_escape(&b, in);
	is_str(b.data, want, name);
	buf_free(&b);
}

/* The line log_fields writes for msg and f[0..n), without its time and
 * level ("TIME LEVEL " in text), read back from stderr. */
static char *
line_of(const char *msg, const struct log_field *f, int n)
{
	char path[] = "/tmp/jobq-logline-XXXXXX", got[4096];
	int fd = mkstemp(path), saved = dup(STDERR_FILENO);
	FILE *in;
	size_t len;

	if (fd < 0 || saved < 0 || dup2(fd, STDERR_FILENO) < 0)
		fatal("mkstemp/dup2 %s: %s", path, strerror(errno));
	log_fields(LOG_WARN, msg, f, n);
	dup2(saved, STDERR_FILENO);
	close(saved);
	in = fdopen(fd, "r");
	rewind(in);
	len = fread(got, 1, sizeof got - 1, in);
	got[len] = '\0';
	fclose(in);
	unlink(path);
	return xstrdup(got);
}

static void
text_lines(void)
{
	struct log_field f[] = { LF_S("plain", "x"), LF_S("blank", "a b"), LF_S("tab", "t\tz"),
		LF_S("empty", ""), LF_S("quotes", "q\"\\"), LF_S("esc", "\033[2J"), LF_N("n", 7) };
	char *got = line_of("login of 'x\r\n2026-01-01T00:00:00Z info forged'", f, 7);
	const char *rest = strstr(got, "warn  ");

	is_str(rest != NULL ? rest + 6 : got,
	    "login of 'x\\x0d\\n2026-01-01T00:00:00Z info forged' plain=x blank=\"a b\" tab=\"t\\x09z\""
	    " empty=\"\" quotes=\"q\\\"\\\\\" esc=\"\\x1b[2J\" n=7\n",
	    "text: the message and every field escaped, one line");
	free(got);
}

static void
json_lines(void)
{
	struct log_field f[] = { LF_S("type", "a\nb\033\177\xc2\x9b\xe2\x80\xa8\xff") };
	char *got;

	log_set_format(LOG_JSON);
	got = line_of("m\r", f, 1);
	ok(strstr(got, "\"msg\":\"m\\r\"") != NULL, "json: CR in the message is \\r");
	ok(strstr(got, "\"type\":\"a\\nb\\u001b\\u007f\\u009b\\u2028\xef\xbf\xbd\"") != NULL,
	    "json: LF, ESC, DEL, CSI and U+2028 escaped, a stray byte is U+FFFD");
	is_int((long long)(strchr(got, '\n') - got), (long long)strlen(got) - 1, "json: one line");
	log_set_format(LOG_TEXT);
	free(got);
}

int
main(void)
{
	esc("plain text", "plain text", "plain text is unchanged");
	esc("a\nb\rc\td", "a\\nb\\x0dc\\x09d", "LF, CR and tab are escaped");
	esc("\033]0;title\007\177", "\\x1b]0;title\\x07\\x7f", "ESC, BEL and DEL are escaped");
	esc("csi \xc2\x9b"
	    "31m",
	    "csi \\u009b31m", "a C1 control is \\u009b");
	esc("\xe2\x80\xa8\xe2\x80\xa9\xe2\x80\xae\xe2\x81\xa6", "\\u2028\\u2029\\u202e\\u2066",
	    "line and paragraph separators and bidi controls are escaped");
	esc("\xff\xe2\x80", "\\xff\\xe2\\x80", "bytes that are not UTF-8 are \\xHH");
	esc("caf\xc3\xa9 \xe2\x82\xac \\ \"", "caf\xc3\xa9 \xe2\x82\xac \\ \"",
	    "other UTF-8, backslash and quote are kept");
	text_lines();
	json_lines();
	return done();
}
