/* runner.c -- run one handler program for one job.
 *
 * The one careful way jobq starts a program (STYLE.md item 7):
 *   parent: build argv and envp, block every signal, vfork;
 *   child:  reset the signal dispositions the worker changed and the
 *           mask, make its own process group, put the pipes on 0/1/2,
 *           close every other descriptor, chdir to workdir, set the
 *           resource limits, drop privileges, execve; a failure on the
 *           way is recorded for the parent and the child leaves with
 *           _exit(127);
 *   parent: (resumed once the child exec'd or exited) restore the mask,
 *           look at the recorded failure.
 * The program never goes through a shell.
 *
 * Afterwards the worker's poll loop feeds the payload to stdin and reads
 * stdout and stderr at the same time, so neither side can block the
 * other whatever their sizes; output is kept in bounded captures.  On
 * timeout the whole process group gets SIGTERM, then SIGKILL after
 * kill_grace.  When the handler itself exits, whatever it left running in
 * its process group is killed, and pipes still held open by something
 * that escaped the group are closed after a short drain: the job is over
 * when its handler is. */
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
#include <sys/wait.h>
#include <unistd.h>
#ifdef HAVE_CLOSE_RANGE
#include <linux/close_range.h>
#endif

#include "capture.h"
#include "runner.h"

#define DRAIN_MS 2000 /* pipes may outlive the handler this long */
#define READ_CHUNK 65536
#define DEFAULT_PATH "/usr/local/bin:/usr/bin:/bin"

enum { P_IN, P_OUT, P_ERR };

struct runner {
	pid_t pid;
	int fd[3]; /* our ends: stdin (write), stdout, stderr (read); -1 closed */
	const char *payload;
	size_t payload_len, written;
	struct capture *out, *err;
	int64_t started, ended;
	int64_t timeout_at, kill_at, drain_until;
	int64_t timeout_ms, grace_ms;
	int reaped, status;
	int timed_out, interrupted;
	int start_errno;
	char start_what[16];
};

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
 * and USER of the run user, the JOBQ_* variables, then the handler's own
 * env.NAME keys (which may replace the defaults but not JOBQ_*). */
