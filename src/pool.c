/* pool.c -- the long-lived processes of persistent handlers.
 *
 * A handler with `mode = persistent` is not started per job: its
 * process stays up and takes jobs one after another over the line
 * protocol of handlers/jobq-handler.7 (a request line on stdin, a status
 * line on descriptor 3).  The pool keeps those processes; runner.c lends
 * one for a job (pool_take) and gives it back when the job is over
 * (pool_give_back).
 *
 * The pool holds at most max_procs live processes in all (the worker's
 * concurrency): a busy one serves one job in one slot, so a type never
 * needs more; when a type needs a new process and the pool is full, the
 * longest-idle process of another type is stopped to make room.  Idle
 * processes are kept (warm for the next job of their type) until the
 * worker stops, until they are idle for the handler's idle_timeout, or
 * until they are recycled: after max_jobs jobs, or when their resident
 * memory is over max_memory after a job.
 *
 * A process is stopped by closing its pipes (the helper modules end on
 * EOF) and sending SIGTERM to its process group; SIGKILL follows after
 * the handler's kill_grace.  The worker reaps children from its SIGCHLD
 * self-pipe: a busy process is reaped by its runner, any other by
 * pool_reap. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guard.h"
#include "log.h"
#include "metrics.h"
#include "pool.h"

#define STOP_POLL_MS 10

enum pstate { PS_IDLE, PS_BUSY, PS_STOPPING };

struct pooled {
	const struct handler *h;
	pid_t pid;
	int fd[SPAWN_NFDS]; /* while idle: our ends (while busy the runner holds them) */
	enum pstate state;
	unsigned jobs;      /* jobs it has finished */
	int64_t idle_since; /* PS_IDLE: since when */
	int64_t kill_at;    /* PS_STOPPING: SIGKILL then */
};

static struct pooled **procs;
static size_t nprocs;
static unsigned limit = 1;

static void
close_fds(int fd[SPAWN_NFDS])
{
	int i;

	for (i = 0; i < SPAWN_NFDS; i++) {
		if (fd[i] >= 0)
			close(fd[i]);
		fd[i] = -1;
	}
}

static void
drop(size_t i)
{
	close_fds(procs[i]->fd);
	free(procs[i]);
	procs[i] = procs[--nprocs];
}

static size_t
index_of(const struct pooled *p)
{
	size_t i;

	for (i = 0; i < nprocs; i++)
		if (procs[i] == p)
			return i;
	fatal("pool: process %d is not in the pool", (int)p->pid);
}

/* Sets how many processes may live at once (the worker's concurrency). */
void
pool_init(unsigned max_procs)
{
	limit = max_procs > 0 ? max_procs : 1;
}

/* Stops p: EOF on its stdin, SIGTERM to its group, SIGKILL after the
 * handler's kill_grace (pool_tick). */
static void
stop_proc(struct pooled *p, const char *why)
{
	close_fds(p->fd);
	kill(-p->pid, SIGTERM);
	p->state = PS_STOPPING;
	p->kill_at = mono_ms() + p->h->kill_grace_ms;
	log_debug("persistent handler '%s' (pid %d) stops: %s", p->h->type, (int)p->pid, why);
}

/* Whether an idle process is still fit to take a job: it must not have
 * written on descriptor 3 between jobs (a protocol violation) nor
 * closed it.  Output it wrote to stdout or stderr between jobs belongs
 * to no job and is dropped. */
static int
idle_fit(struct pooled *p)
{
	char buf[4096];
	ssize_t n;
	int i;

	for (i = SPAWN_OUT; i <= SPAWN_ERR; i++)
		while ((n = read(p->fd[i], buf, sizeof buf)) > 0)
			log_debug(
			    "persistent handler '%s' (pid %d): %zd bytes of output between jobs dropped",
			    p->h->type, (int)p->pid, n);
	n = read(p->fd[SPAWN_CTL], buf, sizeof buf);
	if (n > 0) {
		log_warn("persistent handler '%s' (pid %d) wrote on descriptor 3 between jobs (protocol "
		         "violation): it is replaced",
		    p->h->type, (int)p->pid);
		return 0;
	}
	return n < 0 && errno == EAGAIN;
}

/* Makes room for one more process: stops the longest-idle one when the
 * pool is full.  It counts live processes only: one already stopping
 * frees its place by itself (pool_has_room, which decides whether a job
 * may start at all, counts those too). */
static void
make_room(void)
{
	struct pooled *oldest = NULL;
	unsigned live = 0;
	size_t i;

	for (i = 0; i < nprocs; i++) {
		if (procs[i]->state == PS_STOPPING)
			continue;
		live++;
		if (procs[i]->state == PS_IDLE &&
		    (oldest == NULL || procs[i]->idle_since < oldest->idle_since))
			oldest = procs[i];
	}
	if (live >= limit && oldest != NULL)
		stop_proc(oldest, "room for another type's process");
}

