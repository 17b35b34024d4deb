/* worker_poll.c -- step 6 of the worker's loop: sleeping in poll(2)
 * until a pipe, a signal, a wakeup datagram or the next deadline, and
 * serving every pipe that is ready.  The same service runs while a
 * database call is in flight (the database waiter), so that handlers are
 * read, reaped and started during every round trip. */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <string.h>

#include "alert.h"
#include "runner.h"
#include "wakeup.h"
#include "worker_int.h"

/* How long poll() may sleep between turns of the loop. */
static int
poll_timeout(const struct worker *w, int64_t now)
{
	int64_t t = min64(now + 1000, keep_due(w));

	if (reserve_can(w))
		t = min64(t, reserve_due(w));
	if (w->db_up) {
		t = min64(t, w->next_heartbeat);
		if (w->ckpt_due != 0)
			t = min64(t, w->ckpt_due);
		t = min64(t, cancel_due(w));
		if (slot_count(w, SLOT_WRITING) > 0)
			t = min64(t, w->write_now ? now : w->next_write);
	} else
		t = min64(t, w->reconnect_at);
	return t <= now ? 0 : (int)(t - now);
}

/* When s's handler has written a new checkpoint, its save (an extension
 * of the leases of the handlers still running with a new checkpoint,
 * worker_lease.c) is made due within CHECKPOINT_SAVE_MS: so that a
 * worker killed soon after still leaves it with the job.  A handler that
 * checkpoints often costs at most one statement that often. */
static void
hurry_checkpoint(struct worker *w, struct slot *s)
{
	size_t len;
	unsigned seq;

	runner_checkpoint(s->run, &len, &seq);
	if (seq == s->ckpt_heard)
		return;
	s->ckpt_heard = seq;
	w->ckpt_due = w->ckpt_due != 0 ? w->ckpt_due : mono_ms() + CHECKPOINT_SAVE_MS;
}

/* Sleeps in poll() for at most timeout ms and services every pipe that
 * is ready; with db_fd >= 0 also wakes for db_events on it, and returns
 * its revents. */
static short
serve_io(struct worker *w, int timeout, int db_fd, short db_events)
{
	struct pollfd *pfd = w->pfd;
	int *first = w->pfd_first, *count = w->pfd_count;
	int n = 1, nalert, ndb = -1;
	unsigned i;

	pfd[0].fd = signal_fd();
	pfd[0].events = POLLIN;
	if (w->wake != NULL) {
		pfd[n].fd = wakeup_fd(w->wake);
		pfd[n++].events = POLLIN;
	}
	if (db_fd >= 0) {
		ndb = n;
		pfd[n].fd = db_fd;
		pfd[n++].events = db_events;
	}
	for (i = 0; i < w->nslots; i++) {
		first[i] = n;
		count[i] = w->slots[i].state == SLOT_RUNNING ? runner_fds(w->slots[i].run, pfd + n) : 0;
		n += count[i];
	}
	nalert = n;
	n += alerts_fds(w->alerts, pfd + n);
	for (i = 0; i < (unsigned)n; i++)
		pfd[i].revents = 0;
	if (poll(pfd, (nfds_t)n, timeout) < 0 && errno != EINTR)
		fatal("poll: %s", strerror(errno));
	/* Always drained, even with no slot free: a datagram left unread
	 * would make every poll() return at once. */
	if (w->wake != NULL && (pfd[1].revents & POLLIN) && wakeup_drain(w->wake, w->opts->queues)) {
		w->next_poll = mono_ms();
		w->active_at = w->next_poll;
	}
	for (i = 0; i < w->nslots; i++)
		if (count[i] > 0) {
			runner_io(w->slots[i].run, pfd + first[i], count[i]);
			hurry_checkpoint(w, &w->slots[i]);
		}
	alerts_io(w->alerts, pfd + nalert);
	return ndb >= 0 ? pfd[ndb].revents : 0;
}

/* Sleeps until the next thing is due and services every pipe that is
 * ready. */
void
poll_wait(struct worker *w, int64_t now)
{
	serve_io(w, poll_timeout(w, now), -1, 0);
}

/* The database waiter (db_set_waiter): while a statement or a commit is
 * in flight the worker goes on with everything that needs no database.
 * It reads its handlers' pipes, reaps them, and concludes the ones that
 * end (their outcomes wait for the next write).  It starts the jobs
 * reserved ahead in their place, and keeps timeouts and leases.  So a
 * slot does not stand empty for a round trip and an fsync: on a fast
 * queue that wait is as long as the handler's run.  Nothing here may
 * call the database, and no slot is freed or taken here (only READY ->
 * RUNNING -> WRITING), so the step that waits finds its own slots as it
 * left them. */
short
poll_db_wait(void *arg, int fd, short events, int timeout_ms)
{
	struct worker *w = arg;
	int64_t now = mono_ms(), due = keep_due(w);
	int t = due <= now ? 0 : due - now > 1000 ? 1000 : (int)(due - now);
	short rev;

	if (timeout_ms >= 0 && timeout_ms < t)
		t = timeout_ms;
	rev = serve_io(w, t, fd, events);
	signal_read(w);
	keep_time(w);
	return rev;
}
