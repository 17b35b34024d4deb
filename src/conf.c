/* conf.c -- load jobq.ini into a struct conf.
 *
 * Loading is two passes.  The first lets inih split the file into
 * (section, key, value, line) entries; our own line reader counts lines
 * (Debian's inih does not pass line numbers to handlers), sees section
 * headers even when the section is empty, and refuses lines longer than
 * inih can hold.  The second pass interprets the entries: [database] and
 * [worker] first, so that each [handler TYPE] starts from the [worker]
 * defaults wherever it stands in the file.  Every problem is reported as
 * "FILE:LINE: message", all of them, not only the first: a typo must never
 * silently change behaviour. */
#include "config.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <grp.h>
#include <ini.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backoff.h"
#include "conf.h"
#include "conf_int.h"
#include "cron.h"
#include "duration.h"
#include "words.h"

#ifndef SYSCONFDIR
#define SYSCONFDIR "/etc"
#endif

void
ld_error(struct loader *ld, int line, const char *fmt, ...)
{
	va_list ap;

	if (line > 0)
		buf_printf(ld->errors, "%s:%d: ", ld->path, line);
	else
		buf_printf(ld->errors, "%s: ", ld->path);
	va_start(ap, fmt);
	buf_vprintf(ld->errors, fmt, ap);
	va_end(ap);
	buf_addc(ld->errors, '\n');
	ld->nerrors++;
}

