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
#include "cron.h"
#include "duration.h"
#include "words.h"

#ifndef SYSCONFDIR
#define SYSCONFDIR "/etc"
#endif

struct entry {
	char *key;
	char *value;
	int line;
};

struct section {
	char *name; /* "handler send_email" */
	int line;
	struct entry *entries;
	size_t nentries;
};

struct loader {
	const char *path;
	FILE *fp;
	int lineno;
	char *linebuf;
	size_t linecap;
	int continuation; /* the current line is indented */
	struct section *sections;
	size_t nsections;
	struct buf *errors;
	int nerrors;
	int flags;
	int has_password;
	char *password_file; /* set when it is readable by others */
	char *config_dir;
	int queues_line;    /* of [worker] queues, checked in validate() */
	int heartbeat_line; /* of [worker] heartbeat */
};

static void PRINTFLIKE(3, 4) conf_error(struct loader *ld, int line, const char *fmt, ...)
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
	if (n >= num - 1) {
		conf_error(ld, ld->lineno, "line too long (%zd characters, at most %d)", n, num - 2);
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
		conf_error(ld, ld->lineno, "syntax error (expected [section], key = value or a comment)");
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
		conf_error(ld, ld->lineno, "indented line: continuation lines are not supported");
		return 1;
	}
	if (ld->nsections == 0) {
		conf_error(ld, ld->lineno, "key '%s' outside any section", key);
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

static int
get_duration(struct loader *ld, const struct entry *e, int64_t *out, int64_t min_ms)
{
	char err[ERRSZ];

	if (duration_parse(e->value, out, err) < 0) {
		conf_error(ld, e->line, "%s: %s", e->key, err);
		return -1;
	}
	if (*out < min_ms) {
		char d[32];

		duration_format(min_ms, d, sizeof d);
		conf_error(ld, e->line, "%s: '%s' is too short (at least %s)", e->key, e->value, d);
		return -1;
	}
	return 0;
}

static int
get_uint(struct loader *ld, const struct entry *e, int64_t min, int64_t max, int64_t *out)
{
	if (str_to_int64(e->value, min, max, out) < 0) {
		conf_error(ld, e->line, "%s: bad number '%s' (expected a whole number from %lld to %lld)",
		    e->key, e->value, (long long)min, (long long)max);
		return -1;
	}
	return 0;
}

static int
get_size(struct loader *ld, const struct entry *e, size_t *out)
{
	char err[ERRSZ];

	if (size_parse(e->value, out, err) < 0) {
		conf_error(ld, e->line, "%s: %s", e->key, err);
		return -1;
	}
	return 0;
}

/* Output kept per stream: 1 KiB to 4 MiB, so that the stored text (at
 * most three bytes per kept byte after UTF-8 repair) fits MEDIUMTEXT. */
static int
get_output_limit(struct loader *ld, const struct entry *e, size_t *out)
{
	if (get_size(ld, e, out) < 0)
		return -1;
	if (*out < 1024 || *out > 4 * 1024 * 1024) {
		conf_error(ld, e->line, "%s: '%s' is out of range (1K to 4M)", e->key, e->value);
		return -1;
	}
	return 0;
}

static int
get_bool(struct loader *ld, const struct entry *e, int *out)
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
	conf_error(ld, e->line, "%s: expected yes or no, not '%s'", e->key, e->value);
	return -1;
}

static void
set_str(char **dst, const char *value)
{
	free(*dst);
	*dst = xstrdup(value);
}

static pcre2_code *
get_regex(struct loader *ld, const struct entry *e)
{
	int code;
	PCRE2_SIZE offset;
	pcre2_code *re;

	re = pcre2_compile((PCRE2_SPTR)e->value, PCRE2_ZERO_TERMINATED, PCRE2_UTF, &code, &offset, NULL);
	if (re == NULL) {
		PCRE2_UCHAR msg[256];

		pcre2_get_error_message(code, msg, sizeof msg);
		conf_error(ld, e->line, "%s: bad regular expression at offset %zu: %s", e->key,
		    (size_t)offset, (const char *)msg);
	}
	return re;
}

/* ---- exit status sets ---- */

int
exit_set_has(const struct exit_set *s, int code)
{
	return code >= 0 && code <= 255 && (s->bits[code / 8] & (1u << (code % 8)));
}

