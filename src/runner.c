/* runner.c -- run one handler program for one job (exec mode).
 *
 * spawn.c starts the program the one careful way; the worker's poll loop
 * then feeds the payload to stdin and reads stdout, stderr and the
 * control channel (descriptor 3) at the same time, so no side can block
 * another whatever their sizes; output is kept in bounded captures, the
 * control lines in a bounded buffer.  On timeout the whole process group
 * gets SIGTERM, then SIGKILL after kill_grace.  When the handler itself
 * exits, whatever it left running in its process group is killed, and
 * pipes still held open by something that escaped the group are closed
 * after a short drain: the job is over when its handler is.
 *
 * Persistent mode (mode = persistent) runs the job in a process lent by
 * pool.c instead: the payload goes to it as one request line, and the
 * job is over when its status line arrives on descriptor 3 (the process
 * goes back to the pool) or when the process ends (it is reaped like an
 * exec-mode handler: a crash mid-job is an exit by signal).  The
 * timeout, the kill and the captures are the same in both modes. */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "capture.h"
#include "guard.h"
#include "json.h"
#include "log.h"
#include "pool.h"
#include "runner.h"
#include "spawn.h"

#define DRAIN_MS 2000 /* pipes may outlive the handler this long */
#define READ_CHUNK 65536

enum { P_IN = SPAWN_IN, P_OUT = SPAWN_OUT, P_ERR = SPAWN_ERR, P_CTL = SPAWN_CTL, NFDS = SPAWN_NFDS };

struct runner {
	pid_t pid;
	int fd[NFDS]; /* our ends: stdin (write), stdout, stderr, control (read); -1 closed */
	const char *payload;
	size_t payload_len, written;
	struct capture *out, *err;
	char *ctl; /* the control channel's complete lines, at most RUNNER_CONTROL_MAX */
	size_t ctl_len;
	int ctl_overflow;
	size_t prog_off, prog_len; /* where in ctl the newest progress line is; 0 long: none */
	char *ckpt;                /* the newest checkpoint line, kept apart; NULL: none */
	size_t ckpt_len;
	unsigned ckpt_seq; /* checkpoint lines so far */
	char *all;         /* what runner_control returns: ctl, then ckpt */
	/* Each kept line's number on the channel as the handler wrote it
	 * (progress lines replace each other, the checkpoint is kept
	 * apart), so that an error names the line the handler wrote. */
	size_t *nos, nnos, prog_idx, seen, ckpt_no;
	size_t *all_nos; /* what runner_control returns: nos, then ckpt_no */
	char *line;                /* a control line not yet ended by its newline */
	size_t line_len;
	int64_t started, ended;
	int64_t timeout_at, kill_at, drain_until;
	int64_t timeout_ms, grace_ms;
	int reaped, status;
	int timed_out, interrupted;
	int start_errno;
	char start_what[16];
	/* persistent mode */
	struct pooled *pooled; /* the process lent for this job; NULL in exec mode */
	int reused;            /* ... an idle one, which had served a job before */
	char *req;             /* the request line (payload points into it) */
	int replied, reply_status; /* its status line came */
	int broken;                /* it wrote past its status line: not reused */
	char *violation;           /* the protocol violation it was killed for */
	int untaken;               /* it ended without reading a byte of the request */
};

static void
close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* Appends JSON text p to b as one line: a control character between
 * tokens (a line break, a tab) becomes a space, one inside a string
 * (which a lenient writer may have stored raw) its \u escape. */
static void
one_line(struct buf *b, const char *p, size_t len)
{
	int in_str = 0, esc = 0;
	size_t i;

	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)p[i];

		if (c >= 0x20)
			buf_addc(b, (char)c);
		else if (in_str)
			buf_printf(b, "\\u%04x", c);
		else
			buf_addc(b, ' ');
		if (esc)
			esc = 0;
		else if (in_str && c == '\\')
			esc = 1;
		else if (c == '"')
			in_str = !in_str;
	}
}

