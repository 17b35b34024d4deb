/* conf_ini.c -- the INI file itself, at the bottom of the configuration
 * files: pass 1, and what the section files share in pass 2 (the ld_*
 * functions of struct loader).
 *
 * Pass 1 lets inih split the file into (section, key, value, line)
 * entries; our own line reader counts lines (Debian's inih does not pass
 * line numbers to handlers), sees section headers even when the section
 * is empty, and refuses lines longer than inih can hold.  Pass 2 (conf_load.c
 * and the conf_*.c section files above this one) interprets the entries
 * with the value parsers below, which report every problem as
 * "FILE:LINE: message".  This file calls no other conf*.c file. */
#include "config.h"

#include <errno.h>
#include <ctype.h>
#include <grp.h>
#include <ini.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf_ini.h"
#include "duration.h"
#include "nameset.h"
#include "utf8.h"

/* ---- reports ---- */

/* A message longer than this is shortened in its middle: it quotes a
 * value from the file, which may be any length (a 100,000-character
 * user name), and one line must stay readable. */
#define LD_MESSAGE_MAX 480

/* Errors shown of one file; the rest are counted (ld_errors_end).  A
 * file that is not a configuration at all (-c /etc/services, a binary)
 * would otherwise print a line for each of its lines. */
#define LD_ERRORS_SHOWN 20

/* Appends msg to out, with its middle cut out when it is longer than
 * LD_MESSAGE_MAX: its start names the key, its end often the rule. */
static void
add_message(struct buf *out, const char *msg, size_t len)
{
	size_t head = LD_MESSAGE_MAX * 2 / 3, tail = LD_MESSAGE_MAX / 4;

	if (len <= LD_MESSAGE_MAX) {
		buf_add(out, msg, len);
		return;
	}
	/* cut between UTF-8 characters, never inside one */
	while (head > 0 && ((unsigned char)msg[head] & 0xC0) == 0x80)
		head--;
	while (tail > 0 && ((unsigned char)msg[len - tail] & 0xC0) == 0x80)
		tail--;
	buf_add(out, msg, head);
	buf_printf(out, "[... %zu bytes not shown ...]", len - head - tail);
	buf_add(out, msg + len - tail, tail);
}

/* Appends "FILE:LINE: " then the message to out, one line. */
static void
add_line(struct loader *ld, struct buf *out, int line, const char *what, const char *fmt, va_list ap)
{
	struct buf msg;

	if (line > 0)
		buf_printf(out, "%s:%d: %s", ld->path, line, what);
	else
		buf_printf(out, "%s: %s", ld->path, what);
	buf_init(&msg);
	buf_vprintf(&msg, fmt, ap);
	add_message(out, msg.data != NULL ? msg.data : "", msg.len);
	buf_free(&msg);
	buf_addc(out, '\n');
}

/* Appends "FILE:LINE: message" to the errors and counts it. */
void
ld_error(struct loader *ld, int line, const char *fmt, ...)
{
	va_list ap;

	if (ld->nerrors++ >= LD_ERRORS_SHOWN)
		return;
	va_start(ap, fmt);
	add_line(ld, ld->errors, line, "", fmt, ap);
	va_end(ap);
}

/* Says how many errors were past LD_ERRORS_SHOWN, once all are found. */
void
ld_errors_end(struct loader *ld)
{
	if (ld->nerrors > LD_ERRORS_SHOWN)
		buf_printf(ld->errors, "%s: %d more error%s not shown (is this jobq's configuration file?)\n",
		    ld->path, ld->nerrors - LD_ERRORS_SHOWN, ld->nerrors - LD_ERRORS_SHOWN == 1 ? "" : "s");
}

/* Appends "FILE:LINE: warning: message" to the warnings. */
void
ld_warning(struct loader *ld, int line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	add_line(ld, ld->warnings, line, "warning: ", fmt, ap);
	va_end(ap);
}

/* ---- who else can change what the worker runs ---- */

/* Says who, besides the worker's own user, the handler's run user and
 * root, can change the file or folder st; returns 0 when nobody can.
 *   - anyone, when it is world-writable;
 *   - when the worker runs as root, also the members of a group other
 *     than root's (gid 0) that may write it, and an owner other than
 *     root or the run user (an owner can chmod at will): either could
 *     make root run their code.  An ordinary worker is not warned about
 *     these: its files are commonly group-writable by the user's own
 *     private group or owned by a deploy user, and whoever controls them
 *     gains no more than that worker's rights.
 * A folder with the sticky bit (/tmp) lets others add entries but not
 * replace ours, so with_mode = 0 skips the mode tests for such a folder
 * above the file's own. */