/* Parses "64-78, 100" into a set; "none" or "" is the empty set. */
int
exit_set_parse(const char *s, struct exit_set *out, char *err)
{
	char **items = NULL;
	int n, i;

	memset(out, 0, sizeof *out);
	if (strcmp(s, "none") == 0 || *s == '\0')
		return 0;
	if ((n = split_list(s, &items)) < 0)
		goto bad;
	for (i = 0; i < n; i++) {
		int64_t lo, hi;
		char *dash = strchr(items[i] + 1, '-');

		if (dash != NULL)
			*dash = '\0';
		if (str_to_int64(items[i], 1, 255, &lo) < 0)
			goto bad;
		hi = lo;
		if (dash != NULL && (str_to_int64(dash + 1, lo, 255, &hi) < 0))
			goto bad;
		for (; lo <= hi; lo++)
			out->bits[lo / 8] |= (uint8_t)(1u << (lo % 8));
	}
	strv_free(items);
	return 0;
bad:
	strv_free(items);
	errf(err, "bad exit status list '%s' (expected e.g. '64-78, 100' with statuses 1-255, or 'none')", s);
	return -1;
}

/* ---- handler keys (also the defaults in [worker]) ---- */

static void
handler_defaults(struct handler *h)
{
	char err[ERRSZ];

	memset(h, 0, sizeof *h);
	h->timeout_ms = 15 * 60 * 1000;
	h->kill_grace_ms = 10 * 1000;
	h->max_attempts = 5;
	backoff_default(&h->backoff);
	exit_set_parse("64-78", &h->permanent_exit, err);
	exit_set_parse("75", &h->retry_exit, err);
	h->stdout_limit = 64 * 1024;
	h->stderr_limit = 64 * 1024;
	h->env = xcalloc(1, sizeof *h->env);
}

static void
handler_free_fields(struct handler *h)
{
	free(h->type);
	free(h->exec);
	strv_free(h->argv);
	free(h->queue);
	backoff_free(&h->backoff);
	free(h->permanent_stderr_src);
	free(h->retry_stderr_src);
	pcre2_code_free(h->permanent_stderr);
	pcre2_code_free(h->retry_stderr);
	free(h->workdir);
	free(h->user);
	free(h->group);
	strv_free(h->env);
}

static void
handler_copy(struct handler *dst, const struct handler *src)
{
	size_t i, n = strv_len(src->env);

	*dst = *src;
	dst->type = src->type ? xstrdup(src->type) : NULL;
	dst->exec = src->exec ? xstrdup(src->exec) : NULL;
	dst->argv = NULL;
	dst->queue = src->queue ? xstrdup(src->queue) : NULL;
	backoff_copy(&dst->backoff, &src->backoff);
	dst->permanent_stderr_src = src->permanent_stderr_src ? xstrdup(src->permanent_stderr_src) : NULL;
	dst->retry_stderr_src = src->retry_stderr_src ? xstrdup(src->retry_stderr_src) : NULL;
	dst->permanent_stderr = src->permanent_stderr ? pcre2_code_copy(src->permanent_stderr) : NULL;
	dst->retry_stderr = src->retry_stderr ? pcre2_code_copy(src->retry_stderr) : NULL;
	dst->workdir = src->workdir ? xstrdup(src->workdir) : NULL;
	dst->user = src->user ? xstrdup(src->user) : NULL;
	dst->group = src->group ? xstrdup(src->group) : NULL;
	dst->env = xcalloc(n + 1, sizeof *dst->env);
	for (i = 0; i < n; i++)
		dst->env[i] = xstrdup(src->env[i]);
}

