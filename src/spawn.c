/* spawn.c -- start a handler program, the one careful way.
 *
 * (STYLE.md item 7)
 *   parent: build argv and envp, block every signal, vfork;
 *   child:  reset the signal dispositions the worker changed and the
 *           mask, make its own process group, put the pipes on 0-3,
 *           close every other descriptor, chdir to workdir, set the
 *           resource limits, drop privileges, execve; a failure on the
 *           way is recorded for the parent and the child leaves with
 *           _exit(127);
 *   parent: (resumed once the child exec'd or exited) restore the mask,
 *           look at the recorded failure.
 * The program never goes through a shell.
 *
 * Descriptor 3 is the handler's control channel (JOBQ_CONTROL_FD): a
 * pipe the handler may write to and the worker reads.  Both handler
 * modes use it: an exec-mode handler writes its control lines there, a
 * persistent one also its per-job reply (handlers/jobq-handler.7). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#ifdef HAVE_CLOSE_RANGE
#include <linux/close_range.h>
#endif

#include "guard.h"
#include "spawn.h"

#define DEFAULT_PATH "/usr/local/bin:/usr/bin:/bin"

/* What the child sets up besides its descriptors, all worked out
 * before vfork so that the child only makes system calls: the ids to
 * take (when the worker runs as root) and the resource limits. */
struct child_setup {
	int drop_gid, drop_uid;
	gid_t *groups;
	int ngroups;
	int nlimits;
	int resource[NLIMITS];
	struct rlimit rl[NLIMITS];
	const char *what[NLIMITS]; /* the limit_* key, for the error */
};

/* What the child reports when it cannot exec.  With vfork the child
 * shares our memory until it execs or exits, so it writes this straight
 * into the parent's variable: no error pipe needed. */
struct start_failure {
	int err;
	const char *what;
};

static void
close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static void
add_env(char ***envp, size_t *n, char *entry)
{
	size_t len = strcspn(entry, "=") + 1, i;

	for (i = 0; i < *n; i++)
		if (strncmp((*envp)[i], entry, len) == 0) {
			free((*envp)[i]);
			(*envp)[i] = entry;
			return;
		}
	*envp = xrealloc(*envp, (*n + 2) * sizeof **envp);
	(*envp)[(*n)++] = entry;
	(*envp)[*n] = NULL;
}

/* Signals whose disposition is not the default in the worker (those it
 * handles or ignores, and any it inherited ignored): the child resets
 * exactly these.  Dispositions are fixed before the first job starts, so
 * they are looked up once instead of with 64 syscalls per child. */
static int reset_sigs[NSIG];
static int nreset_sigs = -1;

static void
find_signals_to_reset(void)
{
	struct sigaction sa;
	int sig;

	nreset_sigs = 0;
	for (sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP && sigaction(sig, NULL, &sa) == 0 &&
		    (sa.sa_flags & SA_SIGINFO || sa.sa_handler != SIG_DFL))
			reset_sigs[nreset_sigs++] = sig;
}

/* The run user's passwd entry, looked up once per uid. */
struct who {
	uid_t uid;
	char *home, *name;
};

static const struct who *
run_user(uid_t uid)
{
	static struct who cache;
	static int cached;
	struct passwd *pw;

	if (cached && cache.uid == uid)
		return &cache;
	free(cache.home);
	free(cache.name);
	memset(&cache, 0, sizeof cache);
	cache.uid = uid;
	if ((pw = getpwuid(uid)) != NULL) {
		cache.home = xstrdup(pw->pw_dir);
		cache.name = xstrdup(pw->pw_name);
	}
	cached = 1;
	return &cache;
}

/* The clean environment of DESIGN.md section 3: PATH, LANG, TZ, HOME
 * and USER of the run user, the JOBQ_* variables and TRACEPARENT, then
 * the handler's own env.NAME keys (which may replace the defaults but
 * not JOBQ_* or TRACEPARENT).  j is
 * NULL for a persistent handler, which serves many jobs and learns each
 * one's id, type and attempt from its request line instead. */
