/* conf_argmax.c -- whether a program the worker starts (a handler's
 * exec, on_dead, on_alert) can be exec'd at all: its arguments and its
 * environment together, as execve(2) counts them.
 *
 * Each word and each env.NAME is checked alone where it is read
 * (conf_handler.c: MAX_ARG_STRLEN); this is the check of their sum.  A
 * handler past it fails every run with E2BIG, so it is refused at its
 * line instead.  Linux counts (fs/exec.c, bprm_stack_limits and the
 * string copies after it): the program's path, every argument and every
 * environment string with its NUL, and one pointer per argument (at
 * least one) and per environment string; the sum may not pass a quarter
 * of the stack limit (exactly: measured on Linux 6), capped at
 * 6 MiB (three quarters of _STK_LIM) and never under 128 KiB (ARG_MAX).
 * sysconf(_SC_ARG_MAX) is that quarter (glibc), so the limit here is
 * min(sysconf(_SC_ARG_MAX), 6 MiB): this process's stack limit stands
 * for the worker's, which starts from the same shell or unit.
 *
 * The environment is the one spawn.c's spawn_env() builds, each of
 * jobq's own variables at its longest (a job id of 20 digits, a type of
 * 64 characters, a checkpoint of ARGMAX_CHECKPOINT_MAX bytes, ...). */
#include "config.h"

#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "conf_argmax.h"
#include "conf_ini.h"

#define ARG_LIMIT_FLOOR (128 * 1024)       /* ARG_MAX: 32 pages */
#define ARG_LIMIT_CAP (6 * 1024 * 1024)    /* _STK_LIM / 4 * 3 */
#define DEFAULT_PATH_ENV "PATH=/usr/local/bin:/usr/bin:/bin" /* spawn.c's */

/* The most execve takes, as above. */
size_t
conf_argmax_limit(void)
{
	long v = sysconf(_SC_ARG_MAX);
	size_t limit = v > 0 ? (size_t)v : ARG_LIMIT_FLOOR;

	if (limit > ARG_LIMIT_CAP)
		limit = ARG_LIMIT_CAP;
	return limit < ARG_LIMIT_FLOOR ? ARG_LIMIT_FLOOR : limit;
}

/* A variable's bytes in the environment ("NAME=value" and its NUL). */
#define VAR(name, valuelen) (sizeof(name "=") + (valuelen))

/* jobq's own variables of a run (spawn_env) with job set: at their
 * longest, the checkpoint and TRACEPARENT only for what a job's handler
 * gets (on_dead and on_alert run with neither); *n counts them. */
static size_t
job_vars(int with_checkpoint, size_t *n)
{
	size_t bytes = VAR("JOBQ_MAX_ATTEMPTS", 10) + VAR("JOBQ_JOB_ID", 20) + VAR("JOBQ_TYPE", NAME_MAX_LEN) +
	               VAR("JOBQ_QUEUE", NAME_MAX_LEN) + VAR("JOBQ_ATTEMPT", 10) + VAR("JOBQ_ENQUEUED_AT", 31);

	*n += 6;
	if (with_checkpoint) {
		bytes += VAR("JOBQ_CHECKPOINT", ARGMAX_CHECKPOINT_MAX) + VAR("TRACEPARENT", 55);
		*n += 2;
	}
	return bytes;
}

/* Whether env (NAME=value strings) sets name. */
static int
env_sets(char *const *env, const char *name)
{
	size_t len = strlen(name), i;

	for (i = 0; env != NULL && env[i] != NULL; i++)
		if (strncmp(env[i], name, len) == 0 && env[i][len] == '=')
			return 1;
	return 0;
}

/* The run user's name and home folder lengths (HOME, USER, LOGNAME),
 * looked up once per uid: a file of many handlers asks for few users. */
static int
user_lengths(uid_t uid, size_t *home, size_t *name)
{
	static uid_t cached_uid;
	static size_t cached_home, cached_name;
	static int cached = -1;
	struct passwd *pw;

	if (cached < 0 || cached_uid != uid) {
		cached_uid = uid;
		cached = (pw = getpwuid(uid)) != NULL;
		cached_home = cached ? strlen(pw->pw_dir) : 0;
		cached_name = cached ? strlen(pw->pw_name) : 0;
	}
	*home = cached_home;
	*name = cached_name;
	return cached;
}

/* The fixed part of spawn_env: PATH, LANG, TZ, HOME, USER and LOGNAME
 * unless env sets them, then JOBQ_CONTROL_FD; *n counts them. */
static size_t
base_vars(char *const *env, uid_t uid, size_t *n)
{
	size_t bytes = VAR("JOBQ_CONTROL_FD", 1), home, name;

	*n += 1;
	if (!env_sets(env, "PATH"))
		bytes += sizeof(DEFAULT_PATH_ENV), *n += 1;
	if (!env_sets(env, "LANG"))
		bytes += VAR("LANG", 7), *n += 1; /* C.UTF-8 */
	if (!env_sets(env, "TZ"))
		bytes += VAR("TZ", 3), *n += 1; /* UTC */
	if (user_lengths(uid, &home, &name)) {
		if (!env_sets(env, "HOME"))
			bytes += VAR("HOME", home), *n += 1;
		if (!env_sets(env, "USER"))
			bytes += VAR("USER", name), *n += 1;
		if (!env_sets(env, "LOGNAME"))
			bytes += VAR("LOGNAME", name), *n += 1;
	}
	return bytes;
}

/* What execve needs for argv (argv[0] the path it is given) in the
 * environment of a run as uid with env (NAME=value, the env.NAME keys)
 * and jobq's variables for run (ARGMAX_*). */
size_t
conf_argmax_need(char *const *argv, char *const *env, uid_t uid, enum argmax_run run)
{
	size_t bytes = 0, nenv = 0, argc, i;

	for (argc = 0; argv[argc] != NULL; argc++)
		bytes += strlen(argv[argc]) + 1;
	bytes += strlen(argv[0]) + 1; /* the path, copied on its own */
	for (i = 0; env != NULL && env[i] != NULL; i++, nenv++)
		bytes += strlen(env[i]) + 1;
	bytes += base_vars(env, uid, &nenv);
	if (run != ARGMAX_PERSISTENT)
		bytes += job_vars(run == ARGMAX_JOB, &nenv);
	return bytes + ((argc > 0 ? argc : 1) + nenv) * sizeof(void *);
}

/* Refuses (reports at line, -1) the program of key, argv, when with env
 * and jobq's own variables for run it is more than execve takes.  Only
 * with CONF_CHECK_EXEC (jobq work, which execs it, and jobq check): the
 * limit is a quarter of this process's stack limit, and a client such
 * as jobq enqueue, started by a web server with a smaller one, runs no
 * handler and must not be refused for what the worker can exec. */
int
conf_argmax_check(struct loader *ld, int line, const char *key, char *const *argv, char *const *env, uid_t uid,
    enum argmax_run run)
{
	size_t need, limit;

	if (!(ld->flags & CONF_CHECK_EXEC))
		return 0;
	need = conf_argmax_need(argv, env, uid, run);
	limit = conf_argmax_limit();
	if (need <= limit)
		return 0;
	ld_error(ld, line,
	    "%s: too long as a whole: its arguments and environment (env.NAME and jobq's own variables) "
	    "take %zu bytes, and execve takes at most %zu here (ARG_MAX: a quarter of the stack limit)",
	    key, need, limit);
	return -1;
}