static int
valid_env_name(const char *s)
{
	size_t i;

	if (*s == '\0' || isdigit((unsigned char)*s))
		return 0;
	for (i = 0; s[i] != '\0'; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_')
			return 0;
	return 1;
}

/* Sets env.NAME, replacing an earlier value of NAME. */
static int
handler_set_env(struct loader *ld, struct handler *h, const struct entry *e)
{
	const char *name = e->key + 4;
	size_t n = strv_len(h->env), i, len = strlen(name);

	if (!valid_env_name(name)) {
		conf_error(ld, e->line, "%s: bad environment variable name '%s'", e->key, name);
		return -1;
	}
	if (strncmp(name, "JOBQ_", 5) == 0) {
		conf_error(ld, e->line, "%s: JOBQ_* variables are set by the worker", e->key);
		return -1;
	}
	for (i = 0; i < n; i++)
		if (strncmp(h->env[i], name, len) == 0 && h->env[i][len] == '=') {
			free(h->env[i]);
			h->env[i] = xasprintf("%s=%s", name, e->value);
			return 0;
		}
	h->env = xrealloc(h->env, (n + 2) * sizeof *h->env);
	h->env[n] = xasprintf("%s=%s", name, e->value);
	h->env[n + 1] = NULL;
	return 0;
}

static int
set_regex(struct loader *ld, const struct entry *e, char **src, pcre2_code **re)
{
	pcre2_code *r = get_regex(ld, e);

	if (r == NULL)
		return -1;
	pcre2_code_free(*re);
	*re = r;
	set_str(src, e->value);
	return 0;
}

static int
set_exit_set(struct loader *ld, const struct entry *e, struct exit_set *set)
{
	char err[ERRSZ];

	if (exit_set_parse(e->value, set, err) < 0) {
		conf_error(ld, e->line, "%s: %s", e->key, err);
		return -1;
	}
	return 0;
}

static int
set_jitter(struct loader *ld, const struct entry *e, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(e->value, &end);
	if (end != e->value && *end == '%')
		v /= 100, end++;
	if (errno != 0 || end == e->value || *end != '\0' || v < 0 || v > 1) {
		conf_error(ld, e->line,
		    "%s: bad jitter '%s' (expected a fraction 0..1 or a percentage like 10%%)", e->key,
		    e->value);
		return -1;
	}
	*out = v;
	return 0;
}

/* Applies one policy key to h.  Returns 0 when applied, 1 when key is
 * not a policy key, -1 when its value is bad (reported). */
static int
handler_set(struct loader *ld, struct handler *h, const struct entry *e)
{
	const char *k = e->key;
	int64_t v;
	char err[ERRSZ];

	if (strncmp(k, "env.", 4) == 0)
		return handler_set_env(ld, h, e);
	if (strcmp(k, "timeout") == 0)
		return get_duration(ld, e, &h->timeout_ms, 0);
	if (strcmp(k, "kill_grace") == 0)
		return get_duration(ld, e, &h->kill_grace_ms, 0);
	if (strcmp(k, "max_attempts") == 0) {
		if (get_uint(ld, e, 1, 1000000, &v) < 0)
			return -1;
		h->max_attempts = (unsigned)v;
		return 0;
	}
	if (strcmp(k, "backoff") == 0) {
		if (backoff_parse(e->value, &h->backoff, err) < 0) {
			conf_error(ld, e->line, "%s: %s", k, err);
			return -1;
		}
		return 0;
	}
	if (strcmp(k, "backoff_jitter") == 0)
		return set_jitter(ld, e, &h->backoff.jitter);
	if (strcmp(k, "retry_until") == 0)
		return get_duration(ld, e, &h->retry_until_ms, 0);
	if (strcmp(k, "permanent_exit") == 0)
		return set_exit_set(ld, e, &h->permanent_exit);
	if (strcmp(k, "retry_exit") == 0)
		return set_exit_set(ld, e, &h->retry_exit);
	if (strcmp(k, "permanent_stderr") == 0)
		return set_regex(ld, e, &h->permanent_stderr_src, &h->permanent_stderr);
	if (strcmp(k, "retry_stderr") == 0)
		return set_regex(ld, e, &h->retry_stderr_src, &h->retry_stderr);
	if (strcmp(k, "workdir") == 0) {
		if (e->value[0] != '/') {
			conf_error(ld, e->line, "workdir: '%s' is not an absolute path", e->value);
			return -1;
		}
		return set_str(&h->workdir, e->value), 0;
	}
	if (strcmp(k, "user") == 0)
		return set_str(&h->user, e->value), 0;
	if (strcmp(k, "group") == 0)
		return set_str(&h->group, e->value), 0;
	if (strcmp(k, "stdout_limit") == 0)
		return get_output_limit(ld, e, &h->stdout_limit);
	if (strcmp(k, "stderr_limit") == 0)
		return get_output_limit(ld, e, &h->stderr_limit);
	return 1;
}

/* ---- sections ---- */

static void
unknown_key(struct loader *ld, const struct section *s, const struct entry *e)
{
	conf_error(ld, e->line, "unknown key '%s' in [%s]", e->key, s->name);
}

static int
db_set(struct loader *ld, struct db_conf *db, const struct entry *e)
{
	const char *k = e->key;
	int64_t v;
	int b;

	if (strcmp(k, "host") == 0)
		set_str(&db->host, e->value);
	else if (strcmp(k, "port") == 0) {
		if (get_uint(ld, e, 1, 65535, &v) < 0)
			return -1;
		db->port = (unsigned)v;
	} else if (strcmp(k, "socket") == 0)
		set_str(&db->socket, e->value);
	else if (strcmp(k, "user") == 0)
		set_str(&db->user, e->value);
	else if (strcmp(k, "password") == 0) {
		set_str(&db->password, e->value);
		ld->has_password = 1;
	} else if (strcmp(k, "password_file") == 0)
		return -2; /* read after the section: see read_password_file */
	else if (strcmp(k, "database") == 0)
		set_str(&db->database, e->value);
	else if (strcmp(k, "tls") == 0) {
		if (strcmp(e->value, "verify") == 0)
			db->tls = TLS_VERIFY;
		else if (get_bool(ld, e, &b) < 0)
			return -1;
		else
			db->tls = b ? TLS_ON : TLS_OFF;
	} else if (strcmp(k, "tls_ca") == 0)
		set_str(&db->tls_ca, e->value);
	else if (strcmp(k, "tls_cert") == 0)
		set_str(&db->tls_cert, e->value);
	else if (strcmp(k, "tls_key") == 0)
		set_str(&db->tls_key, e->value);
	else if (strcmp(k, "connect_timeout") == 0)
		return get_duration(ld, e, &db->connect_timeout_ms, 1000);
	else if (strcmp(k, "read_timeout") == 0)
		return get_duration(ld, e, &db->read_timeout_ms, 1000);
	else
		return 1;
	return 0;
}

/* Reads the first line of password_file; relative paths are relative to
 * the configuration file. */
static void
read_password_file(struct loader *ld, struct db_conf *db, const struct entry *e)
{
	char *path = e->value[0] == '/' ? xstrdup(e->value) : xasprintf("%s/%s", ld->config_dir, e->value);
	FILE *fp = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	struct stat st;

	if (fp == NULL) {
		conf_error(ld, e->line, "password_file: open %s: %s", path, strerror(errno));
		free(path);
		return;
	}
	if (fstat(fileno(fp), &st) == 0 && (st.st_mode & S_IROTH)) {
		ld->has_password = 2;
		free(ld->password_file);
		ld->password_file = xstrdup(path);
	}
	n = getline(&line, &cap, fp);
	fclose(fp);
	if (n < 0)
		n = 0, line = line ? line : xstrdup("");
	while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
		line[--n] = '\0';
	free(db->password);
	db->password = line;
	free(path);
}

static void
load_database(struct loader *ld, struct conf *c, const struct section *s)
{
	size_t i;

	for (i = 0; i < s->nentries; i++) {
		int rc = db_set(ld, &c->db, &s->entries[i]);

		if (rc == 1)
			unknown_key(ld, s, &s->entries[i]);
		else if (rc == -2)
			read_password_file(ld, &c->db, &s->entries[i]);
	}
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
			conf_error(ld, e->line,
			    "queues: expected a comma-separated list of queue names, not '%s'", e->value);
			w->queues = NULL;
			return -1;
		}
	} else if (strcmp(k, "concurrency") == 0) {
		if (get_uint(ld, e, 1, 1024, &v) < 0)
			return -1;
		w->concurrency = (unsigned)v;
	} else if (strcmp(k, "poll_interval") == 0)
		return get_duration(ld, e, &w->poll_interval_ms, 10);
	else if (strcmp(k, "reserve_ttl") == 0)
		return get_duration(ld, e, &w->reserve_ttl_ms, 1000);
	else if (strcmp(k, "heartbeat") == 0) {
		ld->heartbeat_line = e->line;
		return get_duration(ld, e, &w->heartbeat_ms, 100);
	} else if (strcmp(k, "reserve_mode") == 0) {
		if (strcmp(e->value, "auto") == 0)
			w->reserve_mode = RESERVE_AUTO;
		else if (strcmp(e->value, "skip-locked") == 0)
			w->reserve_mode = RESERVE_SKIP_LOCKED;
		else if (strcmp(e->value, "update") == 0)
			w->reserve_mode = RESERVE_UPDATE;
		else {
			conf_error(ld, e->line,
			    "reserve_mode: expected auto, skip-locked or update, not '%s'", e->value);
			return -1;
		}
	} else if (strcmp(k, "timezone") == 0)
		set_str(&w->timezone, e->value);
	else if (strcmp(k, "log_format") == 0) {
		if (log_format_parse(e->value, &w->log_format) < 0) {
			conf_error(ld, e->line, "log_format: expected text or json, not '%s'", e->value);
			return -1;
		}
	} else if (strcmp(k, "max_payload") == 0)
		return get_size(ld, e, &w->max_payload);
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

		if (worker_set(ld, c, e) == 1 && handler_set(ld, defaults, e) == 1)
			unknown_key(ld, s, e);
	}
}

