/* conf_handler.c -- [handler TYPE] sections, and the handler defaults
 * that [worker] may set for every handler. */
#include "config.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf.h"
#include "conf_argmax.h"
#include "conf_flow.h"
#include "conf_handler.h"
#include "conf_ini.h"
#include "conf_limit.h"
#include "cron.h"
#include "duration.h"
#include "nameset.h"
#include "words.h"

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

/* The longest argument or environment string execve takes, with its NUL
 * (Linux's MAX_ARG_STRLEN, 32 pages of 4K): a longer one fails every
 * run with E2BIG, so it is refused at its line instead. */
#define ARG_STRLEN_MAX (32 * 4096)

/* Refuses (reports, -1) a command line of key with a word execve could
 * not take. */
static int
check_words(struct loader *ld, int line, const char *key, char *const *argv)
{
	size_t i, n;

	for (i = 0; argv[i] != NULL; i++)
		if ((n = strlen(argv[i])) >= ARG_STRLEN_MAX) {
			ld_error(ld, line, "%s: word %zu too long: %zu bytes, and an argument is at most %d", key,
			    i + 1, n, ARG_STRLEN_MAX - 1);
			return -1;
		}
	return 0;
}

/* Refuses (reports, -1) a program path of key, as resolved, longer than
 * a path can be (PATH_MAX with its NUL). */
static int
check_program_path(struct loader *ld, int line, const char *key, const char *prog)
{
	size_t n = strlen(prog);

	if (n < PATH_MAX)
		return 0;
	ld_error(ld, line, "%s: program path too long: %zu bytes, and a path is at most %d", key, n, PATH_MAX - 1);
	return -1;
}

/* Refuses an empty value where a name is wanted (user, group, queue,
 * on_success): it would be looked up as the name "", and be reported
 * as no such user or no [queue ] section. */
static int
not_empty(struct loader *ld, const struct entry *e)
{
	if (e->value[0] != '\0')
		return 0;
	ld_error(ld, e->line, "%s: empty (leave the key out instead)", e->key);
	return -1;
}

static char *search_path(const struct handler *h, const char *prog);

void
conf_handler_defaults(struct handler *h)
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
	h->nenv = 0;
}

void
conf_handler_free_fields(struct handler *h)
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
	free(h->on_success);
	free(h->on_dead);
	strv_free(h->on_dead_argv);
}