char **
spawn_env(const struct handler *h, const struct job *j, unsigned max_attempts)
{
	char **envp = xcalloc(1, sizeof *envp);
	size_t n = 0, i;
	const struct who *pw = run_user(h->has_uid && geteuid() == 0 ? h->uid : geteuid());

	add_env(&envp, &n, xstrdup("PATH=" DEFAULT_PATH));
	add_env(&envp, &n, xstrdup("LANG=C.UTF-8"));
	add_env(&envp, &n, xstrdup("TZ=UTC"));
	if (pw->name != NULL) {
		add_env(&envp, &n, xasprintf("HOME=%s", pw->home));
		add_env(&envp, &n, xasprintf("USER=%s", pw->name));
		add_env(&envp, &n, xasprintf("LOGNAME=%s", pw->name));
	}
	for (i = 0; h->env[i] != NULL; i++)
		add_env(&envp, &n, xstrdup(h->env[i]));
	add_env(&envp, &n, xstrdup("JOBQ_CONTROL_FD=3"));
	if (j == NULL)
		return envp; /* the limit is per job too: each request carries it */
	add_env(&envp, &n, xasprintf("JOBQ_MAX_ATTEMPTS=%u", max_attempts));
	add_env(&envp, &n, xasprintf("JOBQ_JOB_ID=%llu", (unsigned long long)j->id));
	add_env(&envp, &n, xasprintf("JOBQ_TYPE=%s", j->type));
	add_env(&envp, &n, xasprintf("JOBQ_QUEUE=%s", j->queue));
	add_env(&envp, &n, xasprintf("JOBQ_ATTEMPT=%u", j->attempt));
	add_env(&envp, &n, xasprintf("JOBQ_ENQUEUED_AT=%s", j->created_at));
	if (j->checkpoint != NULL)
		add_env(&envp, &n, xasprintf("JOBQ_CHECKPOINT=%s", j->checkpoint));
	if (j->run_trace[0] != '\0')
		add_env(&envp, &n, xasprintf("TRACEPARENT=%s", j->run_trace));
	return envp;
}

/* In the child: report what failed and leave.  Only async-signal-safe
 * calls from here on, and nothing that returns past vfork. */
static void NORETURN
child_fail(volatile struct start_failure *f, const char *what)
{
	f->err = errno ? errno : EIO;
	f->what = what;
	_exit(127);
}

static void
close_from(int lo, int hi)
{
#ifdef HAVE_CLOSE_RANGE
	if (lo <= hi && close_range((unsigned)lo, (unsigned)hi, 0) == 0)
		return;
#endif
	{
		long max = sysconf(_SC_OPEN_MAX);
		int fd;

		if (max < 0 || max > 65536)
			max = 65536;
		for (fd = lo; fd <= hi && fd < max; fd++)
			close(fd);
	}
}

/* Everything the child does between vfork and exec: system calls
 * only, on values the parent prepared.  The limits come after chdir and
 * before the ids change: a privileged worker may raise a hard limit,
 * the run user may not, and a limit_nproc the run user is already over
 * must make the exec fail (the kernel notes it when the uid changes).
 * setrlimit is one system call (prlimit64) and, as the child is a
 * process of its own, changes the child's limits only. */