static void
load_queue(struct loader *ld, struct conf *c, const struct section *s, const char *name)
{
	size_t i, n = strv_len(c->queues);

	for (i = 0; i < s->nentries; i++)
		if (strcmp(s->entries[i].key, "description") != 0)
			unknown_key(ld, s, &s->entries[i]);
	c->queues = xrealloc(c->queues, (n + 2) * sizeof *c->queues);
	c->queues[n] = xstrdup(name);
	c->queues[n + 1] = NULL;
}

/* Looks prog up in the handler's env.PATH, else the worker's PATH. */
static char *
search_path(const struct handler *h, const char *prog)
{
	const char *path = getenv("PATH");
	char *copy, *save = NULL, *dir, *found = NULL;
	struct stat st;
	size_t i;

	for (i = 0; h->env[i] != NULL; i++)
		if (strncmp(h->env[i], "PATH=", 5) == 0)
			path = h->env[i] + 5;
	copy = xstrdup(path != NULL ? path : "/usr/local/bin:/usr/bin:/bin");
	for (dir = strtok_r(copy, ":", &save); dir != NULL && found == NULL;
	     dir = strtok_r(NULL, ":", &save)) {
		char *cand = xasprintf("%s/%s", dir, prog);

		if (access(cand, X_OK) == 0 && stat(cand, &st) == 0 && S_ISREG(st.st_mode))
			found = cand;
		else
			free(cand);
	}
	free(copy);
	return found;
}