/* The request line of job j (handlers/jobq-handler.7): its fields, then
 * the payload as stored (JSON: job_defect refused any other), made one
 * line by one_line when it holds a control character. */
static char *
request_line(const struct job *j, unsigned max_attempts, size_t *len)
{
	cJSON *o = cJSON_CreateObject();
	struct buf b;
	char *head;
	size_t i;

	cJSON_AddNumberToObject(o, "id", (double)j->id);
	cJSON_AddStringToObject(o, "type", j->type);
	cJSON_AddStringToObject(o, "queue", j->queue);
	cJSON_AddNumberToObject(o, "attempt", j->attempt);
	cJSON_AddNumberToObject(o, "max_attempts", max_attempts);
	cJSON_AddStringToObject(o, "enqueued_at", j->created_at);
	if (j->checkpoint != NULL)
		cJSON_AddStringToObject(o, "checkpoint", j->checkpoint);
	if (j->run_trace[0] != '\0')
		cJSON_AddStringToObject(o, "traceparent", j->run_trace);
	if ((head = cJSON_PrintUnformatted(o)) == NULL)
		fatal("out of memory");
	cJSON_Delete(o);
	buf_init(&b);
	buf_add(&b, head, strlen(head) - 1); /* without its closing brace */
	buf_adds(&b, ",\"payload\":");
	for (i = 0; i < j->payload_len && (unsigned char)j->payload[i] >= 0x20; i++)
		;
	if (i == j->payload_len) /* the common case: nothing to change */
		buf_add(&b, j->payload, j->payload_len);
	else
		one_line(&b, j->payload, j->payload_len);
	buf_adds(&b, "}\n");
	free(head);
	*len = b.len;
	return buf_steal(&b);
}

/* Starts the handler for job j (spawn_handler).  Returns NULL only when
 * no process could be made (vfork, pipe); a program that cannot be
 * executed gives a runner that ends at once with start_errno set. */
