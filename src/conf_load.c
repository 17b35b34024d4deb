/* conf_load.c -- load jobq.ini into a struct conf: the top of the
 * configuration files, and what the rest of jobq calls (conf_load,
 * conf_free; conf.h declares them with the types).
 *
 * Loading is two passes.  The first (conf_ini.c) lets inih split the
 * file into (section, key, value, line) entries.  The second interprets
 * them here, section by section, through the section files below:
 * [database] (conf_db.c), [worker] (conf_worker.c) and [queue]
 * (conf_queue.c) first, so that each [handler TYPE] (conf_handler.c)
 * starts from the [worker] defaults wherever it stands in the file; then
 * [schedule NAME] (conf_schedule.c), which names handlers.  [serve] and
 * [user NAME] are conf_serve.c's.  Every problem is reported as
 * "FILE:LINE: message", all of them, not only the first: a typo must
 * never silently change behaviour. */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf.h"
#include "conf_db.h"
#include "conf_flow.h"
#include "conf_handler.h"
#include "conf_ini.h"
#include "conf_queue.h"
#include "conf_schedule.h"
#include "conf_serve.h"
#include "conf_watch.h"
#include "conf_worker.h"
#include "nameset.h"

#ifndef SYSCONFDIR
#define SYSCONFDIR "/etc"
#endif

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

/* ---- pass 2: sections ---- */

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

/* The name section header name is known by among the others: "kind
 * name" with one space between them, however many stand in the file
 * ([handler  x] is [handler x]; both would load as handler x), or the
 * header as written when its kind is no word we could know. */
static char *
section_key(const char *name)
{
	char kind[16];
	const char *arg;

	if (section_kind(name, kind, sizeof kind, &arg) < 0)
		return xstrdup(name);
	return arg == NULL ? xstrdup(kind) : xasprintf("%s %s", kind, arg);
}

/* For each section, the index of an earlier one with the same name
 * (section_key), or NAMESET_NONE: hashed, so that a file of 100,000
 * sections is checked in one pass rather than one per section. */
static size_t *
find_duplicate_sections(const struct loader *ld)
{
	size_t *first = xcalloc(ld->nsections + 1, sizeof *first), i;
	char **keys = xcalloc(ld->nsections + 1, sizeof *keys);
	struct nameset *seen = nameset_new();

	for (i = 0; i < ld->nsections; i++) {
		keys[i] = section_key(ld->sections[i].name);
		first[i] = nameset_add(seen, keys[i], i);
	}
	nameset_free(seen);
	strv_free(keys);
	return first;
}

/* Reports each key given twice in one section, and drops the later
 * one: read as well, its value would be reported a second time for the
 * one mistake (a duplicate "concurrency = lots" is a bad number too). */
static void
check_duplicate_keys(struct loader *ld, struct section *s)
{
	struct nameset *seen = nameset_new();
	size_t i, j, kept = 0;

	for (i = 0; i < s->nentries; i++) {
		if ((j = nameset_add(seen, s->entries[i].key, kept)) == NAMESET_NONE) {
			s->entries[kept++] = s->entries[i];
			continue;
		}
		ld_error(ld, s->entries[i].line, "duplicate key '%s' in [%s] (first at line %d)",
		    s->entries[i].key, s->name, s->entries[j].line);
		free(s->entries[i].key);
		free(s->entries[i].value);
	}
	s->nentries = kept;
	nameset_free(seen);
}

/* Checks the section headers; returns the kind of section i, or NULL
 * (reported) when it is not one we know. */
static const char *
classify(struct loader *ld, size_t i, size_t first, char *kind, size_t kindlen, const char **arg)
{
	static const char *const kinds[] = { "database", "worker", "serve", "queue", "handler", "schedule",
		"user" };
	struct section *s = &ld->sections[i];
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
	if (first != NAMESET_NONE) {
		ld_error(ld, s->line, "duplicate section [%s] (first at line %d)", s->name, ld->sections[first].line);
		return NULL;
	}
	if (s->after != NULL)
		ld_error(ld, s->line, "text after the section header [%s]: '%s' (a key goes on a line of its own)",
		    s->name, s->after);
	check_duplicate_keys(ld, s);
	return kind;
unknown:
	ld_error(ld, s->line,
	    "unknown section [%s] (expected database, worker, serve, queue NAME, handler TYPE, schedule "
	    "NAME or user NAME)",
	    s->name);
	return NULL;
}