/* Resolves argv[0]: a bare name through PATH (the handler's env.PATH
 * when it has one), a relative path against the configuration file's
 * folder.  With CONF_CHECK_EXEC the program must be an executable file. */
static void
resolve_exec(struct loader *ld, struct handler *h, int line)
{
	char *prog = h->argv[0], *found = NULL;
	struct stat st;

	if (prog[0] == '/')
		found = xstrdup(prog);
	else if (strchr(prog, '/') != NULL)
		found = xasprintf("%s/%s", ld->config_dir, prog);
	else {
		found = search_path(h, prog);
		if (found == NULL) {
			if (ld->flags & CONF_CHECK_EXEC)
				conf_error(ld, line, "exec: '%s' not found in PATH", prog);
			return;
		}
	}
	free(h->argv[0]);
	h->argv[0] = found;
	if (!(ld->flags & CONF_CHECK_EXEC))
		return;
	if (stat(found, &st) < 0)
		conf_error(ld, line, "exec: %s: %s", found, strerror(errno));
	else if (!S_ISREG(st.st_mode))
		conf_error(ld, line, "exec: %s is not a regular file", found);
	else if (access(found, X_OK) < 0)
		conf_error(ld, line, "exec: %s is not executable: %s", found, strerror(errno));
}

static void
resolve_ids(struct loader *ld, struct handler *h, int user_line, int group_line)
{
	if (h->user != NULL) {
		struct passwd *pw = getpwnam(h->user);

		if (pw == NULL)
			conf_error(ld, user_line, "user: no such user '%s'", h->user);
		else {
			h->uid = pw->pw_uid, h->has_uid = 1;
			if (h->group == NULL)
				h->gid = pw->pw_gid, h->has_gid = 1;
		}
	}
	if (h->group != NULL) {
		struct group *gr = getgrnam(h->group);

		if (gr == NULL)
			conf_error(ld, group_line, "group: no such group '%s'", h->group);
		else
			h->gid = gr->gr_gid, h->has_gid = 1;
	}
}