struct runner *
runner_start(const struct handler *h, const struct job *j, unsigned max_attempts, char *err)
{
	struct spawned sp;
	struct runner *r;
	struct pooled *p = NULL;
	char **envp;
	int rc = 0, i;
	int64_t started;

	/* The run is timed from before the spawn: a parent descheduled
	 * right after vfork would otherwise time a 6 s handler at less
	 * than 6 s.  A persistent handler's is timed from when the pool
	 * gave it, without its start-up. */
	if (h->persistent) {
		rc = (p = pool_take(h, max_attempts, &sp, err)) == NULL ? -1 : 0;
		started = mono_ms();
	} else {
		envp = spawn_env(h, j, max_attempts);
		started = mono_ms();
		rc = spawn_handler(h, envp, &sp, err);
		strv_free(envp);
	}
	if (rc < 0)
		return NULL;
	r = xcalloc(1, sizeof *r);
	r->pid = sp.pid;
	for (i = 0; i < NFDS; i++)
		r->fd[i] = sp.fd[i];
	r->pooled = p;
	r->reused = p != NULL && pool_reused(p);
	if (p != NULL) {
		r->req = request_line(j, max_attempts, &r->payload_len);
		r->payload = r->req;
	} else {
		r->payload = j->payload;
		r->payload_len = j->payload_len;
	}
	r->out = capture_new(h->stdout_limit);
	r->err = capture_new(h->stderr_limit);
	r->started = started;
	r->timeout_ms = h->timeout_ms;
	r->grace_ms = h->kill_grace_ms;
	r->timeout_at = h->timeout_ms > 0 ? r->started + h->timeout_ms : INT64_MAX;
	r->kill_at = INT64_MAX;
	r->drain_until = INT64_MAX;
	if (sp.start_errno != 0) {
		r->start_errno = sp.start_errno;
		snprintf(r->start_what, sizeof r->start_what, "%s", sp.start_what);
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
	if (r->pooled != NULL)
		pool_give_back(r->pooled, r->fd, r->reaped,
		    r->timed_out || r->interrupted ? -1
		    : r->replied && !r->broken && r->violation == NULL && r->written == r->payload_len ? 1
		                                                                                  : 0);
	for (i = 0; i < NFDS; i++)
		close_fd(&r->fd[i]);
	capture_free(r->out);
	capture_free(r->err);
	free(r->ctl);
	free(r->ckpt);
	free(r->all);
	free(r->nos);
	free(r->all_nos);
	free(r->req);
	free(r->line);
	free(r->violation);
	free(r);
}

pid_t
runner_pid(const struct runner *r)
{
	return r->pid;
}

/* Whether pid is this runner's handler, not yet reaped: after the reap,
 * while its pipes drain, the pid may be another child's. */
int
runner_waits_for(const struct runner *r, pid_t pid)
{
	return !r->reaped && r->pid == pid;
}

/* Fills up to RUNNER_MAX_FDS pollfds for the pipes still open; returns
 * how many. */
int
runner_fds(struct runner *r, struct pollfd *pfd)
{
	int n = 0, i;

	if (r->replied)
		return 0; /* the process is the pool's again */
	for (i = 0; i < NFDS; i++) {
		if (r->fd[i] < 0 || (i == P_IN && r->written == r->payload_len))
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
	/* A persistent handler's stdin stays open for its next request. */
	if (r->pooled == NULL || r->written < r->payload_len)
		close_fd(&r->fd[P_IN]);
}

/* The control channel is kept whole up to RUNNER_CONTROL_MAX bytes (its
 * lines are read as JSON: a cut one would be garbage); past that the
 * rest is counted as an overflow, which fails the job. */
static void
keep_control(struct runner *r, const char *buf, size_t n)
{
	size_t room = RUNNER_CONTROL_MAX - r->ctl_len;

	if (n > room) {
		r->ctl_overflow = 1;
		n = room;
	}
	if (n == 0)
		return;
	r->ctl = xrealloc(r->ctl, r->ctl_len + n + 1);
	memcpy(r->ctl + r->ctl_len, buf, n);
	r->ctl_len += n;
	r->ctl[r->ctl_len] = '\0';
}

/* Keeps one complete control line.  A progress line replaces the one
 * before it, so that reporting progress never fills the channel; a
 * checkpoint line is kept apart, the newest only, so that a checkpoint
 * as large as the channel leaves the channel its room. */
static void
keep_line(struct runner *r, const char *line, size_t len)
{
	r->seen++;
	if (control_is_checkpoint(line, len)) {
		free(r->ckpt);
		r->ckpt = xstrndup(line, len);
		r->ckpt_len = len;
		r->ckpt_seq++;
		r->ckpt_no = r->seen;
		return;
	}
	if (control_is_progress(line, len)) {
		if (r->prog_len > 0) {
			memmove(r->ctl + r->prog_off, r->ctl + r->prog_off + r->prog_len,
			    r->ctl_len - r->prog_off - r->prog_len + 1);
			r->ctl_len -= r->prog_len;
			memmove(r->nos + r->prog_idx, r->nos + r->prog_idx + 1,
			    (r->nnos - r->prog_idx - 1) * sizeof *r->nos);
			r->nnos--;
		}
		r->prog_off = r->ctl_len;
		r->prog_idx = r->nnos;
		r->prog_len = r->ctl_len + len + 1 <= RUNNER_CONTROL_MAX ? len + 1 : 0;
	}
	keep_control(r, line, len);
	keep_control(r, "\n", 1);
	r->nos = xrealloc(r->nos, (r->nnos + 1) * sizeof *r->nos);
	r->nos[r->nnos++] = r->seen;
}

static void control_bytes(struct runner *r, const char *buf, size_t n);

/* The end of the control channel: in exec mode a last line without its
 * newline still counts (control_parse reads it). */
static void
close_control(struct runner *r)
{
	if (r->pooled == NULL && r->line_len > 0 && !r->ctl_overflow)
		keep_line(r, r->line, r->line_len);
	r->line_len = 0;
	close_fd(&r->fd[P_CTL]);
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
			if (which == P_CTL)
				control_bytes(r, buf, (size_t)n);
			else
				capture_add(which == P_OUT ? r->out : r->err, buf, (size_t)n);
			continue;
		}
		if (n < 0 && (errno == EINTR))
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (which == P_CTL) /* EOF or a real error */
			close_control(r);
		else
			close_fd(&r->fd[which]);
		return;
	}
}