static int
other_writers(const struct stat *st, uid_t run_uid, int with_mode, char *who, size_t len)
{
	if (with_mode && (st->st_mode & S_IWOTH)) {
		snprintf(who, len, "world-writable (chmod o-w)");
		return 1;
	}
	if (geteuid() != 0)
		return 0;
	if (with_mode && (st->st_mode & S_IWGRP) && st->st_gid != 0) {
		struct group *gr = getgrgid(st->st_gid);

		if (gr != NULL)
			snprintf(who, len, "writable by group %s (chmod g-w)", gr->gr_name);
		else
			snprintf(who, len, "writable by group %lu (chmod g-w)", (unsigned long)st->st_gid);
		return 1;
	}
	if (st->st_uid != 0 && st->st_uid != run_uid) {
		struct passwd *pw = getpwuid(st->st_uid);

		if (pw != NULL)
			snprintf(who, len, "owned by user %s", pw->pw_name);
		else
			snprintf(who, len, "owned by uid %lu", (unsigned long)st->st_uid);
		return 1;
	}
	return 0;
}

/* Walks the folders that hold the absolute path, nearest first; warns
 * about the first one others can change (they could replace the file
 * with their own).  Returns 1 when it warned. */
static int
check_folders(struct loader *ld, int line, const char *what, const char *path, uid_t run_uid)
{
	char *dir = xstrdup(path), *slash, who[160];
	struct stat st;
	int nearest = 1, warned = 0;

	while (!warned && (slash = strrchr(dir, '/')) != NULL) {
		if (slash == dir)
			slash[1] = '\0';
		else
			*slash = '\0';
		if (stat(dir, &st) == 0 &&
		    other_writers(&st, run_uid, nearest || !(st.st_mode & S_ISVTX), who, sizeof who)) {
			ld_warning(ld, line, "%s %s is in %s, which is %s: others could replace it", what,
			    path, dir, who);
			warned = 1;
		}
		if (strcmp(dir, "/") == 0)
			break;
		nearest = 0;
	}
	free(dir);
	return warned;
}

/* Warns (one line at most) when someone other than the worker's user,
 * run_uid and root can change the file at path, or one of the folders
 * on its way, as written and with symbolic links resolved. */
void
ld_check_writers(struct loader *ld, int line, const char *what, const char *path, uid_t run_uid)
{
	char real[PATH_MAX], who[160];
	struct stat st;

	if (stat(path, &st) < 0)
		return; /* a missing program is reported elsewhere */
	if (other_writers(&st, run_uid, 1, who, sizeof who)) {
		ld_warning(ld, line, "%s %s is %s: others could change what jobq runs", what, path, who);
		return;
	}
	if (path[0] == '/' && check_folders(ld, line, what, path, run_uid))
		return;
	if (realpath(path, real) != NULL && strcmp(real, path) != 0)
		check_folders(ld, line, what, real, run_uid);
}

/* ---- pass 1: lines, sections, entries ---- */

/* Starts a new section at line. */
static struct section *
add_section(struct loader *ld, const char *name, int line)
{
	struct section *s;

	ld->sections = xgrow(ld->sections, ld->nsections, 1, sizeof *ld->sections);
	s = &ld->sections[ld->nsections++];
	memset(s, 0, sizeof *s);
	s->name = xstrdup(name);
	s->line = line;
	return s;
}

/* Notes a "[name]" header so empty sections exist too. */
static void
see_header(struct loader *ld, const char *line)
{
	const char *p = line, *end;
	struct section *s;
	char *name;

	while (isspace((unsigned char)*p))
		p++;
	if (*p != '[')
		return;
	end = strchr(p, ']');
	if (end == NULL)
		return; /* inih reports it */
	name = xstrndup(p + 1, (size_t)(end - p - 1));
	s = add_section(ld, str_trim(name), ld->lineno);
	ld->dropping = 0;
	/* inih drops what follows the ']': "[worker] concurrency = 8"
	 * would load without its key */
	for (p = end + 1; isspace((unsigned char)*p); p++)
		;
	if (*p != '\0' && *p != ';' && *p != '#') {
		/* reported with the header's other problems (conf_load.c): an
		 * unknown or refused header is the one line for the mistake */
		s->after = xstrdup(p);
		s->nrefused++; /* most likely a key the section needs */
	}
	free(name);
}