static void
load_handler(struct loader *ld, struct conf *c, const struct section *s, const char *type,
    const struct handler *defaults)
{
	struct handler *h = xcalloc(1, sizeof *h);
	int exec_line = s->line, queue_line = s->line, user_line = s->line, group_line = s->line;
	size_t i;
	char err[ERRSZ];

	handler_copy(h, defaults);
	h->type = xstrdup(type);
	h->line = s->line;
	for (i = 0; i < s->nentries; i++) {
		const struct entry *e = &s->entries[i];

		if (strcmp(e->key, "exec") == 0)
			set_str(&h->exec, e->value), exec_line = e->line;
		else if (strcmp(e->key, "queue") == 0)
			set_str(&h->queue, e->value), queue_line = e->line;
		else if (handler_set(ld, h, e) == 1)
			unknown_key(ld, s, e);
		if (strcmp(e->key, "user") == 0)
			user_line = e->line;
		else if (strcmp(e->key, "group") == 0)
			group_line = e->line;
	}
	c->handlers = xrealloc(c->handlers, (c->nhandlers + 1) * sizeof *c->handlers);
	c->handlers[c->nhandlers++] = h;
	if (h->queue == NULL)
		h->queue = xstrdup("default");
	if (!conf_has_queue(c, h->queue))
		conf_error(
		    ld, queue_line, "queue: unknown queue '%s' (no [queue %s] section)", h->queue, h->queue);
	if (h->exec == NULL) {
		conf_error(ld, s->line, "[handler %s] has no exec", type);
		return;
	}
	if ((h->argv = words_split(h->exec, err)) == NULL) {
		conf_error(ld, exec_line, "exec: %s", err);
		return;
	}
	resolve_exec(ld, h, exec_line);
	resolve_ids(ld, h, user_line, group_line);
}