void
ld_warning(struct loader *ld, int line, const char *fmt, ...)
{
	va_list ap;

	if (line > 0)
		buf_printf(ld->warnings, "%s:%d: warning: ", ld->path, line);
	else
		buf_printf(ld->warnings, "%s: warning: ", ld->path);
	va_start(ap, fmt);
	buf_vprintf(ld->warnings, fmt, ap);
	va_end(ap);
	buf_addc(ld->warnings, '\n');
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

/* Where the configuration is read from when -c is not given. */
const char *
conf_default_path(void)
{
	const char *env = getenv("JOBQ_CONFIG");

	return env != NULL && *env != '\0' ? env : SYSCONFDIR "/jobq.ini";
}

/* Queue, type and schedule names: 1-64 of [A-Za-z0-9_.-]. */
int
conf_valid_name(const char *s)
{
	size_t n = 0;

	for (; s[n] != '\0'; n++)
		if (!isalnum((unsigned char)s[n]) && strchr("_.-", s[n]) == NULL)
			return 0;
	return n > 0 && n <= NAME_MAX_LEN;
}

const char *
conf_reserve_mode_name(enum reserve_mode m)
{
	switch (m) {
	case RESERVE_SKIP_LOCKED:
		return "skip-locked";
	case RESERVE_UPDATE:
		return "update";
	default:
		return "auto";
	}
}

/* ---- pass 1: lines, sections, entries ---- */

static struct section *
add_section(struct loader *ld, const char *name, int line)
{
	struct section *s;

	ld->sections = xrealloc(ld->sections, (ld->nsections + 1) * sizeof *ld->sections);
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
	char *name;

	while (isspace((unsigned char)*p))
		p++;
	if (*p != '[')
		return;
	end = strchr(p, ']');
	if (end == NULL)
		return; /* inih reports it */
	name = xstrndup(p + 1, (size_t)(end - p - 1));
	add_section(ld, str_trim(name), ld->lineno);
	free(name);
}

/* The ini_reader: hands inih one line at a time and counts it. */
static char *
read_line(char *str, int num, void *stream)
{
	struct loader *ld = stream;
	ssize_t n = getline(&ld->linebuf, &ld->linecap, ld->fp);
	const char *p;

	if (n < 0)
		return NULL;
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
	if (n >= num - 1) {
		ld_error(ld, ld->lineno, "line too long (%zd characters, at most %d)", n, num - 2);
		str[0] = '\0';
		return str;
	}
	ld->continuation = n > 0 && isspace((unsigned char)ld->linebuf[0]);
	for (p = ld->linebuf; isspace((unsigned char)*p); p++)
		;
	if (*p == '\0' || *p == ';' || *p == '#')
		ld->continuation = 0;
	else if (!ld->continuation && (*p == '[' ? strchr(p, ']') == NULL : strpbrk(p, "=:") == NULL)) {
		/* inih reports only its first error: report each one here
		 * and hand inih an empty line instead. */
		ld_error(ld, ld->lineno, "syntax error (expected [section], key = value or a comment)");
		str[0] = '\0';
		return str;
	}
	see_header(ld, ld->linebuf);
	memcpy(str, ld->linebuf, (size_t)n + 1);
	return str;
}

static int
on_entry(void *user, const char *section, const char *key, const char *value)
{
	struct loader *ld = user;
	struct section *s;
	struct entry *e;

	(void)section;
	if (ld->continuation) {
		ld_error(ld, ld->lineno, "indented line: continuation lines are not supported");
		return 1;
	}
	if (ld->nsections == 0) {
		ld_error(ld, ld->lineno, "key '%s' outside any section", key);
		return 1;
	}
	s = &ld->sections[ld->nsections - 1];
	s->entries = xrealloc(s->entries, (s->nentries + 1) * sizeof *s->entries);
	e = &s->entries[s->nentries++];
	e->key = xstrdup(key);
	e->value = xstrdup(value);
	e->line = ld->lineno;
	return 1;
}

/* ---- value parsers: each reports its own error and returns -1 ---- */

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

int
ld_bool(struct loader *ld, const struct entry *e, int *out)
{
	static const char *const yes[] = { "yes", "true", "on", "1" };
	static const char *const no[] = { "no", "false", "off", "0" };
	size_t i;

	for (i = 0; i < ARRAY_LEN(yes); i++) {
		if (strcasecmp(e->value, yes[i]) == 0)
			return *out = 1, 0;
		if (strcasecmp(e->value, no[i]) == 0)
			return *out = 0, 0;
	}
	ld_error(ld, e->line, "%s: expected yes or no, not '%s'", e->key, e->value);
	return -1;
}

void
ld_str(char **dst, const char *value)
{
	free(*dst);
	*dst = xstrdup(value);
}

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

/* ---- exit status sets ---- */

void
ld_unknown_key(struct loader *ld, const struct section *s, const struct entry *e)
{
	ld_error(ld, e->line, "unknown key '%s' in [%s]", e->key, s->name);
}

static int
worker_set(struct loader *ld, struct conf *c, const struct entry *e)
{
	struct worker_conf *w = &c->worker;
	const char *k = e->key;
	int64_t v;

	if (strcmp(k, "queues") == 0) {
		ld->queues_line = e->line;
		strv_free(w->queues);
		if (split_list(e->value, &w->queues) <= 0) {
			ld_error(ld, e->line,
			    "queues: expected a comma-separated list of queue names, not '%s'", e->value);
			strv_free(w->queues); /* a blank list comes back allocated */
			w->queues = NULL;
			return -1;
		}
	} else if (strcmp(k, "concurrency") == 0) {
		if (ld_uint(ld, e, 1, 1024, &v) < 0)
			return -1;
		w->concurrency = (unsigned)v;
	} else if (strcmp(k, "poll_interval") == 0)
		return ld_duration(ld, e, &w->poll_interval_ms, 10);
	else if (strcmp(k, "wakeup_dir") == 0) {
		/* A socket's whole path must fit in sun_path (108 bytes). */
		if (strcmp(e->value, "off") != 0 && (e->value[0] != '/' || strlen(e->value) > 70)) {
			ld_error(ld, e->line, "wakeup_dir: expected an absolute path of at most 70 bytes or off, not '%s'",
			    e->value);
			return -1;
		}
		ld_str(&w->wakeup_dir, e->value);
	} else if (strcmp(k, "reserve_ahead") == 0) {
		ld->reserve_ahead_line = e->line;
		if (strcmp(e->value, "auto") == 0)
			w->reserve_ahead = -1;
		else if (ld_uint(ld, e, 0, 1024, &v) < 0)
			return -1;
		else
			w->reserve_ahead = (int)v;
	} else if (strcmp(k, "reserve_ttl") == 0)
		return ld_duration(ld, e, &w->reserve_ttl_ms, 1000);
	else if (strcmp(k, "heartbeat") == 0) {
		ld->heartbeat_line = e->line;
		return ld_duration(ld, e, &w->heartbeat_ms, 100);
	} else if (strcmp(k, "reserve_mode") == 0) {
		if (strcmp(e->value, "auto") == 0)
			w->reserve_mode = RESERVE_AUTO;
		else if (strcmp(e->value, "skip-locked") == 0)
			w->reserve_mode = RESERVE_SKIP_LOCKED;
		else if (strcmp(e->value, "update") == 0)
			w->reserve_mode = RESERVE_UPDATE;
		else {
			ld_error(ld, e->line, "reserve_mode: expected auto, skip-locked or update, not '%s'",
			    e->value);
			return -1;
		}
	} else if (strcmp(k, "timezone") == 0)
		ld_str(&w->timezone, e->value);
	else if (strcmp(k, "log_format") == 0) {
		if (log_format_parse(e->value, &w->log_format) < 0) {
			ld_error(ld, e->line, "log_format: expected text or json, not '%s'", e->value);
			return -1;
		}
	} else if (strcmp(k, "log_level") == 0) {
		if (log_level_parse(e->value, &w->log_level) < 0) {
			ld_error(ld, e->line, "log_level: expected debug, info, warn or error, not '%s'",
			    e->value);
			return -1;
		}
	} else if (strcmp(k, "max_payload") == 0)
		return ld_size(ld, e, &w->max_payload);
	else
		return 1;
	return 0;
}

static void
load_worker(struct loader *ld, struct conf *c, const struct section *s, struct handler *defaults)
{
	size_t i;

	for (i = 0; i < s->nentries; i++) {
		const struct entry *e = &s->entries[i];

		if (worker_set(ld, c, e) == 1 && conf_handler_set(ld, defaults, e) == 1)
			ld_unknown_key(ld, s, e);
	}
}

static void
load_queue(struct loader *ld, struct conf *c, const struct section *s, const char *name)
{
	size_t i, n = strv_len(c->queues);

	for (i = 0; i < s->nentries; i++)
		if (strcmp(s->entries[i].key, "max_running") == 0)
			conf_flow_queue(ld, c, name, &s->entries[i]);
		else if (strcmp(s->entries[i].key, "description") != 0)
			ld_unknown_key(ld, s, &s->entries[i]);
	c->queues = xrealloc(c->queues, (n + 2) * sizeof *c->queues);
	c->queues[n] = xstrdup(name);
	c->queues[n + 1] = NULL;
}

/* Splits "handler send_email" into kind and name; name may be NULL. */
static int
section_kind(const char *name, char *kind, size_t kindlen, const char **arg)
{
	const char *sp = strchr(name, ' ');
	size_t n = sp ? (size_t)(sp - name) : strlen(name);

	if (n >= kindlen)
		return -1;
	memcpy(kind, name, n);
	kind[n] = '\0';
	*arg = NULL;
	if (sp != NULL) {
		while (*sp == ' ')
			sp++;
		*arg = sp;
	}
	return 0;
}

static int
is_duplicate(struct loader *ld, size_t upto)
{
	size_t i;

	for (i = 0; i < upto; i++)
		if (strcmp(ld->sections[i].name, ld->sections[upto].name) == 0) {
			ld_error(ld, ld->sections[upto].line, "duplicate section [%s] (first at line %d)",
			    ld->sections[upto].name, ld->sections[i].line);
			return 1;
		}
	return 0;
}

static void
check_duplicate_keys(struct loader *ld, const struct section *s)
{
	size_t i, j;

	for (i = 1; i < s->nentries; i++)
		for (j = 0; j < i; j++)
			if (strcmp(s->entries[i].key, s->entries[j].key) == 0) {
				ld_error(ld, s->entries[i].line,
				    "duplicate key '%s' in [%s] (first at line %d)", s->entries[i].key,
				    s->name, s->entries[j].line);
				break;
			}
}

/* Checks the section headers; returns the kind of section i, or NULL
 * (reported) when it is not one we know. */
static const char *
classify(struct loader *ld, size_t i, char *kind, size_t kindlen, const char **arg)
{
	static const char *const kinds[] = { "database", "worker", "serve", "queue", "handler", "schedule",
		"user" };
	const struct section *s = &ld->sections[i];
	size_t k;

	if (section_kind(s->name, kind, kindlen, arg) < 0)
		goto unknown;
	for (k = 0; k < ARRAY_LEN(kinds); k++)
		if (strcmp(kind, kinds[k]) == 0)
			break;
	if (k == ARRAY_LEN(kinds))
		goto unknown;
	if (k < 3 && *arg != NULL) {
		ld_error(ld, s->line, "[%s] takes no name", kind);
		return NULL;
	}
	if (k >= 3 && (*arg == NULL || !conf_valid_name(*arg))) {
		ld_error(ld, s->line, "[%s] needs a name of 1-%d letters, digits, '_', '.' or '-': [%s NAME]",
		    kind, NAME_MAX_LEN, kind);
		return NULL;
	}
	if (is_duplicate(ld, i))
		return NULL;
	check_duplicate_keys(ld, s);
	return kind;
unknown:
	ld_error(ld, s->line,
	    "unknown section [%s] (expected database, worker, serve, queue NAME, handler TYPE, schedule "
	    "NAME or user NAME)",
	    s->name);
	return NULL;
}

static void
conf_set_defaults(struct conf *c)
{
	c->db.port = 3306;
	c->db.database = xstrdup("jobq");
	c->db.connect_timeout_ms = 10000;
	c->db.read_timeout_ms = 60000;
	c->worker.concurrency = 1;
	c->worker.poll_interval_ms = 250;
	c->worker.reserve_ahead = -1;
	c->worker.reserve_ttl_ms = 60000;
	c->worker.reserve_mode = RESERVE_AUTO;
	c->worker.timezone = xstrdup("UTC");
	c->worker.log_format = LOG_TEXT;
	c->worker.log_level = LOG_INFO;
	c->worker.max_payload = 1024 * 1024;
	c->queues = xcalloc(1, sizeof *c->queues);
	conf_serve_defaults(c);
}

/* max_jobs, max_memory and idle_timeout in [worker] are defaults for
 * persistent handlers: with none configured they would be accepted and
 * do nothing, so they are refused. */
static void
check_worker_mode_keys(struct loader *ld, const struct conf *c, const struct section *s)
{
	size_t i;

	for (i = 0; i < c->nhandlers; i++)
		if (c->handlers[i]->persistent)
			return;
	for (i = 0; i < s->nentries; i++) {
		const char *k = s->entries[i].key;

		if (strcmp(k, "max_jobs") == 0 || strcmp(k, "max_memory") == 0 || strcmp(k, "idle_timeout") == 0)
			ld_error(ld, s->entries[i].line, "%s: only for mode = persistent, and no handler is", k);
	}
}

/* Interprets the sections in the order that makes defaults work. */
static void
interpret(struct loader *ld, struct conf *c)
{
	struct handler defaults;
	char kind[16];
	const char *arg;
	size_t i, pass;
	char **ok = xcalloc(ld->nsections + 1, sizeof *ok);

	conf_handler_defaults(&defaults);
	for (i = 0; i < ld->nsections; i++)
		if (classify(ld, i, kind, sizeof kind, &arg) != NULL)
			ok[i] = xstrdup(kind);
	/* [database], [worker] and [queue] first; then handlers, which
	 * need the defaults and the queues; then schedules, which need the
	 * handlers. */
	for (pass = 0; pass < 3; pass++) {
		if (pass == 1 && strv_len(c->queues) == 0) {
			/* No [queue] section at all: the one queue is "default". */
			c->queues = xrealloc(c->queues, 2 * sizeof *c->queues);
			c->queues[0] = xstrdup("default");
			c->queues[1] = NULL;
		}
		for (i = 0; i < ld->nsections; i++) {
			const struct section *s = &ld->sections[i];

			if (ok[i] == NULL)
				continue;
			section_kind(s->name, kind, sizeof kind, &arg);
			if (pass == 0 && strcmp(kind, "database") == 0)
				conf_db_load(ld, c, s);
			else if (pass == 0 && strcmp(kind, "worker") == 0)
				load_worker(ld, c, s, &defaults);
			else if (pass == 0 && strcmp(kind, "serve") == 0)
				conf_serve_load(ld, c, s);
			else if (pass == 0 && strcmp(kind, "user") == 0)
				conf_user_load(ld, c, s, arg);
			else if (pass == 0 && strcmp(kind, "queue") == 0)
				load_queue(ld, c, s, arg);
			else if (pass == 1 && strcmp(kind, "handler") == 0)
				conf_handler_load(ld, c, s, arg, &defaults);
			else if (pass == 2 && strcmp(kind, "schedule") == 0)
				conf_schedule_load(ld, c, s, arg);
		}
	}
	for (i = 0; i < ld->nsections; i++)
		if (ok[i] != NULL && strcmp(ok[i], "worker") == 0)
			check_worker_mode_keys(ld, c, &ld->sections[i]);
	/* not strv_free(): ok[] has a NULL for each section refused above */
	for (i = 0; i < ld->nsections; i++)
		free(ok[i]);
	free(ok);
	c->worker.on_dead_argv = defaults.on_dead_argv; /* kept for jobs of no handler */
	defaults.on_dead_argv = NULL;
	conf_handler_free_fields(&defaults);
}

/* Checks what only makes sense once everything is loaded. */
static void
validate(struct loader *ld, struct conf *c)
{
	size_t i;

	if (c->worker.queues == NULL) {
		size_t n = strv_len(c->queues);

		c->worker.queues = xcalloc(n + 1, sizeof *c->worker.queues);
		for (i = 0; i < n; i++)
			c->worker.queues[i] = xstrdup(c->queues[i]);
	}
	for (i = 0; c->worker.queues[i] != NULL; i++)
		if (!conf_has_queue(c, c->worker.queues[i]))
			ld_error(ld, ld->queues_line, "queues: unknown queue '%s' (no [queue %s] section)",
			    c->worker.queues[i], c->worker.queues[i]);
	/* A job held ahead counts as running for max_running, and its start
	 * (after the claim that logged it for rate) is late: with limits,
	 * only auto (which then holds none) or 0. */
	if (c->worker.reserve_ahead > 0 && conf_has_flow_limits(c))
		ld_error(ld, ld->reserve_ahead_line,
		    "reserve_ahead: cannot hold jobs ahead with max_running or rate limits configured (use auto or 0)");
	if (c->worker.heartbeat_ms == 0) {
		c->worker.heartbeat_ms = c->worker.reserve_ttl_ms / 3;
		if (c->worker.heartbeat_ms > 10000)
			c->worker.heartbeat_ms = 10000;
	} else if (c->worker.heartbeat_ms * 2 > c->worker.reserve_ttl_ms)
		ld_error(ld, ld->heartbeat_line, "heartbeat: must be at most half of reserve_ttl");
	for (i = 0; i < c->nhandlers; i++) {
		const struct handler *h = c->handlers[i];

		if (h->on_success != NULL && conf_handler(c, h->on_success) == NULL)
			ld_error(ld, h->on_success_line, "on_success: unknown job type '%s' (no [handler %s] section)",
			    h->on_success, h->on_success);
	}
}

static void
loader_free(struct loader *ld)
{
	size_t i, j;

	for (i = 0; i < ld->nsections; i++) {
		for (j = 0; j < ld->sections[i].nentries; j++) {
			free(ld->sections[i].entries[j].key);
			free(ld->sections[i].entries[j].value);
		}
		free(ld->sections[i].entries);
		free(ld->sections[i].name);
	}
	free(ld->sections);
	free(ld->linebuf);
	free(ld->config_dir);
	free(ld->password_file);
}

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

/* Reads and checks the file.  Returns the configuration, or NULL with
 * one "FILE:LINE: message" line per problem appended to errors.
 * Warnings (a readable password; with CONF_CHECK_EXEC, a configuration,
 * handler program or folder that others can change) are appended to
 * warnings either way. */
struct conf *
conf_load(const char *path, int flags, struct buf *errors, struct buf *warnings)
{
	struct loader ld;
	struct conf *c;
	struct stat st;
	int rc;

	memset(&ld, 0, sizeof ld);
	ld.path = path;
	ld.errors = errors;
	ld.warnings = warnings;
	ld.flags = flags;
	if ((ld.fp = fopen(path, "r")) == NULL) {
		ld_error(&ld, 0, "cannot open configuration: %s", strerror(errno));
		return NULL;
	}
	ld.config_dir = dir_of(path);
	rc = ini_parse_stream(read_line, &ld, on_entry, &ld);
	if (rc > 0)
		ld_error(&ld, rc, "syntax error (expected [section], key = value or a comment)");
	else if (rc < 0)
		ld_error(&ld, 0, "cannot read configuration");
	c = xcalloc(1, sizeof *c);
	c->path = xstrdup(path);
	conf_set_defaults(c);
	interpret(&ld, c);
	validate(&ld, c);
	if (ld.has_password == 2)
		buf_printf(warnings,
		    "%s: warning: password_file %s is readable by other users (chmod o-r %s)\n", path,
		    ld.password_file, ld.password_file);
	else if (ld.has_password && fstat(fileno(ld.fp), &st) == 0 && (st.st_mode & S_IROTH))
		buf_printf(warnings,
		    "%s: warning: the database password is readable by other users (chmod o-r %s)\n", path,
		    path);
	if (flags & CONF_CHECK_EXEC)
		ld_check_writers(&ld, 0, "the configuration", path, geteuid());
	fclose(ld.fp);
	rc = ld.nerrors;
	loader_free(&ld);
	if (rc > 0) {
		conf_free(c);
		return NULL;
	}
	return c;
}

void
conf_free(struct conf *c)
{
	size_t i;

	if (c == NULL)
		return;
	free(c->path);
	free(c->db.host);
	free(c->db.socket);
	free(c->db.user);
	free(c->db.password);
	free(c->db.database);
	free(c->db.tls_ca);
	free(c->db.tls_cert);
	free(c->db.tls_key);
	strv_free(c->worker.queues);
	strv_free(c->worker.on_dead_argv);
	free(c->worker.timezone);
	free(c->worker.wakeup_dir);
	strv_free(c->queues);
	conf_flow_free(c);
	for (i = 0; i < c->nhandlers; i++) {
		conf_handler_free_fields(c->handlers[i]);
		free(c->handlers[i]);
	}
	free(c->handlers);
	for (i = 0; i < c->nschedules; i++)
		schedule_free(c->schedules[i]);
	free(c->schedules);
	conf_serve_free(c);
	free(c);
}

/* The handler for a job type, or NULL when the type is unknown. */
const struct handler *
conf_handler(const struct conf *c, const char *type)
{
	size_t i;

	for (i = 0; i < c->nhandlers; i++)
		if (strcmp(c->handlers[i]->type, type) == 0)
			return c->handlers[i];
	return NULL;
}

int
conf_has_queue(const struct conf *c, const char *name)
{
	size_t i;

	for (i = 0; c->queues[i] != NULL; i++)
		if (strcmp(c->queues[i], name) == 0)
			return 1;
	return 0;
}
