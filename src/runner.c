/* runner.c -- run one handler program for one job.
 *
 * The one careful way jobq starts a program (STYLE.md item 7):
 *   parent: build argv and envp, block every signal, fork;
 *   child:  reset every signal disposition and the mask, make its own
 *           process group, put the pipes on 0/1/2, close every other
 *           descriptor, chdir to workdir, drop privileges, execve; a
 *           failure on the way is written to a close-on-exec pipe and the
 *           child leaves with _exit(127);
 *   parent: restore the mask, read the error pipe (EOF means exec worked).
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

/* What the child reports through the error pipe. */
struct start_failure {
	int err;
	char what[16];
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

/* The clean environment of DESIGN.md section 3: PATH, LANG, TZ, HOME
 * and USER of the run user, the JOBQ_* variables, then the handler's own
 * env.NAME keys (which may replace the defaults but not JOBQ_*). */
static char **
build_env(const struct handler *h, const struct job *j, unsigned max_attempts)
{
	char **envp = xcalloc(1, sizeof *envp);
	size_t n = 0, i;
	struct passwd *pw = getpwuid(h->has_uid && geteuid() == 0 ? h->uid : geteuid());

	add_env(&envp, &n, xstrdup("PATH=" DEFAULT_PATH));
	add_env(&envp, &n, xstrdup("LANG=C.UTF-8"));
	add_env(&envp, &n, xstrdup("TZ=UTC"));
	if (pw != NULL) {
		add_env(&envp, &n, xasprintf("HOME=%s", pw->pw_dir));
		add_env(&envp, &n, xasprintf("USER=%s", pw->pw_name));
		add_env(&envp, &n, xasprintf("LOGNAME=%s", pw->pw_name));
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
 * calls from here on. */
static void NORETURN
child_fail(int errfd, const char *what)
{
	struct start_failure f;
	ssize_t ignored;

	memset(&f, 0, sizeof f);
	f.err = errno;
	strncpy(f.what, what, sizeof f.what - 1);
	ignored = write(errfd, &f, sizeof f);
	(void)ignored;
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

/* Everything the child does between fork and exec. */
static void NORETURN
child(const struct handler *h, int in, int out, int err, int errfd, char **envp, gid_t *groups, int ngroups,
    int drop)
{
	struct sigaction sa;
	sigset_t none;
	int sig;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_DFL;
	for (sig = 1; sig < NSIG; sig++)
		sigaction(sig, &sa, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (setpgid(0, 0) < 0)
		child_fail(errfd, "setpgid");
	/* errfd must survive the dup2s and the closing below. */
	if (errfd <= 2) {
		int moved = fcntl(errfd, F_DUPFD_CLOEXEC, 3);

		if (moved < 0)
			child_fail(errfd, "fcntl");
		errfd = moved;
	}
	if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
		child_fail(errfd, "dup2");
	close_from(3, errfd - 1);
	close_from(errfd + 1, INT_MAX);
	if (h->workdir != NULL && chdir(h->workdir) < 0)
		child_fail(errfd, "chdir");
	if (drop) {
		if (setgroups((size_t)ngroups, groups) < 0)
			child_fail(errfd, "setgroups");
		if (setgid(h->gid) < 0)
			child_fail(errfd, "setgid");
		if (setuid(h->uid) < 0)
			child_fail(errfd, "setuid");
	}
	execve(h->argv[0], h->argv, envp);
	child_fail(errfd, "exec");
}

static int
make_pipes(int p[3][2], int errpipe[2], char *err)
{
	int i;

	for (i = 0; i < 3; i++)
		p[i][0] = p[i][1] = -1;
	errpipe[0] = errpipe[1] = -1;
	for (i = 0; i < 3; i++)
		if (pipe2(p[i], O_CLOEXEC) < 0)
			goto fail;
	if (pipe2(errpipe, O_CLOEXEC) < 0)
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
	close_fd(&errpipe[0]);
	close_fd(&errpipe[1]);
	return -1;
}

/* Supplementary groups of the run user, looked up before fork (the
 * lookup is not async-signal-safe). */
static gid_t *
run_groups(const struct handler *h, int *n)
{
	struct passwd *pw;
	gid_t *groups;

	*n = 0;
	if (h->user == NULL || (pw = getpwnam(h->user)) == NULL)
		return xcalloc(1, sizeof(gid_t));
	*n = 64;
	groups = xcalloc((size_t)*n, sizeof *groups);
	if (getgrouplist(h->user, h->gid, groups, n) < 0) {
		groups = xrealloc(groups, (size_t)*n * sizeof *groups);
		if (getgrouplist(h->user, h->gid, groups, n) < 0)
			*n = 0;
	}
	return groups;
}

/* Reads the child's start report: 0 when exec worked. */
static void
read_start_report(struct runner *r, int fd)
{
	struct start_failure f;
	ssize_t n;

	do
		n = read(fd, &f, sizeof f);
	while (n < 0 && errno == EINTR);
	if (n == (ssize_t)sizeof f) {
		r->start_errno = f.err ? f.err : EIO;
		memcpy(r->start_what, f.what, sizeof r->start_what);
		r->start_what[sizeof r->start_what - 1] = '\0';
	}
}

/* Forks and execs the handler for job j.  Returns NULL only when no
 * process could be made (fork, pipe); a program that cannot be executed
 * gives a runner that ends at once with start_errno set. */
struct runner *
runner_start(const struct handler *h, const struct job *j, unsigned max_attempts, char *err)
{
	int p[3][2], errpipe[2], ngroups = 0, drop = geteuid() == 0 && h->has_uid, i;
	sigset_t all, old;
	char **envp;
	gid_t *groups = NULL;
	struct runner *r;
	pid_t pid;

	if (make_pipes(p, errpipe, err) < 0)
		return NULL;
	envp = build_env(h, j, max_attempts);
	if (drop)
		groups = run_groups(h, &ngroups);
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	pid = fork();
	if (pid == 0)
		child(h, p[P_IN][0], p[P_OUT][1], p[P_ERR][1], errpipe[1], envp, groups, ngroups, drop);
	sigprocmask(SIG_SETMASK, &old, NULL);
	strv_free(envp);
	free(groups);
	close_fd(&p[P_IN][0]);
	close_fd(&p[P_OUT][1]);
	close_fd(&p[P_ERR][1]);
	close_fd(&errpipe[1]);
	if (pid < 0) {
		errf(err, "fork handler '%s': %s", h->type, strerror(errno));
		for (i = 0; i < 3; i++)
			close_fd(&p[i][i == P_IN ? 1 : 0]);
		close_fd(&errpipe[0]);
		return NULL;
	}
	setpgid(pid, pid); /* also here: we may signal the group before the child runs */
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
	read_start_report(r, errpipe[0]);
	close_fd(&errpipe[0]);
	if (r->start_errno != 0 || r->payload_len == 0)
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
	r->interrupted = 1;
	if (!r->reaped && r->kill_at == INT64_MAX)
		stop_group(r, mono_ms());
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