/* Sends sig to the handler's process group, unless the handler was
 * reaped: its pid (and group id) may then belong to another process, an
 * alert program or a persistent handler started since. */
static void
signal_group(const struct runner *r, int sig)
{
	if (!r->reaped)
		kill(-r->pid, sig);
}

/* A persistent handler broke the protocol: its process is killed at
 * once (a fresh one takes the next job) and the job fails with why. */
static void
violate(struct runner *r, const char *why, const char *line, size_t len)
{
	if (r->violation != NULL)
		return;
	r->violation = xasprintf("jobq: protocol violation by persistent handler (pid %d): %s%s%.*s%s",
	    (int)r->pid, why, line ? ": '" : "", (int)(len > 80 ? 80 : len), line ? line : "",
	    line ? (len > 80 ? "...'" : "'") : "");
	log_warn("%s; killing it", r->violation);
	signal_group(r, SIGKILL);
	close_fd(&r->fd[P_CTL]);
}

/* Whether line (without its newline) is the status line {"status": N},
 * N in 0..255: sets *status.  A JSON object with other keys is a
 * control line (0); anything else is a violation (-1).  The persistent
 * protocol's parser (tests/fuzz/fuzz_status.c runs it on any bytes). */
int
runner_status_line(const char *line, size_t len, int *status)
{
	size_t at;
	cJSON *o = json_parse_exact(line, len, &at), *st;
	int rc = -1;

	if (o == NULL || !cJSON_IsObject(o))
		goto out;
	rc = 0;
	if ((st = cJSON_GetObjectItemCaseSensitive(o, "status")) == NULL)
		goto out;
	rc = -1;
	if (o->child == st && st->next == NULL && cJSON_IsNumber(st) && st->valuedouble >= 0 &&
	    st->valuedouble <= 255 && st->valuedouble == (double)(int)st->valuedouble) {
		*status = (int)st->valuedouble;
		rc = 1;
	}
out:
	cJSON_Delete(o);
	return rc;
}

/* After the status line: what the handler wrote to stdout and stderr
 * before it is in the pipes now (the helper modules flush both before
 * they reply), so read them to the end. */
static void
drain_output(struct runner *r)
{
	char buf[READ_CHUNK];
	int which;

	for (which = P_OUT; which <= P_ERR; which++)
		while (r->fd[which] >= 0) {
			ssize_t n = read(r->fd[which], buf, sizeof buf);

			if (n > 0)
				capture_add(which == P_OUT ? r->out : r->err, buf, (size_t)n);
			else if (n < 0 && errno == EINTR)
				continue;
			else if (n < 0 && errno == EAGAIN)
				break;
			else
				close_fd(&r->fd[which]);
		}
}

/* One complete line from a persistent handler's descriptor 3. */
static void
control_line(struct runner *r, const char *line, size_t len)
{
	int status, rc;

	if (r->replied) {
		r->broken = 1; /* past its reply: the job stands, the process goes */
		if (len == 0)
			return;
		log_warn("persistent handler (pid %d) wrote past its status line (protocol violation): "
		         "it is replaced",
		    (int)r->pid);
		return;
	}
	if ((rc = runner_status_line(line, len, &status)) < 0) {
		violate(
		    r, "descriptor 3 got a line that is not a JSON object or a valid status line", line, len);
		return;
	}
	if (rc == 0) {
		keep_line(r, line, len);
		return;
	}
	r->replied = 1;
	r->reply_status = status;
	r->ended = mono_ms();
	drain_output(r);
}