/* Writes to str what inih gets for a line longer than its fixed line
 * buffer (num bytes, 200 in most builds).  Such a key = value line is
 * common enough (an exec line of absolute paths): inih gets "key =" and
 * the value goes to ld->long_value, cut as inih cuts one (an inline
 * comment is ';' after white space; white space around it trimmed), for
 * on_entry() to take.  A comment becomes an empty line.  -1 for any
 * other line, or a key too long by itself. */
static int
stand_in(struct loader *ld, char *str, int num)
{
	char *line = ld->linebuf, *sep, *v, *end;
	int was_space = 0;

	for (v = line; isspace((unsigned char)*v); v++)
		;
	if (*v == ';' || *v == '#') { /* a comment: inih need not see it */
		str[0] = '\0';
		return 0;
	}
	if (*v == '[' || (sep = strpbrk(line, "=:")) == NULL)
		return -1;
	if (sep - line + 2 > num - 1 || memchr(line, ';', (size_t)(sep - line)) != NULL)
		return -1;
	for (v = sep + 1, end = v; *end != '\0'; end++) {
		if (was_space && *end == ';')
			break;
		was_space = isspace((unsigned char)*end);
	}
	while (isspace((unsigned char)*v))
		v++;
	while (end > v && isspace((unsigned char)end[-1]))
		end--;
	ld->long_value = xstrndup(v, (size_t)(end - v));
	memcpy(str, line, (size_t)(sep - line) + 1);
	str[sep - line + 1] = '\0';
	return 0;
}

/* Hands inih an empty line in place of the current one, refused (and
 * reported) by read_line.  When it was a section header, the keys under
 * it are dropped unreported until the next header (ld->dropping): filed
 * under the section before, or under none, each would be a second error
 * for the one mistake ("key outside any section", "unknown key").  Else
 * the section it is in counts it: a key it needs may be the refused
 * line, and is not reported missing as well. */
static char *
drop_line(struct loader *ld, char *str)
{
	const char *p = ld->linebuf;

	while (isspace((unsigned char)*p))
		p++;
	if (*p == '[')
		ld->dropping = 1;
	else if (ld->nsections > 0 && !ld->dropping)
		ld->sections[ld->nsections - 1].nrefused++;
	str[0] = '\0';
	return str;
}

/* Reports the bad byte at off of the current line (a control character,
 * or the start of bytes that are not UTF-8): in a value as "KEY: ... at
 * byte N" of the value, in the words the checks of a value's text use
 * (conf_text_check); elsewhere by its column. */
static void
report_byte(struct loader *ld, size_t off)
{
	const char *line = ld->linebuf, *key = line, *sep = NULL, *v;
	unsigned char c = (unsigned char)line[off];
	const char *what = c == '\r' ? "carriage return" : c < 0x80 ? "control character" : "not valid UTF-8";

	while (isspace((unsigned char)*key))
		key++;
	if (*key != '[')
		sep = strpbrk(key, "=:");
	if (sep == NULL || (size_t)(sep - line) >= off) {
		ld_error(ld, ld->lineno, "%s at column %zu (jobq.ini is UTF-8 text, lines end with LF or CRLF)",
		    what, off + 1);
		return;
	}
	for (v = sep + 1; isspace((unsigned char)*v) && (size_t)(v - line) < off; v++)
		;
	while (sep > key && isspace((unsigned char)sep[-1]))
		sep--;
	ld_error(ld, ld->lineno, c >= 0x80 ? "%.*s: %s (at byte %zu)" : "%.*s: %s at byte %zu%s", (int)(sep - key),
	    key, what, off - (size_t)(v - line), c == '\r' ? " (lines end with LF or CRLF)" : "");
}

/* Refuses (reports, 1) a line of n bytes holding a NUL byte, which
 * would end the line there for every string function (the rest of the
 * value silently gone), or, outside a comment, bytes that are not UTF-8
 * or control characters other than tab: jobq.ini is UTF-8 text, a name
 * or path in another encoding is not the one its writer saw, and a
 * stray carriage return or escape would become part of a value. */
