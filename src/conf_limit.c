/* conf_limit.c -- the resource limits of a handler (limit_as,
 * limit_cpu, limit_nofile, limit_nproc; in [handler TYPE] or as [worker]
 * defaults): their keys, their values, and the check against the
 * worker's own hard limits.  spawn.c applies them with setrlimit in
 * the child. */
#include "config.h"

#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "conf.h"
#include "conf_ini.h"
#include "conf_limit.h"

static const struct {
	const char *key;
	int resource;
} limit_defs[NLIMITS] = {
	[LIMIT_AS] = { "limit_as", RLIMIT_AS },
	[LIMIT_CPU] = { "limit_cpu", RLIMIT_CPU },
	[LIMIT_NOFILE] = { "limit_nofile", RLIMIT_NOFILE },
	[LIMIT_NPROC] = { "limit_nproc", RLIMIT_NPROC },
};

/* The INI key of limit l ("limit_as"). */
const char *
conf_limit_key(enum handler_limit l)
{
	return limit_defs[l].key;
}

/* The setrlimit resource of limit l (RLIMIT_AS). */
int
conf_limit_resource(enum handler_limit l)
{
	return limit_defs[l].resource;
}

/* Parses one limit_* value into *out (0 for "none": keep the worker's
 * own limit).  The lower bounds refuse values no program can start
 * under, which are almost always a missing unit ("limit_as = 512"):
 *   limit_as      a size, at least 1M
 *   limit_cpu     a duration of whole seconds (RLIMIT_CPU counts
 *                 seconds), 1s to 365d
 *   limit_nofile  8 to 1048576 (the kernel's default nr_open): the
 *                 dynamic loader and fds 0-2 need a few
 *   limit_nproc   1 to 4194304 (the kernel's PID_MAX_LIMIT) */
static int
parse_limit(struct loader *ld, const struct entry *e, enum handler_limit l, uint64_t *out)
{
	int64_t v;
	size_t sz;

	if (strcmp(e->value, "none") == 0)
		return *out = 0, 0;
	switch (l) {
	case LIMIT_AS:
		if (ld_size(ld, e, &sz) < 0)
			return -1;
		if (sz < 1024 * 1024) {
			ld_error(
			    ld, e->line, "%s: '%s' is too small (at least 1M, or none)", e->key, e->value);
			return -1;
		}
		return *out = sz, 0;
	case LIMIT_CPU:
		if (ld_duration(ld, e, &v, 1000) < 0)
			return -1;
		if (v % 1000 != 0 || v > 365LL * 86400 * 1000) {
			ld_error(ld, e->line, "%s: '%s' is not a whole number of seconds from 1s to 365d",
			    e->key, e->value);
			return -1;
		}
		return *out = (uint64_t)(v / 1000), 0;
	case LIMIT_NOFILE:
		if (ld_uint(ld, e, 8, 1048576, &v) < 0)
			return -1;
		return *out = (uint64_t)v, 0;
	default:
		if (ld_uint(ld, e, 1, 4194304, &v) < 0)
			return -1;
		return *out = (uint64_t)v, 0;
	}
}

/* limit_* keys into h; 1 when e is not one. */
int
conf_limit_set(struct loader *ld, struct handler *h, const struct entry *e)
{
	int l;

	for (l = 0; l < NLIMITS; l++)
		if (strcmp(e->key, limit_defs[l].key) == 0) {
			h->limit_lines[l] = e->line;
			return parse_limit(ld, e, (enum handler_limit)l, &h->limits[l]);
		}
	return 1;
}

/* With CONF_CHECK_EXEC: a limit above the worker's own hard limit is
 * refused.  Only a process with CAP_SYS_RESOURCE may raise a hard limit
 * (not every root has it: containers drop it), so such a limit would
 * fail every job; a handler can be given less than the worker, never
 * more.  limit_nproc does not bind a handler running as root. */
void
conf_limit_check(struct loader *ld, const struct handler *h)
{
	struct rlimit cur;
	int l;

	for (l = 0; l < NLIMITS; l++) {
		/* limit_cpu's hard limit is a second above (see spawn.c) */
		uint64_t want = h->limits[l] + (l == LIMIT_CPU);

		if (h->limits[l] == 0 || getrlimit(limit_defs[l].resource, &cur) < 0 ||
		    cur.rlim_max == RLIM_INFINITY || want <= (uint64_t)cur.rlim_max)
			continue;
		if (l == LIMIT_CPU)
			ld_error(ld, h->limit_lines[l],
			    "limit_cpu: %llus is not below the worker's own hard limit (%llus): a "
			    "handler can only be given less",
			    (unsigned long long)h->limits[l], (unsigned long long)cur.rlim_max);
		else
			ld_error(ld, h->limit_lines[l],
			    "%s: %llu is above the worker's own hard limit (%llu): a handler can only "
			    "be given less",
			    limit_defs[l].key, (unsigned long long)h->limits[l],
			    (unsigned long long)cur.rlim_max);
	}
	if (h->limits[LIMIT_NPROC] != 0 && geteuid() == 0 && !h->has_uid)
		ld_warning(ld, h->limit_lines[LIMIT_NPROC],
		    "limit_nproc: handler '%s' runs as root, which the process limit does not bind "
		    "(set user =)",
		    h->type);
}

/* RLIMIT_CPU counts a process's whole life, and a persistent handler's
 * process (mode = persistent) lives through many jobs: the job that
 * crossed the limit would be killed and charged an attempt for the CPU
 * of the jobs before it.  Refused there (a [worker] limit_cpu too, at
 * its line); timeout bounds a job, max_jobs a process. */
void
conf_limit_mode(struct loader *ld, const struct handler *h)
{
	if (!h->persistent || h->limits[LIMIT_CPU] == 0)
		return;
	ld_error(ld, h->limit_lines[LIMIT_CPU],
	    "limit_cpu: not for handler '%s' (mode = persistent): its process serves many jobs, and the "
	    "one that crosses the limit would be killed for the CPU of those before it (use timeout, "
	    "max_jobs, or limit_cpu = none in its section)",
	    h->type);
}