static void NORETURN
child(const struct handler *h, const int fd[SPAWN_NFDS], char **envp, const struct child_setup *cs,
    volatile struct start_failure *f)
{
	struct sigaction sa;
	sigset_t none;
	int i;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_DFL;
	for (i = 0; i < nreset_sigs; i++)
		sigaction(reset_sigs[i], &sa, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (setpgid(0, 0) < 0)
		child_fail(f, "setpgid");
	/* The pipe ends are all above 2 (the worker keeps 0-2 open), so
	 * only the last dup2, onto 3, could meet a pipe end, and by then the
	 * others are in place.  dup2 clears close-on-exec, except when an end
	 * already is descriptor 3: then it is cleared by hand. */
	for (i = 0; i < SPAWN_NFDS; i++)
		if (fd[i] == i ? fcntl(i, F_SETFD, 0) < 0 : dup2(fd[i], i) < 0)
			child_fail(f, "dup2");
	close_from(SPAWN_NFDS, INT_MAX);
	if (h->workdir != NULL && chdir(h->workdir) < 0)
		child_fail(f, "chdir");
	for (i = 0; i < cs->nlimits; i++)
		if (setrlimit(cs->resource[i], &cs->rl[i]) < 0)
			child_fail(f, cs->what[i]);
	/* group without user: only the group changes (DESIGN.md 4). */
	if (cs->drop_gid) {
		if (setgroups((size_t)cs->ngroups, cs->groups) < 0)
			child_fail(f, "setgroups");
		if (setgid(h->gid) < 0)
			child_fail(f, "setgid");
	}
	if (cs->drop_uid && setuid(h->uid) < 0)
		child_fail(f, "setuid");
	execve(h->argv[0], h->argv, envp);
	child_fail(f, "exec");
}

/* p[i][ours(i)] is the worker's end of pipe i: the write end of stdin,
 * the read end of the others. */
static int
ours(int i)
{
	return i == SPAWN_IN ? 1 : 0;
}

static int
make_pipes(int p[SPAWN_NFDS][2], char *err)
{
	int i;

	for (i = 0; i < SPAWN_NFDS; i++)
		p[i][0] = p[i][1] = -1;
	for (i = 0; i < SPAWN_NFDS; i++)
		if (pipe2(p[i], O_CLOEXEC) < 0)
			goto fail;
	/* Our ends never block; the child's ends are ordinary. */
	for (i = 0; i < SPAWN_NFDS; i++)
		if (fcntl(p[i][ours(i)], F_SETFL, O_NONBLOCK) < 0)
			goto fail;
	return 0;
fail:
	errf(err, "pipe: %s", strerror(errno));
	for (i = 0; i < SPAWN_NFDS; i++)
		close_fd(&p[i][0]), close_fd(&p[i][1]);
	return -1;
}

/* Supplementary groups of the run user, looked up before fork (the
 * lookup is not async-signal-safe).  A handler with a group and no user
 * gets that one group and none of the worker's. */
static gid_t *
run_groups(const struct handler *h, int *n)
{
	struct passwd *pw;
	gid_t *groups;

	*n = 1;
	groups = xcalloc(1, sizeof *groups);
	groups[0] = h->gid;
	if (h->user == NULL || (pw = getpwnam(h->user)) == NULL)
		return groups;
	*n = 64;
	groups = xrealloc(groups, (size_t)*n * sizeof *groups);
	if (getgrouplist(h->user, h->gid, groups, n) < 0) {
		groups = xrealloc(groups, (size_t)*n * sizeof *groups);
		if (getgrouplist(h->user, h->gid, groups, n) < 0)
			*n = 1;
	}
	return groups;
}

/* The limits to set: soft = hard, so the handler cannot lift them, but
 * for limit_cpu whose hard limit is a second above: the kernel sends
 * SIGXCPU at the soft limit (which a handler may catch to clean up)
 * and SIGKILL at the hard one. */
static void
setup_limits(const struct handler *h, struct child_setup *cs)
{
	int l;

	cs->nlimits = 0;
	for (l = 0; l < NLIMITS; l++) {
		if (h->limits[l] == 0)
			continue;
		cs->resource[cs->nlimits] = conf_limit_resource((enum handler_limit)l);
		cs->rl[cs->nlimits].rlim_cur = (rlim_t)h->limits[l];
		cs->rl[cs->nlimits].rlim_max = (rlim_t)h->limits[l] + (l == LIMIT_CPU);
		cs->what[cs->nlimits] = conf_limit_key((enum handler_limit)l);
		cs->nlimits++;
	}
}

/* vfork and exec, with every signal blocked meanwhile so that none of
 * our handlers can run in the child before it has reset them.  Kept
 * apart so that no variable of the caller lives across vfork. */
static pid_t
spawn(const struct handler *h, const int fd[SPAWN_NFDS], char **envp, const struct child_setup *cs,
    volatile struct start_failure *f)
{
	sigset_t all, old;
	pid_t pid;

	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	pid = vfork();
	if (pid == 0)
		child(h, fd, envp, cs, f);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return pid;
}

/* vforks and execs the handler h with environment envp (spawn_env),
 * its descriptors 0-3 on fresh pipes whose other ends land in sp->fd.
 * Returns -1 only when no process could be made (vfork, pipe); a
 * program that cannot be executed gives a child that has already
 * exited 127, with sp->start_errno and sp->start_what set.
 *
 * vfork rather than fork: the parent is suspended until the child has
 * exec'd (which we would wait for anyway, to learn whether exec worked),
 * and nothing is copied, which halves the cost of starting a short job. */
int
spawn_handler(const struct handler *h, char **envp, struct spawned *sp, char *err)
{
	int p[SPAWN_NFDS][2], child_fd[SPAWN_NFDS], i;
	volatile struct start_failure failure = { 0, NULL };
	struct child_setup cs;
	pid_t pid;

	memset(sp, 0, sizeof *sp);
	for (i = 0; i < SPAWN_NFDS; i++)
		sp->fd[i] = -1;
	if (nreset_sigs < 0)
		find_signals_to_reset();
	if (make_pipes(p, err) < 0)
		return -1;
	for (i = 0; i < SPAWN_NFDS; i++)
		child_fd[i] = p[i][!ours(i)];
	memset(&cs, 0, sizeof cs);
	cs.drop_uid = geteuid() == 0 && h->has_uid;
	cs.drop_gid = geteuid() == 0 && h->has_gid;
	if (cs.drop_gid)
		cs.groups = run_groups(h, &cs.ngroups);
	setup_limits(h, &cs);
	pid = spawn(h, child_fd, envp, &cs, &failure);
	free(cs.groups);
	for (i = 0; i < SPAWN_NFDS; i++)
		close_fd(&p[i][!ours(i)]);
	if (pid < 0) {
		errf(err, "vfork handler '%s': %s", h->type, strerror(errno));
		for (i = 0; i < SPAWN_NFDS; i++)
			close_fd(&p[i][ours(i)]);
		return -1;
	}
	sp->pid = pid;
	guard_add(pid); /* its own group: stopped by the guard if the worker dies */
	for (i = 0; i < SPAWN_NFDS; i++)
		sp->fd[i] = p[i][ours(i)];
	if (failure.err != 0) {
		sp->start_errno = failure.err;
		snprintf(sp->start_what, sizeof sp->start_what, "%s", failure.what);
	}
	return 0;
}