static int
bad_bytes(struct loader *ld, ssize_t n)
{
	const char *nul = memchr(ld->linebuf, '\0', (size_t)n), *p;
	size_t valid;

	if (nul != NULL) {
		ld_error(ld, ld->lineno, "NUL byte at column %zu (jobq.ini is text)",
		    (size_t)(nul - ld->linebuf) + 1);
		return 1;
	}
	for (p = ld->linebuf; isspace((unsigned char)*p); p++)
		;
	if (*p == ';' || *p == '#')
		return 0;
	if ((valid = utf8_valid_prefix(ld->linebuf, (size_t)n)) != (size_t)n) {
		report_byte(ld, valid);
		return 1;
	}
	for (p = ld->linebuf; *p != '\0'; p++)
		if (((unsigned char)*p < 0x20 && *p != '\t') || *p == 0x7f) {
			report_byte(ld, (size_t)(p - ld->linebuf));
			return 1;
		}
	return 0;
}

/* The ini_reader: hands inih one line at a time and counts it. */
static char *
read_line(char *str, int num, void *stream)
{
	struct loader *ld = stream;
	ssize_t n;
	const char *p;

	errno = 0;
	if ((n = getline(&ld->linebuf, &ld->linecap, ld->fp)) < 0) {
		ld->read_errno = errno;
		return NULL;
	}
	ld->lineno++;
	if (n > 0 && ld->linebuf[n - 1] == '\n')
		ld->linebuf[--n] = '\0';
	if (n > 0 && ld->linebuf[n - 1] == '\r')
		ld->linebuf[--n] = '\0';
	/* Editors on Windows start UTF-8 files with a byte-order mark. */
	if (ld->lineno == 1 && n >= 3 && memcmp(ld->linebuf, "\xEF\xBB\xBF", 3) == 0) {
		memmove(ld->linebuf, ld->linebuf + 3, (size_t)n - 2);
		n -= 3;
	}
	free(ld->long_value); /* of a line inih did not hand on */
	ld->long_value = NULL;
	if (bad_bytes(ld, n))
		return drop_line(ld, str);
	if (n >= num - 1 && stand_in(ld, str, num) < 0) {
		ld_error(ld, ld->lineno, "line too long (%zd characters, at most %d)", n, num - 2);
		return drop_line(ld, str);
	}
	ld->continuation = n > 0 && isspace((unsigned char)ld->linebuf[0]);
	for (p = ld->linebuf; isspace((unsigned char)*p); p++)
		;
	if (*p == '\0' || *p == ';' || *p == '#')
		ld->continuation = 0;
	else if (!ld->continuation && (*p == '[' ? strchr(p, ']') == NULL : strpbrk(p, "=:") == NULL)) {
		/* inih reports only its first error: report each one here
		 * and hand inih an empty line instead. */
		ld_error(ld, ld->lineno, "%s",
		    *p == '[' ? "syntax error: section header without its closing ']'"
		              : "syntax error (expected [section], key = value or a comment)");
		return drop_line(ld, str);
	}
	see_header(ld, ld->linebuf);
	if (n < num - 1) /* else stand_in() wrote str */
		memcpy(str, ld->linebuf, (size_t)n + 1);
	return str;
}

/* The inih handler: files each key = value under the section it is in. */
static int
on_entry(void *user, const char *section, const char *key, const char *value)
{
	struct loader *ld = user;
	struct section *s;
	struct entry *e;

	(void)section;
	if (ld->dropping) /* under a refused header: reported there */
		return 1;
	if (ld->continuation) {
		ld_error(ld, ld->lineno, "indented line: continuation lines are not supported");
		if (ld->nsections > 0) /* as drop_line counts a refused line */
			ld->sections[ld->nsections - 1].nrefused++;
		return 1;
	}
	if (ld->nsections == 0) {
		ld_error(ld, ld->lineno, "key '%s' outside any section", key);
		return 1;
	}
	s = &ld->sections[ld->nsections - 1];
	s->entries = xgrow(s->entries, s->nentries, 1, sizeof *s->entries);
	e = &s->entries[s->nentries++];
	e->key = xstrdup(key);
	if (ld->long_value != NULL) {
		e->value = ld->long_value;
		ld->long_value = NULL;
	} else {
		e->value = xstrdup(value);
	}
	e->line = ld->lineno;
	return 1;
}

