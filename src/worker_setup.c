/* worker_setup.c -- what `jobq work` sets up once, before its loop: the
 * database wait limit, enough open files for its handlers, and its
 * identity in the registry. */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "spawn.h"
#include "worker_int.h"

#define FDS_PER_SLOT SPAWN_NFDS /* a handler's stdin, stdout, stderr and control pipes, our ends */
#define FDS_SPARE 16

/* The longest one database call of the worker may wait (see
 * db_set_wait_limit): a third of the heartbeat interval, so that a
 * lease outlives several of them; at least 1 s, the unit of the
 * servers' lock wait timeouts, and at most 10 s. */
int64_t
setup_wait_limit(const struct conf *c)
{
	int64_t ms = c->worker.heartbeat_ms / 3;

	return ms < 1000 ? 1000 : ms > 10000 ? 10000 : ms;
}

/* Descriptors open now. */
static unsigned
open_fds(void)
{
	struct rlimit rl;
	unsigned n = 0;
	int fd, top = 1024;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < 65536)
		top = (int)rl.rlim_cur;
	for (fd = 0; fd < top; fd++)
		n += fcntl(fd, F_GETFD) >= 0;
	return n;
}

/* Makes sure that concurrency handlers can run at once under the
 * open-files limit: each holds FDS_PER_SLOT pipes, on top of what the
 * worker holds now, extra more it will open (its /metrics server) and
 * FDS_SPARE for a handler being started, a reconnect and the libraries.  Raises the soft limit as far as needed
 * when the hard limit allows; otherwise says how many handlers fit. */
int
setup_fd_budget(unsigned concurrency, unsigned extra, char *err)
{
	struct rlimit rl;
	unsigned long long own = open_fds() + FDS_SPARE + extra,
	                   need = own + FDS_PER_SLOT * (unsigned long long)concurrency, hard;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= need)
		return 0;
	if (rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= need) {
		rl.rlim_cur = (rlim_t)need;
		if (setrlimit(RLIMIT_NOFILE, &rl) == 0)
			return 0;
	}
	hard = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > rl.rlim_cur ? rl.rlim_max : rl.rlim_cur;
	errf(err,
	    "concurrency %u needs %llu open files (%d per handler, %llu for the worker) but the "
	    "open-files limit (RLIMIT_NOFILE, ulimit -n) is %llu: it allows concurrency %llu at most; "
	    "lower --concurrency or raise the limit",
	    concurrency, need, FDS_PER_SLOT, own, hard, hard > own ? (hard - own) / FDS_PER_SLOT : 0);
	return -1;
}

/* The worker's id in the registry and the logs: host:pid:random. */
void
setup_identity(struct worker *w)
{
	char rnd[9];

	if (gethostname(w->host, sizeof w->host) < 0)
		snprintf(w->host, sizeof w->host, "localhost");
	w->host[sizeof w->host - 1] = '\0';
	random_hex(rnd, 4);
	snprintf(w->id, sizeof w->id, "%.100s:%d:%s", w->host, (int)getpid(), rnd);
}