/* A copy of a NULL-terminated string list; NULL stays NULL. */
static char **
strv_dup(char *const *v)
{
	size_t i, n = v != NULL ? strv_len(v) : 0;
	char **out;

	if (v == NULL)
		return NULL;
	out = xcalloc(n + 1, sizeof *out);
	for (i = 0; i < n; i++)
		out[i] = xstrdup(v[i]);
	return out;
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
	dst->on_success = NULL; /* per [handler] only */
	dst->on_dead = src->on_dead ? xstrdup(src->on_dead) : NULL;
	dst->on_dead_argv = strv_dup(src->on_dead_argv);
	dst->env = xcalloc(n + 1, sizeof *dst->env);
	dst->nenv = n;
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

/* Sets env.NAME, replacing an earlier value of NAME.  An earlier one can
 * only be [worker]'s, at the same index in a handler's env as in
 * [worker]'s (ld->worker_env): a section's own keys are each given once
 * (a second is refused and dropped), so every other NAME is new.  A look
 * in a hash, not a walk through every variable, for each key. */
static int
handler_set_env(struct loader *ld, struct handler *h, const struct entry *e)
{
	const char *name = e->key + 4;
	size_t n = h->nenv, i, len = strlen(name);

	if (!valid_env_name(name)) {
		ld_error(ld, e->line, "%s: bad environment variable name '%s'", e->key, name);
		return -1;
	}
	if (len + 1 + strlen(e->value) >= ARG_STRLEN_MAX) {
		ld_error(ld, e->line, "%s: too long: %zu bytes as NAME=value, and an environment string is at most %d",
		    e->key, len + 1 + strlen(e->value), ARG_STRLEN_MAX - 1);
		return -1;
	}
	if (strncmp(name, "JOBQ_", 5) == 0 || strcmp(name, "TRACEPARENT") == 0) {
		/* A handler would get the worker's value, not this one. */
		ld_error(ld, e->line, "%s: %s set by the worker", e->key,
		    name[0] == 'J' ? "JOBQ_* variables are" : "TRACEPARENT is");
		return -1;
	}
	if (ld->worker_env != NULL && (i = nameset_get(ld->worker_env, name)) != NAMESET_NONE && i < n) {
		free(h->env[i]);
		h->env[i] = xasprintf("%s=%s", name, e->value);
		return 0;
	}
	h->env = xrealloc(h->env, (n + 2) * sizeof *h->env);
	h->env[n] = xasprintf("%s=%s", name, e->value);
	h->env[n + 1] = NULL;
	h->nenv++;
	return 0;
}

/* Once [worker] is read: indexes its env.NAME names (defaults' env) for
 * handler_set_env. */
void
conf_handler_index_env(struct loader *ld, const struct handler *defaults)
{
	size_t i;

	nameset_free(ld->worker_env);
	strv_free(ld->worker_env_names);
	ld->worker_env = nameset_new();
	ld->worker_env_names = xcalloc(defaults->nenv + 1, sizeof *ld->worker_env_names);
	for (i = 0; i < defaults->nenv; i++) {
		ld->worker_env_names[i] = xstrndup(defaults->env[i], strcspn(defaults->env[i], "="));
		nameset_add(ld->worker_env, ld->worker_env_names[i], i);
	}
}

static int
set_regex(struct loader *ld, const struct entry *e, char **src, pcre2_code **re)
{
	pcre2_code *r;

	/* Empty is no pattern (a handler's way to drop [worker]'s), as an
	 * empty exit list is none: compiled, it would match every stderr,
	 * the empty one too, and dead-letter (or retry) every failed run. */
	if (e->value[0] == '\0') {
		pcre2_code_free(*re);
		*re = NULL;
		free(*src);
		*src = NULL;
		return 0;
	}
	if ((r = ld_regex(ld, e)) == NULL)
		return -1;
	pcre2_code_free(*re);
	*re = r;
	ld_str(src, e->value);
	return 0;
}

static int
set_exit_set(struct loader *ld, const struct entry *e, struct exit_set *set)
{
	char err[ERRSZ];

	if (exit_set_parse(e->value, set, err) < 0) {
		ld_error(ld, e->line, "%s: %s", e->key, err);
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
		ld_error(ld, e->line,
		    "%s: bad jitter '%s' (expected a fraction 0..1 or a percentage like 10%%)", e->key,
		    e->value);
		return -1;
	}
	*out = v;
	return 0;
}

/* A program key (on_dead, on_alert) = PROGRAM ARGS...: split like exec
 * (no shell) and its program found as exec's is: a bare name through
 * h's PATH, a relative path against the configuration file's folder.
 * The argv with argv[0] resolved, or NULL (reported). */
char **
conf_handler_program(struct loader *ld, const struct handler *h, const struct entry *e)
{
	char err[ERRSZ], **argv = words_split(e->value, err), *found;

	if (argv == NULL || argv[0] == NULL) {
		ld_error(ld, e->line, "%s: %s", e->key, argv == NULL ? err : "no program given");
		strv_free(argv);
		return NULL;
	}
	if (argv[0][0] == '/')
		found = xstrdup(argv[0]);
	else if (strchr(argv[0], '/') != NULL)
		found = xasprintf("%s/%s", ld->config_dir, argv[0]);
	else if ((found = search_path(h, argv[0])) == NULL) {
		ld_error(ld, e->line, "%s: '%s' not found in PATH", e->key, argv[0]);
		strv_free(argv);
		return NULL;
	}
	if (check_words(ld, e->line, e->key, argv) < 0 || check_program_path(ld, e->line, e->key, found) < 0) {
		free(found);
		strv_free(argv);
		return NULL;
	}
	if ((ld->flags & CONF_CHECK_EXEC) && access(found, X_OK) < 0) {
		ld_error(ld, e->line, "%s: %s: %s", e->key, found, strerror(errno));
		free(found);
		strv_free(argv);
		return NULL;
	}
	free(argv[0]);
	argv[0] = found;
	return argv;
}

/* on_dead = PROGRAM ARGS... (conf_handler_program). */
static int
set_on_dead(struct loader *ld, struct handler *h, const struct entry *e)
{
	char **argv = conf_handler_program(ld, h, e);

	if (argv == NULL)
		return -1;
	ld_str(&h->on_dead, e->value);
	h->on_dead_line = e->line;
	strv_free(h->on_dead_argv);
	h->on_dead_argv = argv;
	return 0;
}

/* mode, max_jobs, max_memory and idle_timeout (persistent handlers,
 * src/pool.c); 1 when e is none of them. */
static int
set_mode_key(struct loader *ld, struct handler *h, const struct entry *e)
{
	const char *k = e->key;
	int64_t v;
	size_t sz;

	if (strcmp(k, "mode") == 0) {
		if (strcmp(e->value, "exec") != 0 && strcmp(e->value, "persistent") != 0) {
			ld_error(ld, e->line, "mode: '%s' is not exec or persistent", e->value);
			return -1;
		}
		h->persistent = strcmp(e->value, "persistent") == 0;
		return 0;
	}
	if (strcmp(k, "max_jobs") == 0) {
		if (strcmp(e->value, "none") == 0)
			return h->max_jobs = 0, 0;
		if (ld_uint(ld, e, 1, 1000000000, &v) < 0)
			return -1;
		return h->max_jobs = (unsigned)v, 0;
	}
	if (strcmp(k, "max_memory") == 0) {
		if (strcmp(e->value, "none") == 0)
			return h->max_memory = 0, 0;
		if (ld_size(ld, e, &sz) < 0)
			return -1;
		if (sz < 1024 * 1024) {
			ld_error(
			    ld, e->line, "max_memory: '%s' is too small (at least 1M, or none)", e->value);
			return -1;
		}
		return h->max_memory = sz, 0;
	}
	if (strcmp(k, "idle_timeout") == 0) {
		if (strcmp(e->value, "none") == 0)
			return h->idle_timeout_ms = 0, 0;
		return ld_duration(ld, e, &h->idle_timeout_ms, 1000);
	}
	return 1;
}

/* Applies one policy key to h.  Returns 0 when applied, 1 when key is
 * not a policy key, -1 when its value is bad (reported). */
int
conf_handler_set(struct loader *ld, struct handler *h, const struct entry *e)
{
	const char *k = e->key;
	int64_t v;
	char err[ERRSZ];

	if (strncmp(k, "env.", 4) == 0)
		return handler_set_env(ld, h, e);
	if (strcmp(k, "timeout") == 0)
		return ld_duration(ld, e, &h->timeout_ms, 0);
	if (strcmp(k, "kill_grace") == 0)
		return ld_duration(ld, e, &h->kill_grace_ms, 0);
	if (strcmp(k, "max_attempts") == 0) {
		if (ld_uint(ld, e, 1, 1000000, &v) < 0)
			return -1;
		h->max_attempts = (unsigned)v;
		return 0;
	}
	if (strcmp(k, "backoff") == 0) {
		if (backoff_parse(e->value, &h->backoff, err) < 0) {
			ld_error(ld, e->line, "%s: %s", k, err);
			return -1;
		}
		return 0;
	}
	if (strcmp(k, "backoff_jitter") == 0)
		return set_jitter(ld, e, &h->backoff.jitter);
	if (strcmp(k, "retry_until") == 0)
		return ld_duration(ld, e, &h->retry_until_ms, 0);
	if (strcmp(k, "expire_after") == 0)
		return ld_duration(ld, e, &h->expire_after_ms, 0);
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
			ld_error(ld, e->line, "workdir: '%s' is not an absolute path", e->value);
			return -1;
		}
		if (ld_length(ld, e, PATH_MAX - 1, 0, "a path") < 0)
			return -1;
		h->workdir_line = e->line;
		return ld_str(&h->workdir, e->value), 0;
	}
	if (strcmp(k, "user") == 0)
		return not_empty(ld, e) < 0 ? -1 : (ld_str(&h->user, e->value), 0);
	if (strcmp(k, "group") == 0)
		return not_empty(ld, e) < 0 ? -1 : (ld_str(&h->group, e->value), 0);
	if (strcmp(k, "stdout_limit") == 0)
		return h->stdout_limit_line = e->line, ld_output_limit(ld, e, &h->stdout_limit);
	if (strcmp(k, "stderr_limit") == 0)
		return h->stderr_limit_line = e->line, ld_output_limit(ld, e, &h->stderr_limit);
	if (strncmp(k, "limit_", 6) == 0)
		return conf_limit_set(ld, h, e);
	if (strcmp(k, "on_dead") == 0)
		return set_on_dead(ld, h, e);
	return set_mode_key(ld, h, e);
}