/* Whether a process of h can be lent now (pool_take): an idle one of h,
 * or room for a new one.  Processes being stopped count until they are
 * gone, so that a handler slow to exit (or deaf to SIGTERM until its
 * kill_grace) cannot make the worker hold more than max_procs
 * processes.  When the pool is full, the longest-idle process of another
 * type is stopped, and the caller asks again once it is gone (its
 * SIGCHLD, or its kill_grace: pool_deadline, wakes the worker). */
int
pool_has_room(const struct handler *h)
{
	size_t i;

	for (i = 0; i < nprocs; i++)
		if (procs[i]->state == PS_IDLE && procs[i]->h == h)
			return 1;
	if (nprocs < limit)
		return 1;
	make_room();
	return 0;
}

/* Lends a process of handler h for one job: an idle one, else a new one
 * (spawn_handler, without per-job variables in its environment).  Its
 * pid and pipes are copied to *sp, which the runner then owns until
 * pool_give_back.  Returns NULL when no process could be made (err
 * set); a new one whose program could not be executed is returned with
 * sp->start_errno set, like spawn_handler's. */
struct pooled *
pool_take(const struct handler *h, unsigned max_attempts, struct spawned *sp, char *err)
{
	struct pooled *p;
	char **envp;
	size_t i;
	int k;

	for (i = 0; i < nprocs; i++) {
		p = procs[i];
		if (p->state != PS_IDLE || p->h != h)
			continue;
		if (!idle_fit(p)) {
			metrics_restart(h->type, MR_PROTOCOL);
			stop_proc(p, "unfit");
			continue;
		}
		p->state = PS_BUSY;
		memset(sp, 0, sizeof *sp);
		sp->pid = p->pid;
		for (k = 0; k < SPAWN_NFDS; k++)
			sp->fd[k] = p->fd[k], p->fd[k] = -1;
		return p;
	}
	make_room();
	envp = spawn_env(h, NULL, max_attempts);
	k = spawn_handler(h, envp, sp, err);
	strv_free(envp);
	if (k < 0)
		return NULL;
	p = xcalloc(1, sizeof *p);
	p->h = h;
	p->pid = sp->pid;
	p->state = PS_BUSY;
	for (k = 0; k < SPAWN_NFDS; k++)
		p->fd[k] = -1;
	procs = xrealloc(procs, (nprocs + 1) * sizeof *procs);
	procs[nprocs++] = p;
	if (sp->start_errno == 0)
		log_debug("persistent handler '%s' started (pid %d)", h->type, (int)p->pid);
	return p;
}

/* Whether p, as pool_take lent it, had served a job before (an idle
 * process reused) rather than being started for this one. */
int
pool_reused(const struct pooled *p)
{
	return p->jobs > 0;
}

/* Resident memory of process group pgid in bytes: the sum over every
 * process of the group (a wrapper script that does not exec, and what a
 * handler starts, count too), read from /proc/PID/stat; 0 when unknown.
 * It reads one small file per process on the machine, so it runs only
 * for handlers that set max_memory, once per job. */
static uint64_t
rss_bytes(pid_t pgid)
{
	char path[64], line[1024], *p;
	unsigned long long rss, total = 0;
	struct dirent *d;
	DIR *dir;
	FILE *f;
	int grp;

	if ((dir = opendir("/proc")) == NULL)
		return 0;
	while ((d = readdir(dir)) != NULL) {
		if (d->d_name[0] < '1' || d->d_name[0] > '9')
			continue;
		snprintf(path, sizeof path, "/proc/%.20s/stat", d->d_name);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		p = fgets(line, sizeof line, f);
		fclose(f);
		/* pid (comm) state ppid pgrp ... rss is field 24; comm may hold
		 * spaces and parentheses, so count from the last ')'. */
		if (p == NULL || (p = strrchr(line, ')')) == NULL ||
		    sscanf(p + 1, " %*s %*s %d" /* state ppid pgrp */
		                  " %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s" /* session .. stime */
		                  " %*s %*s %*s %*s %*s %*s %*s %*s %llu", /* cutime .. vsize, rss */
		        &grp, &rss) != 2 || grp != (int)pgid)
			continue;
		total += rss;
	}
	closedir(dir);
	return total * (uint64_t)sysconf(_SC_PAGESIZE);
}

/* Takes p back after a job, with the pipes the runner still holds (fd,
 * -1 where closed; the pool owns them from here).  reaped: the runner
 * reaped the process (it died during the job): it leaves the pool.
 * reusable 1: it replied properly and may take the next job; it is then
 * kept idle unless max_jobs or max_memory say it is time to recycle it.
 * 0: it broke the protocol or left its job unfinished; -1: the worker
 * stopped its job (a timeout, a cancel, the worker's own stop), which a
 * handler that catches SIGTERM may still answer.  Either way it is
 * stopped: the next job gets a fresh process. */
