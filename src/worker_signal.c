/* worker_signal.c -- step 1 of the worker's loop: signals read as events.
 * The handlers only write the signal's number to a self-pipe; the loop
 * reads it, reaps the children that ended, and begins a stop (a first
 * SIGTERM/SIGINT) or a harder one (a second). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "alert.h"
#include "log.h"
#include "pool.h"
#include "runner.h"
#include "worker_int.h"

static int sigpipe_fds[2] = { -1, -1 };

/* Signal handlers only write the signal number to the self-pipe. */
static void
on_signal(int sig)
{
	int saved = errno;
	unsigned char b = (unsigned char)sig;
	ssize_t ignored = write(sigpipe_fds[1], &b, 1);

	(void)ignored;
	errno = saved;
}

/* Holds SIGTERM and SIGINT (blocked, kept pending) until signal_setup
 * routes them: a stop that comes while the worker starts (connecting,
 * registering) is then a stop like any other, the worker exits 0,
 * rather than the default action killing it half-started. */
void
signal_hold(void)
{
	sigset_t stop;

	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGINT);
	sigprocmask(SIG_BLOCK, &stop, NULL);
}

/* Makes the self-pipe and routes SIGTERM, SIGINT and SIGCHLD to it, then
 * lets through what signal_hold held; SIGPIPE and SIGHUP are ignored.
 * -1 (err filled) when the pipe cannot be made. */
int
signal_setup(char *err)
{
	struct sigaction sa;

	if (pipe2(sigpipe_fds, O_CLOEXEC | O_NONBLOCK) < 0) {
		errf(err, "pipe: %s", strerror(errno));
		return -1;
	}
	memset(&sa, 0, sizeof sa);
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGCHLD, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGTERM);
	sigaddset(&sa.sa_mask, SIGINT);
	sigprocmask(SIG_UNBLOCK, &sa.sa_mask, NULL);
	return 0;
}

/* Puts the signals back to their defaults and closes the self-pipe.
 * SIGTERM and SIGINT stay blocked: the loop has ended, so a stop that
 * comes now (an operator's second SIGTERM racing the exit) has nothing
 * left to stop, and must not turn the worker's exit 0 into a death by
 * signal. */
void
signal_restore(void)
{
	struct sigaction sa;

	signal_hold();
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_DFL;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGCHLD, &sa, NULL);
	close(sigpipe_fds[0]);
	close(sigpipe_fds[1]);
	sigpipe_fds[0] = sigpipe_fds[1] = -1;
}

/* Reaps every child that has ended, each by the one who tracks it: a
 * handler's runner, an alert program, a persistent process, or nobody. */
static void
reap_children(struct worker *w)
{
	for (;;) {
		siginfo_t si;
		unsigned i;

		memset(&si, 0, sizeof si);
		if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) < 0 || si.si_pid == 0)
			return;
		for (i = 0; i < w->nslots; i++)
			if (w->slots[i].state == SLOT_RUNNING && runner_waits_for(w->slots[i].run, si.si_pid))
				break;
		if (i < w->nslots)
			runner_reap(w->slots[i].run);
		else if (!alerts_reap(w->alerts, si.si_pid) && !pool_reap(si.si_pid))
			waitpid(si.si_pid, NULL, 0); /* not ours to track */
	}
}

/* Begins a stop at level (1: finish running jobs; 2: terminate them),
 * unless one at that level or harder is under way; the jobs reserved
 * ahead go back at once.  why is what asked for it, for the log. */
void
signal_stop(struct worker *w, int level, const char *why)
{
	unsigned i, running = 0;

	if (level <= w->stopping)
		return;
	if (w->stopping == 0)
		w->stopping_since = mono_ms();
	w->stopping = level;
	start_give_back(w);
	alerts_stop(w->alerts, mono_ms());
	for (i = 0; i < w->nslots; i++)
		running += w->slots[i].state == SLOT_RUNNING;
	if (level == 1) {
		log_info("%s: taking no new jobs, waiting for %u running", why, running);
		return;
	}
	log_info("%s: terminating %u running handlers, their jobs go back to the queue", why, running);
	for (i = 0; i < w->nslots; i++)
		if (w->slots[i].state == SLOT_RUNNING)
			runner_terminate(w->slots[i].run);
}

/* Step 1: acts on the signals the self-pipe holds (each SIGTERM or
 * SIGINT a stop one level harder), then reaps the children. */
void
signal_read(struct worker *w)
{
	unsigned char buf[64];
	ssize_t n, i;

	while ((n = read(sigpipe_fds[0], buf, sizeof buf)) > 0)
		for (i = 0; i < n; i++) {
			if (buf[i] == SIGCHLD)
				continue;
			signal_stop(w, w->stopping + 1, buf[i] == SIGINT ? "SIGINT" : "SIGTERM");
		}
	reap_children(w);
}

/* The self-pipe's read end, for the loop's poll set (-1 before
 * signal_setup and after signal_restore). */
int
signal_fd(void)
{
	return sigpipe_fds[0];
}
