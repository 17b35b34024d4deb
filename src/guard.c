/* guard.c -- a watchdog that stops a dead worker's handlers.
 *
 * A handler runs in a process group of its own, so a worker killed with
 * SIGKILL (or by the OOM killer) leaves its handlers running with nobody
 * to enforce their timeouts or to record their outcomes.  Their leases
 * then expire, another worker runs the same jobs, and two runs of one
 * job overlap.  PR_SET_PDEATHSIG would reach only the group leader, not
 * what it started.
 *
 * So the worker forks one small guard process before it starts any
 * handler and tells it, through a pipe, each process group it makes and
 * each one it has reaped.  The guard does nothing else: it waits on the
 * pipe.  When the pipe reads end of file the worker is gone, however it
 * ended; the guard then sends SIGTERM to every group still listed,
 * SIGKILL after GUARD_GRACE_MS to what is left, and exits.  A worker
 * that stops normally has reaped its groups first, and the list is empty.
 *
 * Messages are 8 bytes (an op and a pid), written whole: a pipe write of
 * at most PIPE_BUF bytes is atomic. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>
#ifdef HAVE_CLOSE_RANGE
#include <linux/close_range.h>
#endif

#include "guard.h"
#include "log.h"
#include "util.h"

#define GUARD_GRACE_MS 1000 /* SIGTERM, then SIGKILL this much later */
#define GUARD_MAX 65536     /* groups listed at once (far above any concurrency) */

struct guard_msg {
	int32_t op; /* 'a' a group was made, 'r' it was reaped */
	int32_t pid;
};

static int guard_fd = -1; /* the worker's end of the pipe; -1: no guard */

/* Closes every descriptor from lo up, in the guard process. */
static void
close_from(int lo)
{
	struct rlimit rl;
	int fd, max;

#ifdef HAVE_CLOSE_RANGE
	if (close_range((unsigned)lo, ~0U, 0) == 0)
		return;
#endif
	max = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 65536 ? (int)rl.rlim_cur : 65536;
	for (fd = lo; fd < max; fd++)
		close(fd);
}

/* Whether any process of group pgid is still there. */
static int
group_alive(pid_t pgid)
{
	return kill(-pgid, 0) == 0 || errno == EPERM;
}

/* The worker is gone: stop every group still listed, gently first. */
static void
stop_groups(const pid_t *groups, size_t n)
{
	struct timespec ts = { 0, 50 * 1000 * 1000 };
	size_t i;
	int waited, left;

	for (i = 0; i < n; i++)
		kill(-groups[i], SIGTERM);
	for (waited = 0; waited < GUARD_GRACE_MS; waited += 50) {
		for (i = 0, left = 0; i < n; i++)
			left += group_alive(groups[i]);
		if (left == 0)
			return;
		nanosleep(&ts, NULL);
	}
	for (i = 0; i < n; i++)
		kill(-groups[i], SIGKILL);
}

/* The guard process: keeps the list of the worker's groups until the
 * pipe ends.  Never returns. */
static void NORETURN
guard_main(int rfd)
{
	static pid_t groups[GUARD_MAX];
	struct guard_msg m;
	size_t n = 0, i;
	ssize_t got;

	for (;;) {
		got = read(rfd, &m, sizeof m);
		if (got < 0 && errno == EINTR)
			continue;
		if (got != (ssize_t)sizeof m)
			break; /* end of file (or a broken pipe): the worker is gone */
		if (m.op == 'a' && n < GUARD_MAX)
			groups[n++] = (pid_t)m.pid;
		else if (m.op == 'r')
			for (i = 0; i < n; i++)
				if (groups[i] == (pid_t)m.pid) {
					groups[i] = groups[--n];
					break;
				}
	}
	stop_groups(groups, n);
	_exit(0);
}

/* Sets the guard process's signals: it outlives the worker on purpose,
 * so the signals that stop a worker (a terminal's ^C, systemd's SIGTERM
 * to the whole unit) must not stop it first. */
static void
guard_signals(void)
{
	static const int ignored[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGUSR1, SIGUSR2 };
	struct sigaction sa;
	sigset_t none;
	size_t i;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_IGN;
	for (i = 0; i < ARRAY_LEN(ignored); i++)
		sigaction(ignored[i], &sa, NULL);
	sa.sa_handler = SIG_DFL;
	sigaction(SIGCHLD, &sa, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

/* Starts the guard, once, before the first handler.  Returns 0, or -1
 * with err set (the worker then runs without one, and says so). */
int
guard_start(char *err)
{
	int p[2];
	pid_t pid;

	if (guard_fd >= 0)
		return 0;
	if (pipe2(p, O_CLOEXEC) < 0) {
		errf(err, "pipe for the handler guard: %s", strerror(errno));
		return -1;
	}
	if ((pid = fork()) < 0) {
		errf(err, "fork the handler guard: %s", strerror(errno));
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid == 0) {
		guard_signals();
		if (dup2(p[0], 0) < 0)
			_exit(1);
		close_from(3);
		guard_main(0);
	}
	close(p[0]);
	guard_fd = p[1];
	return 0;
}

/* Sends one message; a guard that died is reported once and forgotten
 * (the worker goes on without it). */
static void
guard_send(int op, pid_t pid)
{
	struct guard_msg m = { op, (int32_t)pid };
	ssize_t n;

	if (guard_fd < 0)
		return;
	while ((n = write(guard_fd, &m, sizeof m)) < 0 && errno == EINTR)
		;
	if (n != (ssize_t)sizeof m) {
		log_warn("handler guard: write: %s; handlers are no longer stopped if this worker is "
		         "killed",
		    n < 0 ? strerror(errno) : "short write");
		close(guard_fd);
		guard_fd = -1;
	}
}

/* A handler's process group pgid was made. */
void
guard_add(pid_t pgid)
{
	guard_send('a', pgid);
}

/* The group pgid's leader was reaped after the group was killed: the
 * guard forgets it (its id may be reused). */
void
guard_forget(pid_t pgid)
{
	guard_send('r', pgid);
}