/* What each part of c holds before the file is read. */
static void
conf_set_defaults(struct conf *c)
{
	conf_db_defaults(c);
	conf_worker_defaults(c);
	c->queues = xcalloc(1, sizeof *c->queues);
	c->queue_descriptions = xcalloc(1, sizeof *c->queue_descriptions);
	conf_serve_defaults(c);
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
	size_t *first = find_duplicate_sections(ld);

	conf_handler_defaults(&defaults);
	for (i = 0; i < ld->nsections; i++)
		if (classify(ld, i, first[i], kind, sizeof kind, &arg) != NULL)
			ok[i] = xstrdup(kind);
	free(first);
	/* [database], [worker] and [queue] first; then handlers, which
	 * need the defaults and the queues; then schedules, which need the
	 * handlers. */
	for (pass = 0; pass < 3; pass++) {
		if (pass == 1)
			conf_queue_default(c);
		for (i = 0; i < ld->nsections; i++) {
			const struct section *s = &ld->sections[i];

			if (ok[i] == NULL)
				continue;
			section_kind(s->name, kind, sizeof kind, &arg);
			if (pass == 0 && strcmp(kind, "database") == 0)
				conf_db_load(ld, c, s);
			else if (pass == 0 && strcmp(kind, "worker") == 0)
				conf_worker_load(ld, c, s, &defaults);
			else if (pass == 0 && strcmp(kind, "serve") == 0)
				conf_serve_load(ld, c, s);
			else if (pass == 0 && strcmp(kind, "user") == 0)
				conf_user_load(ld, c, s, arg);
			else if (pass == 0 && strcmp(kind, "queue") == 0)
				conf_queue_load(ld, c, s, arg);
			else if (pass == 1 && strcmp(kind, "handler") == 0)
				conf_handler_load(ld, c, s, arg, &defaults);
			else if (pass == 2 && strcmp(kind, "schedule") == 0)
				conf_schedule_load(ld, c, s, arg);
		}
	}
	for (i = 0; i < ld->nsections; i++)
		if (ok[i] != NULL && strcmp(ok[i], "worker") == 0)
			conf_worker_check_mode_keys(ld, c, &ld->sections[i]);
	/* not strv_free(): ok[] has a NULL for each section refused above */
	for (i = 0; i < ld->nsections; i++)
		free(ok[i]);
	free(ok);
	c->worker.on_dead_argv = defaults.on_dead_argv; /* kept for jobs of no handler */
	defaults.on_dead_argv = NULL;
	c->worker.env = defaults.env; /* and the environment those two, and on_alert, run in */
	defaults.env = NULL;
	conf_handler_free_fields(&defaults);
}

/* The index of the handler h's on_success names, or NAMESET_NONE (none,
 * or no such handler: reported in validate). */
static size_t
next_of(const struct conf *c, const struct handler *h)
{
	return h->on_success != NULL ? nameset_get(c->handler_index, h->on_success) : NAMESET_NONE;
}

/* Reports the loop through handler k (an index): once, at the line of
 * its first handler in the file, as "a -> b -> a". */
static void
report_loop(struct loader *ld, const struct conf *c, size_t k)
{
	size_t m = k, j;
	struct buf path;

	for (j = next_of(c, c->handlers[k]); j != k; j = next_of(c, c->handlers[j]))
		if (j < m)
			m = j;
	buf_init(&path);
	buf_adds(&path, c->handlers[m]->type);
	j = m;
	do {
		j = next_of(c, c->handlers[j]);
		buf_printf(&path, " -> %s", c->handlers[j]->type);
	} while (j != m);
	ld_error(ld, c->handlers[m]->on_success_line,
	    "on_success: %s is a loop (each done job would enqueue the next forever)", path.data);
	buf_free(&path);
}

/* Refuses each on_success chain that comes back on itself (a -> a,
 * a -> b -> a): every done job would enqueue the next one forever.
 * Each handler has one next step at most, so one walk from each handler
 * not yet seen finds every loop: a walk that meets a handler it marked
 * itself has closed one; one that meets an earlier walk's has not (that
 * walk reported any loop there).  Each handler is visited once. */
static void
on_success_loops(struct loader *ld, const struct conf *c)
{
	size_t *walk = xcalloc(c->nhandlers + 1, sizeof *walk), i, k, next;

	for (i = 0; i < c->nhandlers; i++) {
		if (walk[i] != 0)
			continue;
		for (k = i;; k = next) {
			walk[k] = i + 1;
			next = next_of(c, c->handlers[k]);
			if (next == NAMESET_NONE || walk[next] != 0)
				break;
		}
		if (next != NAMESET_NONE && walk[next] == i + 1)
			report_loop(ld, c, next);
	}
	free(walk);
}

/* Checks what only makes sense once everything is loaded. */
static void
validate(struct loader *ld, struct conf *c)
{
	size_t i;

	conf_worker_validate(ld, c);
	for (i = 0; i < c->nhandlers; i++) {
		const struct handler *h = c->handlers[i];

		if (h->on_success != NULL && h->on_success[0] == '\0')
			continue; /* empty: reported at its line */
		if (h->on_success != NULL && conf_handler(c, h->on_success) == NULL)
			ld_error(ld, h->on_success_line,
			    "on_success: unknown job type '%s' (no [handler %s] section)", h->on_success,
			    h->on_success);
	}
	on_success_loops(ld, c);
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
	int rc;

	if (ld_open(&ld, path, flags, errors, warnings) < 0)
		return NULL;
	ld_read(&ld);
	c = xcalloc(1, sizeof *c);
	c->path = xstrdup(path);
	conf_set_defaults(c);
	interpret(&ld, c);
	validate(&ld, c);
	conf_db_check_password(&ld);
	if (flags & CONF_CHECK_EXEC)
		ld_check_writers(&ld, 0, "the configuration", path, geteuid());
	ld_errors_end(&ld);
	rc = ld.nerrors;
	ld_free(&ld);
	if (rc > 0) {
		conf_free(c);
		return NULL;
	}
	return c;
}

/* Frees c and all it holds; NULL is allowed. */
void
conf_free(struct conf *c)
{
	size_t i;

	if (c == NULL)
		return;
	free(c->path);
	conf_db_free(c);
	conf_worker_free(c);
	strv_free(c->queues);
	strv_free(c->queue_descriptions);
	conf_flow_free(c);
	conf_watch_free(c);
	for (i = 0; i < c->nhandlers; i++) {
		conf_handler_free_fields(c->handlers[i]);
		free(c->handlers[i]);
	}
	free(c->handlers);
	nameset_free(c->handler_index);
	nameset_free(c->queue_index);
	for (i = 0; i < c->nschedules; i++)
		schedule_free(c->schedules[i]);
	free(c->schedules);
	conf_serve_free(c);
	free(c);
}