/* The folder that holds path, with symbolic links resolved when it can
 * be (relative paths in the file are read from there). */
static char *
dir_of(const char *path)
{
	char *slash = strrchr(path, '/'), *dir, resolved[PATH_MAX];

	if (slash == NULL)
		dir = xstrdup(".");
	else if (slash == path)
		dir = xstrdup("/");
	else
		dir = xstrndup(path, (size_t)(slash - path));
	if (realpath(dir, resolved) != NULL) {
		free(dir);
		dir = xstrdup(resolved);
	}
	return dir;
}

/* Opens path for pass 1 and notes where problems are reported; -1 when
 * it cannot be opened (reported). */
int
ld_open(struct loader *ld, const char *path, int flags, struct buf *errors, struct buf *warnings)
{
	struct stat st;

	memset(ld, 0, sizeof *ld);
	ld->path = path;
	ld->errors = errors;
	ld->warnings = warnings;
	ld->flags = flags;
	if ((ld->fp = fopen(path, "r")) == NULL) {
		ld_error(ld, 0, "cannot open configuration: %s", strerror(errno));
		return -1;
	}
	/* A folder opens, and reads as an empty file on some systems: it
	 * would load as a configuration of defaults alone. */
	if (fstat(fileno(ld->fp), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode) && !S_ISCHR(st.st_mode)) {
		ld_error(ld, 0, "cannot open configuration: %s", S_ISDIR(st.st_mode) ? strerror(EISDIR) : "not a file");
		fclose(ld->fp);
		ld->fp = NULL;
		return -1;
	}
	ld->config_dir = dir_of(path);
	return 0;
}

/* Pass 1: reads the whole file into ld->sections. */
void
ld_read(struct loader *ld)
{
	int rc = ini_parse_stream(read_line, ld, on_entry, ld);

	/* getline's end and its failure look alike: a file that could not
	 * be read to its end must not load as the part before the error. */
	if (ferror(ld->fp))
		ld_error(ld, ld->lineno + 1, "cannot read configuration: %s", strerror(ld->read_errno ? ld->read_errno : EIO));
	else if (rc > 0)
		ld_error(ld, rc, "syntax error (expected [section], key = value or a comment)");
	else if (rc < 0)
		ld_error(ld, 0, "cannot read configuration");
}

/* Closes the file and frees what pass 1 read. */
void
ld_free(struct loader *ld)
{
	size_t i, j;

	fclose(ld->fp);
	for (i = 0; i < ld->nsections; i++) {
		for (j = 0; j < ld->sections[i].nentries; j++) {
			free(ld->sections[i].entries[j].key);
			free(ld->sections[i].entries[j].value);
		}
		free(ld->sections[i].entries);
		free(ld->sections[i].name);
		free(ld->sections[i].after);
	}
	free(ld->sections);
	free(ld->linebuf);
	free(ld->long_value);
	free(ld->config_dir);
	free(ld->password_file);
	nameset_free(ld->worker_env);
	strv_free(ld->worker_env_names);
}

/* ---- value parsers: each reports its own error and returns -1 ---- */

/* A duration of at least min_ms. */
int
ld_duration(struct loader *ld, const struct entry *e, int64_t *out, int64_t min_ms)
{
	char err[ERRSZ];

	if (duration_parse(e->value, out, err) < 0) {
		ld_error(ld, e->line, "%s: %s", e->key, err);
		return -1;
	}
	if (*out < min_ms) {
		char d[32];

		duration_format(min_ms, d, sizeof d);
		ld_error(ld, e->line, "%s: '%s' is too short (at least %s)", e->key, e->value, d);
		return -1;
	}
	return 0;
}

/* A whole number from min to max. */
int
ld_uint(struct loader *ld, const struct entry *e, int64_t min, int64_t max, int64_t *out)
{
	if (str_to_int64(e->value, min, max, out) < 0) {
		ld_error(ld, e->line, "%s: bad number '%s' (expected a whole number from %lld to %lld)",
		    e->key, e->value, (long long)min, (long long)max);
		return -1;
	}
	return 0;
}

/* A byte size ("64K", "2M"). */
int
ld_size(struct loader *ld, const struct entry *e, size_t *out)
{
	char err[ERRSZ];

	if (size_parse(e->value, out, err) < 0) {
		ld_error(ld, e->line, "%s: %s", e->key, err);
		return -1;
	}
	return 0;
}