void
pool_give_back(struct pooled *p, int fd[SPAWN_NFDS], int reaped, int reusable)
{
	uint64_t rss;
	int k;

	for (k = 0; k < SPAWN_NFDS; k++)
		p->fd[k] = fd[k], fd[k] = -1;
	if (reaped) {
		metrics_restart(p->h->type, MR_DIED);
		drop(index_of(p));
		return;
	}
	p->jobs++;
	if (reusable < 0) {
		metrics_restart(p->h->type, MR_STOPPED);
		stop_proc(p, "its job was stopped (timeout, cancel or the worker's stop)");
		return;
	}
	if (!reusable) {
		metrics_restart(p->h->type, MR_PROTOCOL);
		stop_proc(p, "it broke the protocol or did not finish its job");
		return;
	}
	for (k = 0; k < SPAWN_NFDS; k++)
		if (p->fd[k] < 0) {
			metrics_restart(p->h->type, MR_PROTOCOL);
			stop_proc(p, "it closed one of its pipes");
			return;
		}
	if (p->h->max_jobs > 0 && p->jobs >= p->h->max_jobs) {
		log_info("persistent handler '%s' (pid %d) is recycled after %u jobs (max_jobs)", p->h->type,
		    (int)p->pid, p->jobs);
		metrics_restart(p->h->type, MR_RECYCLED);
		stop_proc(p, "max_jobs");
		return;
	}
	if (p->h->max_memory > 0 && (rss = rss_bytes(p->pid)) > p->h->max_memory) {
		log_info("persistent handler '%s' (pid %d) is recycled: resident memory %llu KiB is over "
		         "max_memory (%llu KiB)",
		    p->h->type, (int)p->pid, (unsigned long long)(rss / 1024),
		    (unsigned long long)(p->h->max_memory / 1024));
		metrics_restart(p->h->type, MR_RECYCLED);
		stop_proc(p, "max_memory");
		return;
	}
	p->state = PS_IDLE;
	p->idle_since = mono_ms();
}

static const char *
status_words(int status, char *buf, size_t len)
{
	if (WIFEXITED(status))
		snprintf(buf, len, "exit %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, len, "killed by signal %d", WTERMSIG(status));
	else
		snprintf(buf, len, "status %d", status);
	return buf;
}

/* Reaps pid when it is a pool process that is not busy (an idle one
 * that died, or one being stopped); returns 1 if it was one of ours. */
int
pool_reap(pid_t pid)
{
	char words[64];
	size_t i;
	int status;

	for (i = 0; i < nprocs; i++)
		if (procs[i]->pid == pid && procs[i]->state != PS_BUSY)
			break;
	if (i == nprocs)
		return 0;
	kill(-pid, SIGKILL); /* what it left in its group */
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			status = 0;
			break;
		}
	guard_forget(pid);
	if (procs[i]->state == PS_IDLE) {
		metrics_restart(procs[i]->h->type, MR_DIED);
		log_warn("persistent handler '%s' (pid %d) ended between jobs (%s); a new one starts for "
		         "the next job",
		    procs[i]->h->type, (int)pid, status_words(status, words, sizeof words));
	}
	drop(i);
	return 1;
}

/* SIGKILL to processes past their kill_grace; stops those idle longer
 * than their idle_timeout. */
void
pool_tick(int64_t now)
{
	size_t i;

	for (i = 0; i < nprocs; i++) {
		struct pooled *p = procs[i];

		if (p->state == PS_STOPPING && now >= p->kill_at) {
			kill(-p->pid, SIGKILL);
			p->kill_at = INT64_MAX;
		} else if (p->state == PS_IDLE && p->h->idle_timeout_ms > 0 &&
		    now - p->idle_since >= p->h->idle_timeout_ms)
			stop_proc(p, "idle_timeout");
	}
}

/* The next moment pool_tick has work to do. */
int64_t
pool_deadline(void)
{
	int64_t t = INT64_MAX;
	size_t i;

	for (i = 0; i < nprocs; i++) {
		const struct pooled *p = procs[i];

		if (p->state == PS_STOPPING && p->kill_at < t)
			t = p->kill_at;
		else if (p->state == PS_IDLE && p->h->idle_timeout_ms > 0 &&
		    p->idle_since + p->h->idle_timeout_ms < t)
			t = p->idle_since + p->h->idle_timeout_ms;
	}
	return t;
}

/* The worker stops: stops every process (none is busy by now: the
 * worker has concluded or freed every runner) and waits until all are gone, SIGKILL after kill_grace. */
void
pool_stop(void)
{
	size_t i;

	for (i = 0; i < nprocs; i++)
		if (procs[i]->state != PS_STOPPING)
			stop_proc(procs[i], "the worker stops");
	while (nprocs > 0) {
		int64_t now = mono_ms();
		int status;

		for (i = 0; i < nprocs;) {
			pid_t r = waitpid(procs[i]->pid, &status, WNOHANG);

			if (r == procs[i]->pid || (r < 0 && errno == ECHILD)) {
				guard_forget(procs[i]->pid);
				drop(i);
			}
			else
				i++;
		}
		pool_tick(now);
		if (nprocs > 0)
			usleep(STOP_POLL_MS * 1000);
	}
	free(procs);
	procs = NULL;
}
