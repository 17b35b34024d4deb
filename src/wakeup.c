/* wakeup.c -- wake local idle workers the moment a job is committed.
 *
 * Polling alone makes a job wait for the next poll.  So each worker binds
 * a unix datagram socket in a runtime directory (the wakeup directory),
 * and whatever commits a due job on this host (`jobq enqueue`, the
 * dashboard, `jobq failed retry`, the scheduler) sends one datagram to
 * every worker socket there after its COMMIT: the datagram carries the
 * job's queue (empty: some queue).  A worker that serves that queue polls
 * at once.  The database stays the only truth: a datagram is only a hint
 * to look now, a lost one costs one poll interval, a spurious one one
 * poll.
 *
 * The directory: `[worker] wakeup_dir`, or by default
 * $XDG_RUNTIME_DIR/jobq when that is set (a per-user tmpfs), else
 * /tmp/jobq-UID.  A default directory must be ours, not a link, and
 * closed to others (0700; created so); a configured one (a directory
 * shared by the web server's and the worker's group, say) must only not
 * be writable by everyone.  Where that does not hold the worker polls
 * and says why once, and senders send nothing.
 *
 * Names: DB.PID.RANDOM, DB a hash of the database name, so that workers
 * of other databases on the host are not woken.  A worker removes its
 * socket when it stops; one that crashed leaves it behind, and the next
 * sender that finds nobody bound there (ECONNREFUSED) removes it.
 * Sending never blocks: a worker whose queue of datagrams is full has
 * been woken already. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "log.h"
#include "queue.h"
#include "wakeup.h"

/* Sockets one sender looks at, at most: a bound on its cost. */
#define WAKEUP_MAX_SOCKETS 256
#define DB_TAG_LEN 12

struct wakeup {
	int fd;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
};

/* Where the wakeup sockets of this configuration live; 0 when wakeups
 * are off (wakeup_dir = off).  *dflt: the default place, which must be
 * private to us. */
static int
wakeup_dir(const struct conf *c, char *dir, size_t size, int *dflt)
{
	const char *set = c->worker.wakeup_dir, *xdg = getenv("XDG_RUNTIME_DIR");

	*dflt = set == NULL;
	if (set != NULL && strcmp(set, "off") == 0)
		return 0;
	if (set != NULL)
		snprintf(dir, size, "%s", set);
	else if (xdg != NULL && xdg[0] == '/' && strlen(xdg) < 64)
		snprintf(dir, size, "%s/jobq", xdg);
	else
		snprintf(dir, size, "/tmp/jobq-%u", (unsigned)geteuid());
	return 1;
}

/* Whether dir may hold our sockets (see the top of the file); err says
 * why not. */
static int
dir_safe(const char *dir, int dflt, char *err)
{
	struct stat st;

	if ((dflt ? lstat(dir, &st) : stat(dir, &st)) < 0) {
		errf(err, "wakeup directory %s: %s", dir, strerror(errno));
		return 0;
	}
	if (!S_ISDIR(st.st_mode)) {
		errf(err, "wakeup directory %s: not a directory", dir);
		return 0;
	}
	if (dflt && st.st_uid != geteuid()) {
		errf(err, "wakeup directory %s: owned by uid %u, not by us (uid %u)", dir, (unsigned)st.st_uid,
		    (unsigned)geteuid());
		return 0;
	}
	if (dflt && (st.st_mode & 077) != 0) {
		errf(err, "wakeup directory %s: open to others (mode %04o; want 0700)", dir,
		    (unsigned)(st.st_mode & 07777));
		return 0;
	}
	if (st.st_mode & S_IWOTH) {
		errf(err, "wakeup directory %s: writable by everyone (mode %04o)", dir,
		    (unsigned)(st.st_mode & 07777));
		return 0;
	}
	return 1;
}

/* "DB." : the start of the names of this database's sockets (FNV-1a of
 * the database name). */
static void
db_tag(const struct conf *c, char *tag, size_t size)
{
	uint64_t h = 14695981039346656037ULL;
	const unsigned char *p = (const unsigned char *)(c->db.database ? c->db.database : "");

	for (; *p != '\0'; p++)
		h = (h ^ *p) * 1099511628211ULL;
	snprintf(tag, size, "%0*llx.", DB_TAG_LEN, (unsigned long long)(h >> (64 - 4 * DB_TAG_LEN)));
}

/* Binds this worker's socket.  NULL with err empty: wakeups are off by
 * configuration; NULL with err set: they cannot work here (the worker
 * polls, and logs err once). */