/* Output kept per stream: 1 KiB to 4 MiB, so that the stored text (at
 * most three bytes per kept byte after UTF-8 repair) fits MEDIUMTEXT. */
int
ld_output_limit(struct loader *ld, const struct entry *e, size_t *out)
{
	if (ld_size(ld, e, out) < 0)
		return -1;
	if (*out < 1024 || *out > 4 * 1024 * 1024) {
		ld_error(ld, e->line, "%s: '%s' is out of range (1K to 4M)", e->key, e->value);
		return -1;
	}
	return 0;
}

/* yes/true/on/1 (*out 1) or no/false/off/0 (*out 0), in any case: 0;
 * -1 for anything else. */
int
bool_word(const char *s, int *out)
{
	static const char *const yes[] = { "yes", "true", "on", "1" };
	static const char *const no[] = { "no", "false", "off", "0" };
	size_t i;

	for (i = 0; i < ARRAY_LEN(yes); i++) {
		if (strcasecmp(s, yes[i]) == 0)
			return *out = 1, 0;
		if (strcasecmp(s, no[i]) == 0)
			return *out = 0, 0;
	}
	return -1;
}

/* A yes or no (bool_word); reported when neither. */
int
ld_bool(struct loader *ld, const struct entry *e, int *out)
{
	if (bool_word(e->value, out) == 0)
		return 0;
	ld_error(ld, e->line, "%s: expected yes or no (or true, false, on, off, 1, 0), not '%s'", e->key, e->value);
	return -1;
}

/* Replaces *dst with a copy of value (a later key wins). */
void
ld_str(char **dst, const char *value)
{
	free(*dst);
	*dst = xstrdup(value);
}

/* A PCRE2 pattern, compiled; NULL when bad (reported). */
pcre2_code *
ld_regex(struct loader *ld, const struct entry *e)
{
	int code;
	PCRE2_SIZE offset;
	pcre2_code *re;

	re = pcre2_compile((PCRE2_SPTR)e->value, PCRE2_ZERO_TERMINATED, PCRE2_UTF, &code, &offset, NULL);
	if (re == NULL) {
		PCRE2_UCHAR msg[256];

		pcre2_get_error_message(code, msg, sizeof msg);
		ld_error(ld, e->line, "%s: bad regular expression at offset %zu: %s", e->key, (size_t)offset,
		    (const char *)msg);
	}
	return re;
}

/* Refuses a value longer than what it feeds can take: max bytes, or with
 * chars, max characters (UTF-8, as pass 1 made sure).  what names the
 * taker ("a MariaDB user name").  Checked here, at its line, rather than
 * found out when a connect or an exec fails; the message gives the
 * length and the limit, not the value.  0 when it fits. */
int
ld_length(struct loader *ld, const struct entry *e, size_t max, int chars, const char *what)
{
	size_t n = 0;
	const char *p;

	if (!chars)
		n = strlen(e->value);
	else
		for (p = e->value; *p != '\0'; p++)
			n += ((unsigned char)*p & 0xC0) != 0x80;
	if (n <= max)
		return 0;
	ld_error(ld, e->line, "%s: too long: %zu %s, and %s is at most %zu", e->key, n,
	    chars ? "characters" : "bytes", what, max);
	return -1;
}

/* Reports a key that section s does not take. */
void
ld_unknown_key(struct loader *ld, const struct section *s, const struct entry *e)
{
	ld_error(ld, e->line, "unknown key '%s' in [%s]", e->key, s->name);
	ld->nunknown++;
}

/* Text kept and shown as it is (a schedule's cron and description, a
 * queue's description): valid UTF-8 with no control characters, at most
 * max bytes.  0, or -1 with err naming key. */
int
conf_text_check(const char *key, const char *value, size_t max, char *err)
{
	size_t len = strlen(value);
	const char *p;

	if (len > max)
		return errf(err, "%s: longer than %zu bytes", key, max), -1;
	if (utf8_valid_prefix(value, len) != len)
		return errf(err, "%s: not valid UTF-8 (at byte %zu)", key, utf8_valid_prefix(value, len)), -1;
	for (p = value; *p != '\0'; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return errf(err, "%s: control character at byte %zu", key, (size_t)(p - value)), -1;
	return 0;
}