/* ---- sections ---- */

/* The handler for a job type, or NULL when the type is unknown. */
const struct handler *
conf_handler(const struct conf *c, const char *type)
{
	size_t i = c->handler_index != NULL ? nameset_get(c->handler_index, type) : NAMESET_NONE;

	return i != NAMESET_NONE ? c->handlers[i] : NULL;
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
				ld_error(ld, line, "exec: '%s' not found in PATH", prog);
			return;
		}
	}
	free(h->argv[0]);
	h->argv[0] = found;
	if (check_program_path(ld, line, "exec", found) < 0 || !(ld->flags & CONF_CHECK_EXEC))
		return;
	if (stat(found, &st) < 0)
		ld_error(ld, line, "exec: %s: %s", found, strerror(errno));
	else if (!S_ISREG(st.st_mode))
		ld_error(ld, line, "exec: %s is not a regular file", found);
	else if (access(found, X_OK) < 0)
		ld_error(ld, line, "exec: %s is not executable: %s", found, strerror(errno));
}

static void
resolve_ids(struct loader *ld, struct handler *h, int user_line, int group_line)
{
	if (h->user != NULL) {
		struct passwd *pw = getpwnam(h->user);

		if (pw == NULL)
			ld_error(ld, user_line, "user: no such user '%s'", h->user);
		else {
			h->uid = pw->pw_uid, h->has_uid = 1;
			if (h->group == NULL)
				h->gid = pw->pw_gid, h->has_gid = 1;
		}
	}
	if (h->group != NULL) {
		struct group *gr = getgrnam(h->group);

		if (gr == NULL)
			ld_error(ld, group_line, "group: no such group '%s'", h->group);
		else
			h->gid = gr->gr_gid, h->has_gid = 1;
	}
}