/* Splits a handler's descriptor-3 bytes into lines.  In exec mode each
 * line is kept (keep_line); in persistent mode control_line also looks
 * for the status line that ends the job.  A line longer than the channel
 * overflows it (exec mode) or breaks the protocol (persistent mode). */
static void
control_bytes(struct runner *r, const char *buf, size_t n)
{
	while (n > 0 && r->violation == NULL && !r->broken && !(r->ctl_overflow && r->pooled == NULL)) {
		const char *nl = memchr(buf, '\n', n);
		size_t take = nl != NULL ? (size_t)(nl - buf) : n;

		if (r->line_len + take > CONTROL_LINE_MAX && r->pooled == NULL) {
			r->ctl_overflow = 1;
			return;
		}
		if (r->line_len + take > CONTROL_LINE_MAX) {
			violate(r, "a line on descriptor 3 is longer than 256 KiB", NULL, 0);
			return;
		}
		r->line = xrealloc(r->line, r->line_len + take + 1);
		memcpy(r->line + r->line_len, buf, take);
		r->line_len += take;
		if (nl == NULL) {
			r->broken |= r->replied;
			return;
		}
		if (r->pooled != NULL)
			control_line(r, r->line, r->line_len);
		else
			keep_line(r, r->line, r->line_len);
		r->line_len = 0;
		buf += take + 1;
		n -= take + 1;
	}
}

/* Handles the poll results for the pfd entries runner_fds filled. */
void
runner_io(struct runner *r, const struct pollfd *pfd, int n)
{
	int i, k;

	for (i = 0; i < n && !r->replied; i++) {
		if (pfd[i].revents == 0)
			continue;
		for (k = 0; k < NFDS; k++)
			if (r->fd[k] == pfd[i].fd)
				break;
		if (k == NFDS)
			continue;
		if (k == P_IN)
			feed_stdin(r);
		else
			drain(r, k);
	}
}

/* Whether a persistent process that ended by itself (not stopped by us)
 * never read a byte of this job's request: it was already on its way
 * out (a handler that exits after its status line, "max requests"
 * style) when the request went to it.  The bytes written are then all
 * still in the pipe (FIONREAD counts them on the write end too), or
 * none could be written at all. */
static int
never_read(const struct runner *r)
{
	int unread = 0;

	if (r->pooled == NULL || r->replied || r->timed_out || r->interrupted || r->violation != NULL ||
	    r->payload_len == 0)
		return 0;
	if (r->written == 0)
		return 1;
	return r->fd[P_IN] >= 0 && ioctl(r->fd[P_IN], FIONREAD, &unread) == 0 && unread >= 0 &&
	       (size_t)unread == r->written;
}

/* Whether the job never reached the process (never_read): its run did
 * not happen, and a fresh process may take the job. */
int
runner_untaken(const struct runner *r)
{
	return r->untaken;
}

/* Whether the persistent process lent for the job had served a job
 * before (an idle one reused), rather than being started for it. */
int
runner_reused(const struct runner *r)
{
	return r->reused;
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
	guard_forget(r->pid);
	r->reaped = 1;
	r->status = status;
	r->ended = mono_ms();
	r->drain_until = r->ended + DRAIN_MS;
	r->untaken = never_read(r);
	close_fd(&r->fd[P_IN]);
}