static void
load_schedule(struct loader *ld, struct conf *c, const struct section *s, const char *name)
{
	struct schedule *sc = xcalloc(1, sizeof *sc);
	int cron_line = s->line, type_line = s->line, queue_line = s->line;
	size_t i;

	sc->name = xstrdup(name);
	sc->line = s->line;
	c->schedules = xrealloc(c->schedules, (c->nschedules + 1) * sizeof *c->schedules);
	c->schedules[c->nschedules++] = sc;
	for (i = 0; i < s->nentries; i++) {
		const struct entry *e = &s->entries[i];
		int64_t v;

		if (strcmp(e->key, "cron") == 0)
			set_str(&sc->cron, e->value), cron_line = e->line;
		else if (strcmp(e->key, "type") == 0)
			set_str(&sc->type, e->value), type_line = e->line;
		else if (strcmp(e->key, "queue") == 0)
			set_str(&sc->queue, e->value), queue_line = e->line;
		else if (strcmp(e->key, "timezone") == 0)
			set_str(&sc->timezone, e->value);
		else if (strcmp(e->key, "payload") == 0) {
			cJSON *j = cJSON_Parse(e->value);

			if (j == NULL)
				conf_error(ld, e->line, "payload: not valid JSON: %s", e->value);
			cJSON_Delete(j);
			set_str(&sc->payload, e->value);
		} else if (strcmp(e->key, "priority") == 0) {
			if (get_uint(ld, e, -32768, 32767, &v) == 0)
				sc->priority = (int)v;
		} else
			unknown_key(ld, s, e);
	}
	if (sc->cron == NULL)
		conf_error(ld, s->line, "[schedule %s] has no cron", name);
	else {
		char err[ERRSZ];
		struct cron *cr = cron_parse(sc->cron, err);

		if (cr == NULL)
			conf_error(ld, cron_line, "cron: %s", err);
		cron_free(cr);
	}
	if (sc->type == NULL)
		conf_error(ld, s->line, "[schedule %s] has no type", name);
	else if (conf_handler(c, sc->type) == NULL)
		conf_error(ld, type_line, "type: unknown job type '%s' (no [handler %s] section)", sc->type,
		    sc->type);
	if (sc->payload == NULL)
		sc->payload = xstrdup("{}");
	if (sc->queue == NULL && sc->type != NULL && conf_handler(c, sc->type) != NULL)
		sc->queue = xstrdup(conf_handler(c, sc->type)->queue);
	if (sc->queue != NULL && !conf_has_queue(c, sc->queue))
		conf_error(ld, queue_line, "queue: unknown queue '%s' (no [queue %s] section)", sc->queue,
		    sc->queue);
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
			conf_error(ld, ld->sections[upto].line, "duplicate section [%s] (first at line %d)",
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
				conf_error(ld, s->entries[i].line,
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
	static const char *const kinds[] = { "database", "worker", "queue", "handler", "schedule" };
	const struct section *s = &ld->sections[i];
	size_t k;

	if (section_kind(s->name, kind, kindlen, arg) < 0)
		goto unknown;
	for (k = 0; k < ARRAY_LEN(kinds); k++)
		if (strcmp(kind, kinds[k]) == 0)
			break;
	if (k == ARRAY_LEN(kinds))
		goto unknown;
	if (k < 2 && *arg != NULL) {
		conf_error(ld, s->line, "[%s] takes no name", kind);
		return NULL;
	}
	if (k >= 2 && (*arg == NULL || !conf_valid_name(*arg))) {
		conf_error(ld, s->line,
		    "[%s] needs a name of 1-%d letters, digits, '_', '.' or '-': [%s NAME]", kind,
		    NAME_MAX_LEN, kind);
		return NULL;
	}
	if (is_duplicate(ld, i))
		return NULL;
	check_duplicate_keys(ld, s);
	return kind;
unknown:
	conf_error(ld, s->line,
	    "unknown section [%s] (expected database, worker, queue NAME, handler TYPE or schedule NAME)",
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
	c->worker.poll_interval_ms = 100;
	c->worker.reserve_ttl_ms = 60000;
	c->worker.reserve_mode = RESERVE_AUTO;
	c->worker.timezone = xstrdup("UTC");
	c->worker.log_format = LOG_TEXT;
	c->worker.max_payload = 1024 * 1024;
	c->queues = xcalloc(1, sizeof *c->queues);
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

	handler_defaults(&defaults);
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
				load_database(ld, c, s);
			else if (pass == 0 && strcmp(kind, "worker") == 0)
				load_worker(ld, c, s, &defaults);
			else if (pass == 0 && strcmp(kind, "queue") == 0)
				load_queue(ld, c, s, arg);
			else if (pass == 1 && strcmp(kind, "handler") == 0)
				load_handler(ld, c, s, arg, &defaults);
			else if (pass == 2 && strcmp(kind, "schedule") == 0)
				load_schedule(ld, c, s, arg);
		}
	}
	/* not strv_free(): ok[] has a NULL for each section refused above */
	for (i = 0; i < ld->nsections; i++)
		free(ok[i]);
	free(ok);
	handler_free_fields(&defaults);
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
			conf_error(ld, ld->queues_line, "queues: unknown queue '%s' (no [queue %s] section)",
			    c->worker.queues[i], c->worker.queues[i]);
	if (c->worker.heartbeat_ms == 0) {
		c->worker.heartbeat_ms = c->worker.reserve_ttl_ms / 3;
		if (c->worker.heartbeat_ms > 10000)
			c->worker.heartbeat_ms = 10000;
	} else if (c->worker.heartbeat_ms * 2 > c->worker.reserve_ttl_ms)
		conf_error(ld, ld->heartbeat_line, "heartbeat: must be at most half of reserve_ttl");
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
 * Warnings (a readable password) are appended to warnings either way. */
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
	ld.flags = flags;
	if ((ld.fp = fopen(path, "r")) == NULL) {
		conf_error(&ld, 0, "cannot open configuration: %s", strerror(errno));
		return NULL;
	}
	ld.config_dir = dir_of(path);
	rc = ini_parse_stream(read_line, &ld, on_entry, &ld);
	if (rc > 0)
		conf_error(&ld, rc, "syntax error (expected [section], key = value or a comment)");
	else if (rc < 0)
		conf_error(&ld, 0, "cannot read configuration");
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
	free(c->worker.timezone);
	strv_free(c->queues);
	for (i = 0; i < c->nhandlers; i++) {
		handler_free_fields(c->handlers[i]);
		free(c->handlers[i]);
	}
	free(c->handlers);
	for (i = 0; i < c->nschedules; i++) {
		struct schedule *s = c->schedules[i];

		free(s->name);
		free(s->cron);
		free(s->type);
		free(s->payload);
		free(s->queue);
		free(s->timezone);
		free(s);
	}
	free(c->schedules);
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
