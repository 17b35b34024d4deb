/* guard.c -- a watchdog that stops a dead worker's handlers.
 *
 * A handler runs in a process group of its own, so a worker killed with
 * SIGKILL (or by the OOM killer) leaves its handlers running with nobody
 * to enforce their timeouts or to record their outcomes.  Their leases
 * then expire, another worker runs the same jobs, and two runs of one
 * job overlap.  PR_SET_PDEATHSIG would reach only the group leader, not
 * what it started.
 *
 * So the worker forks one small guard process, in a session of its own,
 * before it starts any handler.  The two share a table of the worker's live process groups
 * (an anonymous shared mapping made before the fork): the worker writes
 * a group's id into a free entry when it makes the group and clears it
 * once it has reaped the group's leader, a plain store each, with no
 * system call and no wakeup of the guard per job.  The guard does
 * nothing but wait on a pipe whose only writer is the worker.  When that
 * pipe reads end of file the worker is gone, however it ended; the guard
 * then sends SIGTERM to every group in the table, SIGKILL a grace later
 * to what is left, and exits.  A worker that stops normally has reaped
 * its groups first, and the table is empty.
 *
 * The grace is bounded by the lease (guard_grace): the dead worker's
 * jobs come back when their leases end, and a handler that catches
 * SIGTERM to clean up must be gone by then, or the job's next run, by
 * another worker, overlaps it.
 *
 * An entry is one aligned 32-bit store, so the guard never reads half an
 * id; a worker killed between reaping a leader and clearing its entry
 * leaves an id that names no group any more (the kill then fails with
 * ESRCH), unless the kernel gave it to a new group in that instant. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef HAVE_CLOSE_RANGE
#include <linux/close_range.h>
#endif

#include "guard.h"
#include "log.h"
#include "util.h"

#define GUARD_GRACE_MS 1000 /* SIGTERM, then SIGKILL at most this much later */
#define GUARD_MAX 65536     /* groups listed at once (far above any concurrency) */

/* The table both processes see; 0 is a free entry. */
static volatile int32_t *groups;
static size_t used;        /* the worker's high-water mark: entries past it are 0 */
static int guard_fd = -1;  /* the worker's end of the pipe; -1: no guard */

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

/* SIGTERM to SIGKILL for the groups of a worker whose leases last
 * lease_ms: GUARD_GRACE_MS, at most a tenth of the lease (as for a
 * handler the worker stops for its lease, worker_keep.c).  The worker
 * extended its leases at most a heartbeat -- at most half of the lease
 * -- before it died, so its handlers are gone well before the first of
 * its jobs can be taken again. */
static int
guard_grace(int64_t lease_ms)
{
	return lease_ms / 10 < GUARD_GRACE_MS ? (int)(lease_ms / 10) : GUARD_GRACE_MS;
}

/* The worker is gone: stop every group still listed, gently first,
 * and with SIGKILL grace_ms later. */
static void
stop_groups(int grace_ms)
{
	struct timespec ts = { 0, 50 * 1000 * 1000 };
	size_t i;
	int waited, left;

	for (i = 0; i < GUARD_MAX; i++)
		if (groups[i] > 0)
			kill(-(pid_t)groups[i], SIGTERM);
	for (waited = 0; waited < grace_ms; waited += 50) {
		for (i = 0, left = 0; i < GUARD_MAX; i++)
			left += groups[i] > 0 && group_alive((pid_t)groups[i]);
		if (left == 0)
			return;
		nanosleep(&ts, NULL);
	}
	for (i = 0; i < GUARD_MAX; i++)
		if (groups[i] > 0)
			kill(-(pid_t)groups[i], SIGKILL);
}

/* The guard process: waits until the pipe ends (the worker is gone),
 * then stops what the table lists.  Never returns. */
static void NORETURN
guard_main(int rfd, int grace_ms)
{
	ssize_t n;
	char c;

	for (;;) {
		n = read(rfd, &c, 1); /* nobody writes: this returns at end of file */
		if (n > 0 || (n < 0 && errno == EINTR))
			continue;
		break;
	}
	stop_groups(grace_ms);
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

/* Starts the guard, once, before the first handler, for a worker whose
 * leases last lease_ms (reserve_ttl).  Returns 0, or -1 with err set
 * (the worker then runs without one, and says so). */
int
guard_start(int64_t lease_ms, char *err)
{
	int p[2], status = 0;
	pid_t pid, rc;

	if (guard_fd >= 0)
		return 0;
	if (groups == NULL) {
		void *m = mmap(NULL, GUARD_MAX * sizeof *groups, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);

		if (m == MAP_FAILED) {
			errf(err, "mmap the handler guard's table: %s", strerror(errno));
			return -1;
		}
		groups = m;
	}
	if (pipe2(p, O_CLOEXEC) < 0) {
		errf(err, "pipe for the handler guard: %s", strerror(errno));
		return -1;
	}
	/* Forked twice: the guard is not the worker's child (the worker's
	 * children are its handlers, and tools that wait for those to end
	 * must not wait on the guard), and nothing has to reap it.  And in a
	 * session of its own, out of the worker's process group: whatever
	 * signals that group -- `kill -9 -- -PGID`, a shell's `kill -9 %1`,
	 * timeout(1)'s SIGKILL, supervisord's killasgroup -- would otherwise
	 * kill the guard with the worker and leave the handlers (their own
	 * groups) running.  A terminal's signals still end a foreground
	 * worker as before: ^C reaches the worker, which stops its handlers
	 * itself, and the guard, which ignored it anyway, ends once the
	 * worker has; nor can ^Z stop the guard now.  Without a terminal it
	 * cannot get job control's SIGTTIN or SIGTTOU either. */
	if ((pid = fork()) < 0) {
		errf(err, "fork the handler guard: %s", strerror(errno));
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid == 0) {
		guard_signals();
		if (setsid() < 0) /* not a group leader: a fresh child */
			_exit(1);
		if ((pid = fork()) != 0)
			_exit(pid < 0 ? 1 : 0); /* the guard's parent: done */
		if (dup2(p[0], 0) < 0)
			_exit(1);
		close_from(3);
		guard_main(0, guard_grace(lease_ms));
	}
	close(p[0]);
	while ((rc = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
		;
	if (rc < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		errf(err, "fork the handler guard: it did not start");
		close(p[1]);
		return -1;
	}
	guard_fd = p[1];
	return 0;
}

/* A handler's process group pgid was made. */
void
guard_add(pid_t pgid)
{
	size_t i;

	if (guard_fd < 0)
		return;
	for (i = 0; i < used && groups[i] != 0; i++)
		;
	if (i == GUARD_MAX) {
		log_warn("handler guard: more than %d process groups at once; group %d is not guarded",
		    GUARD_MAX, (int)pgid);
		return;
	}
	groups[i] = (int32_t)pgid;
	if (i == used)
		used++;
}

/* The group pgid's leader was reaped after the group was killed: the
 * guard forgets it (its id may be reused). */
void
guard_forget(pid_t pgid)
{
	size_t i;

	if (guard_fd < 0)
		return;
	for (i = 0; i < used; i++)
		if (groups[i] == (int32_t)pgid) {
			groups[i] = 0;
			break;
		}
	while (used > 0 && groups[used - 1] == 0)
		used--;
}