static char **
build_env(const struct handler *h, const struct job *j, unsigned max_attempts)
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
	add_env(&envp, &n, xasprintf("JOBQ_JOB_ID=%llu", (unsigned long long)j->id));
	add_env(&envp, &n, xasprintf("JOBQ_TYPE=%s", j->type));
	add_env(&envp, &n, xasprintf("JOBQ_QUEUE=%s", j->queue));
	add_env(&envp, &n, xasprintf("JOBQ_ATTEMPT=%u", j->attempt));
	add_env(&envp, &n, xasprintf("JOBQ_MAX_ATTEMPTS=%u", max_attempts));
	add_env(&envp, &n, xasprintf("JOBQ_ENQUEUED_AT=%s", j->created_at));
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
child(const struct handler *h, const int fd[3], char **envp, const struct child_setup *cs,
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
	 * the dup2s cannot clobber one another; dup2 clears close-on-exec. */
	for (i = 0; i < 3; i++)
		if (dup2(fd[i], i) < 0)
			child_fail(f, "dup2");
	close_from(3, INT_MAX);
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

static int
make_pipes(int p[3][2], char *err)
{
	int i;

	for (i = 0; i < 3; i++)
		p[i][0] = p[i][1] = -1;
	for (i = 0; i < 3; i++)
		if (pipe2(p[i], O_CLOEXEC) < 0)
			goto fail;
	/* Our ends never block; the child's ends are ordinary. */
	if (fcntl(p[P_IN][1], F_SETFL, O_NONBLOCK) < 0 || fcntl(p[P_OUT][0], F_SETFL, O_NONBLOCK) < 0 ||
	    fcntl(p[P_ERR][0], F_SETFL, O_NONBLOCK) < 0)
		goto fail;
	return 0;
fail:
	errf(err, "pipe: %s", strerror(errno));
	for (i = 0; i < 3; i++)
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
spawn(const struct handler *h, const int fd[3], char **envp, const struct child_setup *cs,
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

/* vforks and execs the handler for job j.  Returns NULL only when no
 * process could be made (vfork, pipe); a program that cannot be executed
 * gives a runner that ends at once with start_errno set.
 *
 * vfork rather than fork: the parent is suspended until the child has
 * exec'd (which we would wait for anyway, to learn whether exec worked),
 * and nothing is copied, which halves the cost of starting a short job. */
struct runner *
runner_start(const struct handler *h, const struct job *j, unsigned max_attempts, char *err)
{
	int p[3][2], child_fd[3], i;
	volatile struct start_failure failure = { 0, NULL };
	struct child_setup cs;
	char **envp;
	struct runner *r;
	pid_t pid;

	if (nreset_sigs < 0)
		find_signals_to_reset();
	if (make_pipes(p, err) < 0)
		return NULL;
	child_fd[P_IN] = p[P_IN][0];
	child_fd[P_OUT] = p[P_OUT][1];
	child_fd[P_ERR] = p[P_ERR][1];
	envp = build_env(h, j, max_attempts);
	memset(&cs, 0, sizeof cs);
	cs.drop_uid = geteuid() == 0 && h->has_uid;
	cs.drop_gid = geteuid() == 0 && h->has_gid;
	if (cs.drop_gid)
		cs.groups = run_groups(h, &cs.ngroups);
	setup_limits(h, &cs);
	pid = spawn(h, child_fd, envp, &cs, &failure);
	strv_free(envp);
	free(cs.groups);
	close_fd(&p[P_IN][0]);
	close_fd(&p[P_OUT][1]);
	close_fd(&p[P_ERR][1]);
	if (pid < 0) {
		errf(err, "vfork handler '%s': %s", h->type, strerror(errno));
		for (i = 0; i < 3; i++)
			close_fd(&p[i][i == P_IN ? 1 : 0]);
		return NULL;
	}
	r = xcalloc(1, sizeof *r);
	r->pid = pid;
	r->fd[P_IN] = p[P_IN][1];
	r->fd[P_OUT] = p[P_OUT][0];
	r->fd[P_ERR] = p[P_ERR][0];
	r->payload = j->payload;
	r->payload_len = j->payload_len;
	r->out = capture_new(h->stdout_limit);
	r->err = capture_new(h->stderr_limit);
	r->started = mono_ms();
	r->timeout_ms = h->timeout_ms;
	r->grace_ms = h->kill_grace_ms;
	r->timeout_at = h->timeout_ms > 0 ? r->started + h->timeout_ms : INT64_MAX;
	r->kill_at = INT64_MAX;
	r->drain_until = INT64_MAX;
	if (failure.err != 0) {
		r->start_errno = failure.err;
		snprintf(r->start_what, sizeof r->start_what, "%s", failure.what);
		close_fd(&r->fd[P_IN]);
	} else if (r->payload_len == 0)
		close_fd(&r->fd[P_IN]);
	return r;
}

void
runner_free(struct runner *r)
{
	int i;

	if (r == NULL)
		return;
	for (i = 0; i < 3; i++)
		close_fd(&r->fd[i]);
	capture_free(r->out);
	capture_free(r->err);
	free(r);
}

pid_t
runner_pid(const struct runner *r)
{
	return r->pid;
}

/* Fills up to RUNNER_MAX_FDS pollfds for the pipes still open; returns
 * how many. */
int
runner_fds(struct runner *r, struct pollfd *pfd)
{
	int n = 0, i;

	for (i = 0; i < 3; i++) {
		if (r->fd[i] < 0)
			continue;
		pfd[n].fd = r->fd[i];
		pfd[n].events = i == P_IN ? POLLOUT : POLLIN;
		pfd[n].revents = 0;
		n++;
	}
	return n;
}

static void
feed_stdin(struct runner *r)
{
	while (r->written < r->payload_len) {
		ssize_t n = write(r->fd[P_IN], r->payload + r->written, r->payload_len - r->written);

		if (n > 0) {
			r->written += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		break; /* EPIPE: the handler does not want the rest; fine */
	}
	close_fd(&r->fd[P_IN]);
}

static void
drain(struct runner *r, int which)
{
	char buf[READ_CHUNK];
	int rounds;

	/* A few reads per wakeup at most, so one chatty handler cannot
	 * starve the others. */
	for (rounds = 0; rounds < 16; rounds++) {
		ssize_t n = read(r->fd[which], buf, sizeof buf);

		if (n > 0) {
			capture_add(which == P_OUT ? r->out : r->err, buf, (size_t)n);
			continue;
		}
		if (n < 0 && (errno == EINTR))
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		close_fd(&r->fd[which]); /* EOF or a real error */
		return;
	}
}

/* Handles the poll results for the pfd entries runner_fds filled. */
void
runner_io(struct runner *r, const struct pollfd *pfd, int n)
{
	int i, k;

	for (i = 0; i < n; i++) {
		if (pfd[i].revents == 0)
			continue;
		for (k = 0; k < 3; k++)
			if (r->fd[k] == pfd[i].fd)
				break;
		if (k == 3)
			continue;
		if (k == P_IN)
			feed_stdin(r);
		else
			drain(r, k);
	}
}

/* Called when the handler (the group leader) has exited but is not yet
 * reaped: kills what it left behind in its process group while the
 * group id is still certainly ours, then reaps it. */
void
runner_reap(struct runner *r)
{
	int status;

	kill(-r->pid, SIGKILL);
	while (waitpid(r->pid, &status, 0) < 0)
		if (errno != EINTR) {
			status = 0;
			break;
		}
	r->reaped = 1;
	r->status = status;
	r->ended = mono_ms();
	r->drain_until = r->ended + DRAIN_MS;
	close_fd(&r->fd[P_IN]);
}

/* The next moment (monotonic ms) at which runner_tick has work to do. */
int64_t
runner_deadline(const struct runner *r)
{
	int64_t t = INT64_MAX;

	if (r->reaped)
		return r->fd[P_OUT] >= 0 || r->fd[P_ERR] >= 0 ? r->drain_until : INT64_MAX;
	if (r->timeout_at < t)
		t = r->timeout_at;
	if (r->kill_at < t)
		t = r->kill_at;
	return t;
}

static void
stop_group(struct runner *r, int64_t now)
{
	kill(-r->pid, SIGTERM);
	r->kill_at = now + r->grace_ms;
	r->timeout_at = INT64_MAX;
}

/* Applies the timeout, the kill grace and the drain limit. */
void
runner_tick(struct runner *r, int64_t now)
{
	if (r->reaped) {
		if (now >= r->drain_until) {
			close_fd(&r->fd[P_OUT]);
			close_fd(&r->fd[P_ERR]);
		}
		return;
	}
	if (now >= r->timeout_at) {
		r->timed_out = 1;
		stop_group(r, now);
	}
	if (now >= r->kill_at) {
		kill(-r->pid, SIGKILL);
		r->kill_at = INT64_MAX;
	}
}

/* Asks the handler to stop now (SIGTERM to its group, SIGKILL after the
 * grace): the worker is shutting down and gives the job back. */
void
runner_terminate(struct runner *r)
{
	if (r->reaped)
		return; /* it ended by itself: its exit status stands */
	r->interrupted = 1;
	if (r->kill_at == INT64_MAX)
		stop_group(r, mono_ms());
}

/* As runner_terminate, but the SIGKILL comes at kill_by (monotonic ms)
 * at the latest, whatever kill_grace says: the worker must see the
 * handler gone before its job's lease ends. */
void
runner_terminate_by(struct runner *r, int64_t kill_by)
{
	if (r->reaped)
		return;
	runner_terminate(r);
	if (kill_by < r->kill_at)
		r->kill_at = kill_by;
}

int
runner_finished(const struct runner *r)
{
	return r->reaped && r->fd[P_OUT] < 0 && r->fd[P_ERR] < 0;
}

int
runner_interrupted(const struct runner *r)
{
	return r->interrupted;
}

/* How it ended, and its output as text (caller frees out and err). */
void
runner_result(const struct runner *r, struct exit_info *x, char **out, char **err, int64_t *duration_ms)
{
	memset(x, 0, sizeof *x);
	x->timed_out = r->timed_out;
	x->timeout_ms = r->timeout_ms;
	if (r->start_errno != 0) {
		x->exec_errno = r->start_errno;
		snprintf(x->start_what, sizeof x->start_what, "%s", r->start_what);
		x->exited = 1;
		x->code = 127;
	} else if (WIFEXITED(r->status)) {
		x->exited = 1;
		x->code = WEXITSTATUS(r->status);
	} else if (WIFSIGNALED(r->status))
		x->signo = WTERMSIG(r->status);
	*out = capture_text(r->out);
	*err = capture_text(r->err);
	if (r->start_errno != 0 && strcmp(r->start_what, "exec") != 0) {
		char *msg = xasprintf(
		    "%s%s%s failed: %s", *err, **err ? "\n" : "", r->start_what, strerror(r->start_errno));

		free(*err);
		*err = msg;
	}
	*duration_ms = r->ended - r->started;
}