/* With CONF_CHECK_EXEC: the workdir must be a folder now, as the
 * program must exist (the worker would otherwise fail every job with
 * "chdir failed"). */
static void
check_workdir(struct loader *ld, const struct handler *h)
{
	struct stat st;
	int line = h->workdir_line > 0 ? h->workdir_line : h->line;

	if (h->workdir == NULL)
		return;
	if (stat(h->workdir, &st) < 0)
		ld_error(ld, line, "workdir: %s: %s", h->workdir, strerror(errno));
	else if (!S_ISDIR(st.st_mode))
		ld_error(ld, line, "workdir: %s is not a directory", h->workdir);
}

/* With CONF_CHECK_EXEC: warns when others could change the handler's
 * program, or a script given to it by absolute path. */
static void
check_writers(struct loader *ld, const struct handler *h, int line)
{
	uid_t run_uid = h->has_uid && geteuid() == 0 ? h->uid : geteuid();
	char *what = xasprintf("handler '%s': program", h->type);
	struct stat st;
	size_t i;

	ld_check_writers(ld, line, what, h->argv[0], run_uid);
	free(what);
	what = xasprintf("handler '%s': argument", h->type);
	for (i = 1; h->argv[i] != NULL; i++)
		if (h->argv[i][0] == '/' && stat(h->argv[i], &st) == 0 && S_ISREG(st.st_mode))
			ld_check_writers(ld, line, what, h->argv[i], run_uid);
	free(what);
}

/* With CONF_CHECK_EXEC: only a worker running as root switches to the
 * handler's user and group (spawn.c); any other leaves them unused and
 * runs the handler as itself, which is said here rather than silently
 * done.  A warning, not an error: a worker that runs as the user named
 * anyway, or a check made as another user, is no mistake. */
static void
check_run_ids(struct loader *ld, const struct handler *h, int user_line, int group_line)
{
	uid_t uid = geteuid();

	if (uid == 0)
		return;
	if (h->has_uid && h->uid != uid)
		ld_warning(ld, user_line,
		    "handler '%s': user %s is not used: jobq runs as uid %lu, not root, and so does "
		    "the handler",
		    h->type, h->user, (unsigned long)uid);
	else if (h->group != NULL && h->has_gid && h->gid != getegid())
		ld_warning(ld, group_line,
		    "handler '%s': group %s is not used: jobq runs as uid %lu, not root, and the "
		    "handler keeps gid %lu",
		    h->type, h->group, (unsigned long)uid, (unsigned long)getegid());
}

/* max_jobs, max_memory and idle_timeout mean something only to a
 * persistent handler: set in the section of an exec-mode one, they
 * would be accepted and do nothing.  (As [worker] defaults they apply
 * to the persistent handlers among all.) */
static void
check_mode_keys(struct loader *ld, const struct handler *h, const struct section *s)
{
	size_t i;

	if (h->persistent)
		return;
	for (i = 0; i < s->nentries; i++) {
		const char *k = s->entries[i].key;

		if (strcmp(k, "max_jobs") == 0 || strcmp(k, "max_memory") == 0 ||
		    strcmp(k, "idle_timeout") == 0)
			ld_error(ld, s->entries[i].line,
			    "%s: only for mode = persistent (handler '%s' is mode = exec)", k, h->type);
	}
}