struct wakeup *
wakeup_open(const struct conf *c, char *err)
{
	struct sockaddr_un sa;
	struct wakeup *wk;
	char dir[128], tag[32], rnd[9];
	int dflt;

	err[0] = '\0';
	if (!wakeup_dir(c, dir, sizeof dir, &dflt))
		return NULL;
	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		errf(err, "wakeup directory %s: mkdir: %s", dir, strerror(errno));
		return NULL;
	}
	if (!dir_safe(dir, dflt, err))
		return NULL;
	wk = xcalloc(1, sizeof *wk);
	db_tag(c, tag, sizeof tag);
	random_hex(rnd, 4);
	if ((size_t)snprintf(wk->path, sizeof wk->path, "%s/%s%d.%s", dir, tag, (int)getpid(), rnd) >=
	    sizeof wk->path) {
		errf(err, "wakeup directory %s: too long for a socket name", dir);
		free(wk);
		return NULL;
	}
	memset(&sa, 0, sizeof sa);
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, wk->path, strlen(wk->path) + 1);
	wk->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (wk->fd < 0 || bind(wk->fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
		errf(err, "wakeup socket %s: %s: %s", wk->path, wk->fd < 0 ? "socket" : "bind", strerror(errno));
		if (wk->fd >= 0)
			close(wk->fd);
		free(wk);
		return NULL;
	}
	/* Senders need write permission on the socket: in a shared
	 * directory, the group's members may wake us. */
	chmod(wk->path, 0660);
	return wk;
}

int
wakeup_fd(const struct wakeup *wk)
{
	return wk->fd;
}

const char *
wakeup_path(const struct wakeup *wk)
{
	return wk->path;
}

/* Reads every datagram waiting; returns 1 when one of them names a queue
 * in queues (or no queue), so the caller should poll now. */
int
wakeup_drain(struct wakeup *wk, char *const *queues)
{
	char msg[256];
	ssize_t n;
	int wake = 0;

	while ((n = recv(wk->fd, msg, sizeof msg - 1, MSG_DONTWAIT)) >= 0) {
		size_t i;

		msg[n] = '\0';
		if (n == 0)
			wake = 1;
		for (i = 0; !wake && queues[i] != NULL; i++)
			wake = strcmp(queues[i], msg) == 0;
	}
	return wake;
}

/* Closes and removes the worker's socket. */
void
wakeup_close(struct wakeup *wk)
{
	if (wk == NULL)
		return;
	close(wk->fd);
	unlink(wk->path);
	free(wk);
}

/* Sends one datagram to the socket called name in dir; removes it when
 * nobody is bound there any more (its worker crashed). */
static void
send_one(int fd, const char *dir, const char *name, const char *queue)
{
	struct sockaddr_un sa;
	struct stat st;

	memset(&sa, 0, sizeof sa);
	sa.sun_family = AF_UNIX;
	if ((size_t)snprintf(sa.sun_path, sizeof sa.sun_path, "%s/%s", dir, name) >= sizeof sa.sun_path)
		return;
	if (sendto(fd, queue, strlen(queue), MSG_DONTWAIT | MSG_NOSIGNAL, (struct sockaddr *)&sa, sizeof sa) >= 0 ||
	    errno != ECONNREFUSED)
		return;
	if (lstat(sa.sun_path, &st) == 0 && S_ISSOCK(st.st_mode) && unlink(sa.sun_path) == 0)
		log_debug("wakeup: removed %s: its worker is gone", sa.sun_path);
}

/* Tells the idle workers of this database on this host that a job of
 * queue (NULL: of some queue) was committed and is due.  Call it after
 * the COMMIT, never inside the transaction (a worker woken before it
 * would find nothing).  Best effort and bounded: it never blocks, never
 * fails the caller, and looks at most WAKEUP_MAX_SOCKETS sockets. */
void
wakeup_send(const struct conf *c, const char *queue)
{
	char dir[128], tag[32], err[ERRSZ];
	struct dirent *e;
	unsigned seen = 0;
	int dflt, fd;
	DIR *d;

	if (!wakeup_dir(c, dir, sizeof dir, &dflt) || !dir_safe(dir, dflt, err) || (d = opendir(dir)) == NULL)
		return;
	if ((fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0) {
		closedir(d);
		return;
	}
	db_tag(c, tag, sizeof tag);
	while ((e = readdir(d)) != NULL && seen < WAKEUP_MAX_SOCKETS) {
		if (strncmp(e->d_name, tag, strlen(tag)) != 0)
			continue;
		seen++;
		send_one(fd, dir, e->d_name, queue != NULL ? queue : "");
	}
	close(fd);
	closedir(d);
}

/* wakeup_send for jobs just committed: the queue they share (or any
 * queue when they are of several); nothing when every one of them is
 * delayed (polling finds those when they fall due). */
void
wakeup_enqueued(const struct conf *c, const struct enqueue_item *items, size_t n)
{
	const char *queue = NULL;
	size_t i, due = 0;

	for (i = 0; i < n; i++) {
		if (items[i].at == NULL && items[i].delay_ms > 0)
			continue;
		if (due++ == 0)
			queue = items[i].queue;
		else if (queue != NULL && strcmp(queue, items[i].queue) != 0)
			queue = NULL;
	}
	if (due > 0)
		wakeup_send(c, queue);
}