/* The next moment (monotonic ms) at which runner_tick has work to do. */
int64_t
runner_deadline(const struct runner *r)
{
	int64_t t = INT64_MAX;

	if (r->replied)
		return INT64_MAX;
	if (r->reaped)
		return r->fd[P_OUT] >= 0 || r->fd[P_ERR] >= 0 || r->fd[P_CTL] >= 0 ? r->drain_until : INT64_MAX;
	if (r->timeout_at < t)
		t = r->timeout_at;
	if (r->kill_at < t)
		t = r->kill_at;
	return t;
}

static void
stop_group(struct runner *r, int64_t now)
{
	signal_group(r, SIGTERM);
	r->kill_at = now + r->grace_ms;
	r->timeout_at = INT64_MAX;
}

/* Applies the timeout, the kill grace and the drain limit. */
void
runner_tick(struct runner *r, int64_t now)
{
	if (r->replied)
		return;
	if (r->reaped) {
		if (now >= r->drain_until) {
			close_fd(&r->fd[P_OUT]);
			close_fd(&r->fd[P_ERR]);
			close_control(r);
		}
		return;
	}
	if (now >= r->timeout_at) {
		r->timed_out = 1;
		stop_group(r, now);
	}
	if (now >= r->kill_at) {
		signal_group(r, SIGKILL);
		r->kill_at = INT64_MAX;
	}
}

/* Asks the handler to stop now (SIGTERM to its group, SIGKILL after the
 * grace): the worker is shutting down and gives the job back. */
void
runner_terminate(struct runner *r)
{
	if (r->reaped || r->replied)
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
	if (r->reaped || r->replied)
		return;
	runner_terminate(r);
	if (kill_by < r->kill_at)
		r->kill_at = kill_by;
}

int
runner_finished(const struct runner *r)
{
	return r->replied || (r->reaped && r->fd[P_OUT] < 0 && r->fd[P_ERR] < 0 && r->fd[P_CTL] < 0);
}

/* What the handler wrote on its control channel so far (NUL-terminated,
 * NULL when nothing): the lines kept, then the newest checkpoint line;
 * and whether it wrote more than RUNNER_CONTROL_MAX besides checkpoints. */
const char *
runner_control(struct runner *r, size_t *len, int *overflow, const size_t **lines)
{
	*overflow = r->ctl_overflow;
	if (lines != NULL) {
		r->all_nos = xrealloc(r->all_nos, (r->nnos + 1) * sizeof *r->all_nos);
		if (r->nnos > 0)
			memcpy(r->all_nos, r->nos, r->nnos * sizeof *r->nos);
		r->all_nos[r->nnos] = r->ckpt_no;
		*lines = r->all_nos;
	}
	if (r->ckpt == NULL) {
		*len = r->ctl_len;
		return r->ctl;
	}
	*len = r->ctl_len + r->ckpt_len + 1;
	r->all = xrealloc(r->all, *len + 1);
	if (r->ctl_len > 0)
		memcpy(r->all, r->ctl, r->ctl_len);
	memcpy(r->all + r->ctl_len, r->ckpt, r->ckpt_len);
	r->all[*len - 1] = '\n';
	r->all[*len] = '\0';
	return r->all;
}

/* The newest checkpoint line the handler wrote so far (NULL: none) and
 * how many it wrote: the heartbeat stores a new one (control_checkpoint)
 * when the count moved. */
const char *
runner_checkpoint(const struct runner *r, size_t *len, unsigned *seq)
{
	*len = r->ckpt_len;
	*seq = r->ckpt_seq;
	return r->ckpt;
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
	} else if (r->replied) {
		x->exited = 1;
		x->code = r->reply_status;
	} else if (r->violation != NULL)
		snprintf(x->failure, sizeof x->failure, "protocol violation");
	else if (WIFEXITED(r->status)) {
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
	if (r->violation != NULL) {
		char *msg = xasprintf(
		    "%s%s%s", *err, **err && (*err)[strlen(*err) - 1] != '\n' ? "\n" : "", r->violation);

		free(*err);
		*err = msg;
	}
	*duration_ms = r->ended - r->started;
}