/* Refuses a handler whose exec, or on_dead, cannot be exec'd as a whole
 * with its environment (conf_argmax.c): exec at its line; on_dead at
 * the line of this section's on_dead, or, when it comes from [worker]
 * and only this handler's env.NAME keys make it too long, at exec's
 * line (one from [worker] too long anyway is reported there). */
static void
check_exec_total(struct loader *ld, const struct handler *h, const struct handler *defaults,
    const struct section *s, int exec_line)
{
	uid_t uid = h->has_uid && geteuid() == 0 ? h->uid : geteuid();
	int line = exec_line;
	size_t i;

	if (conf_argmax_check(ld, exec_line, "exec", h->argv, h->env, uid,
	        h->persistent ? ARGMAX_PERSISTENT : ARGMAX_JOB) < 0 ||
	    h->on_dead_argv == NULL)
		return;
	for (i = 0; i < s->nentries; i++)
		if (strcmp(s->entries[i].key, "on_dead") == 0)
			line = s->entries[i].line;
	if (line == exec_line && defaults->on_dead_argv != NULL &&
	    conf_argmax_need(defaults->on_dead_argv, defaults->env, geteuid(), ARGMAX_ALERT) > conf_argmax_limit())
		return;
	conf_argmax_check(ld, line, "on_dead", h->on_dead_argv, h->env, uid, ARGMAX_ALERT);
}

void
conf_handler_load(struct loader *ld, struct conf *c, const struct section *s, const char *type,
    const struct handler *defaults)
{
	struct handler *h = xcalloc(1, sizeof *h);
	int exec_line = s->line, queue_line = s->line, user_line = s->line, group_line = s->line;
	int unknown = ld->nunknown;
	size_t i;
	char err[ERRSZ];

	handler_copy(h, defaults);
	h->type = xstrdup(type);
	h->line = s->line;
	for (i = 0; i < s->nentries; i++) {
		const struct entry *e = &s->entries[i];

		if (strcmp(e->key, "exec") == 0)
			ld_str(&h->exec, e->value), exec_line = e->line;
		else if (strcmp(e->key, "queue") == 0)
			not_empty(ld, e), ld_str(&h->queue, e->value), queue_line = e->line;
		else if (strcmp(e->key, "on_success") == 0)
			not_empty(ld, e), ld_str(&h->on_success, e->value), h->on_success_line = e->line;
		else if (strcmp(e->key, "max_running") == 0 || strcmp(e->key, "rate") == 0)
			conf_flow_handler(ld, h, e); /* per type only: no [worker] default */
		else if (conf_handler_set(ld, h, e) == 1)
			ld_unknown_key(ld, s, e);
		if (strcmp(e->key, "user") == 0)
			user_line = e->line;
		else if (strcmp(e->key, "group") == 0)
			group_line = e->line;
	}
	c->handlers = xgrow(c->handlers, c->nhandlers, 1, sizeof *c->handlers);
	c->handlers[c->nhandlers++] = h;
	if (c->handler_index == NULL)
		c->handler_index = nameset_new();
	nameset_add(c->handler_index, h->type, c->nhandlers - 1);
	if (h->queue == NULL)
		h->queue = xstrdup("default");
	if (h->queue[0] != '\0' && !conf_has_queue(c, h->queue)) /* empty: reported */
		ld_error(
		    ld, queue_line, "queue: unknown queue '%s' (no [queue %s] section)", h->queue, h->queue);
	if (h->exec == NULL) {
		/* after an unknown key (most likely "exce") or a refused line,
		 * that line is the one to fix: a second one here would report
		 * the mistake twice */
		if (ld->nunknown == unknown && s->nrefused == 0)
			ld_error(ld, s->line, "[handler %s] has no exec", type);
		return;
	}
	if ((h->argv = words_split(h->exec, err)) == NULL) {
		ld_error(ld, exec_line, "exec: %s", err);
		return;
	}
	if (check_words(ld, exec_line, "exec", h->argv) < 0)
		return;
	resolve_exec(ld, h, exec_line);
	resolve_ids(ld, h, user_line, group_line);
	check_exec_total(ld, h, defaults, s, exec_line);
	check_mode_keys(ld, h, s);
	conf_limit_mode(ld, h);
	if (ld->flags & CONF_CHECK_EXEC) {
		check_workdir(ld, h);
		conf_limit_check(ld, h);
		check_writers(ld, h, exec_line);
		check_run_ids(ld, h, user_line, group_line);
	}
}
