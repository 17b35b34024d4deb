/* batch_writers.c -- the threads that write the chunks of `jobq enqueue
 * --batch`: one or two, each with its own connection, so that the server
 * writes two chunks at once on two cores (the insert is nearly all of a
 * batch's time, and one connection's statements run on one core) while
 * the caller reads and checks the next chunk.
 *
 * The chunks still commit one after another in input order, so the
 * batch's progress row always names an unbroken run of committed lines:
 * queue_batch_add inserts a chunk's rows, then waits here (turn) until the
 * chunk before it has committed before it moves the progress row and
 * commits; if that chunk failed, this one rolls back.  A writer that
 * waits holds only the rows it inserted, which no other chunk touches
 * (a batch line has no unique key: one that had could make an earlier
 * chunk wait in the server for this one's row), and the table's metadata
 * lock, which a FLUSH TABLES (db_error.c mends triggers with one) or a
 * server's idle-transaction limit may want back: so it waits at most
 * TURN_MS that way, then rolls back and waits holding nothing (see
 * queue_batch_add), and no wait here can close a cycle.  Chunk s
 * goes to writer (s - 1) % n, and the caller takes the chunks back in
 * the order it handed them out. */
#include "config.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "batch_writers.h"

/* How long a writer waits for its turn holding its chunk's rows: a
 * chunk takes about 30 ms here, so this is a predecessor in trouble; and
 * under the 10 s that db_mend_triggers' FLUSH waits for the table. */
#define TURN_MS 5000

enum piece_state { IDLE, QUEUED, SETTLED };

struct writer {
	pthread_t thread;
	struct batch_writers *w;
	struct db *db;
	struct batch_piece *piece; /* QUEUED or SETTLED: the chunk it writes or wrote */
	uint64_t seq;              /* the chunk's number in this run, from 1 */
	enum piece_state state;
};

struct batch_writers {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	const char *key;
	uint64_t gid;
	size_t n;
	struct writer writer[BATCH_WRITERS_MAX];
	uint64_t submitted; /* chunks handed out */
	uint64_t collected; /* chunks taken back (batch_writers_settled) */
	uint64_t committed; /* every chunk up to this one has committed */
	uint64_t failed;    /* the first chunk that failed, 0 if none */
	int stopping;
};

/* The batch_turn of chunk seq (queue_batch_add): waits until the chunk
 * before it has committed (DB_OK) or cannot any more (DB_EFAIL: a chunk
 * before it failed); with bounded set, for at most TURN_MS (then
 * DB_EWAIT). */
static int
turn(void *arg, int bounded, char *err)
{
	struct writer *me = arg;
	struct batch_writers *w = me->w;
	struct timespec until;
	int ok, late = 0;

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += TURN_MS / 1000;
	until.tv_nsec += (long)(TURN_MS % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&w->mu);
	while (w->committed + 1 < me->seq && !(w->failed != 0 && w->failed < me->seq) && !late)
		late = bounded ? pthread_cond_timedwait(&w->cv, &w->mu, &until) != 0 : pthread_cond_wait(&w->cv, &w->mu);
	ok = w->committed + 1 >= me->seq;
	late = !ok && !(w->failed != 0 && w->failed < me->seq);
	pthread_mutex_unlock(&w->mu);
	if (ok)
		return DB_OK;
	if (late)
		return DB_EWAIT;
	errf(err, "not written: the chunk before it failed");
	return DB_EFAIL;
}

/* A writer's thread: writes each chunk it is given and says how it went. */
static void *
writer_main(void *arg)
{
	struct writer *me = arg;
	struct batch_writers *w = me->w;

	db_thread_begin();
	for (;;) {
		struct batch_piece *piece;
		int rc;

		pthread_mutex_lock(&w->mu);
		while (me->state != QUEUED && !w->stopping)
			pthread_cond_wait(&w->cv, &w->mu);
		piece = me->state == QUEUED ? me->piece : NULL;
		pthread_mutex_unlock(&w->mu);
		if (piece == NULL)
			break;
		piece->session = db_session_id(me->db);
		rc = queue_batch_add(
		    me->db, w->key, &piece->p, piece->to_line, piece->items, piece->n, w->gid, turn, me, piece->err);
		pthread_mutex_lock(&w->mu);
		piece->rc = rc;
		if (rc == DB_OK)
			w->committed = me->seq; /* its turn came: the one before had committed */
		else if (w->failed == 0 || me->seq < w->failed)
			w->failed = me->seq;
		me->state = SETTLED;
		pthread_cond_broadcast(&w->cv);
		pthread_mutex_unlock(&w->mu);
	}
	db_thread_end();
	return NULL;
}

/* Starts up to n writers (1 to BATCH_WRITERS_MAX), writer i on
 * connection db[i], for batch key whose jobs join group gid (or 0): fewer
 * when a thread cannot be made (batch_writers_count says how many).  The
 * threads take no asynchronous signal: the caller's thread handles them. */
struct batch_writers *
batch_writers_start(struct db **db, size_t n, const char *key, uint64_t gid)
{
	static const int faults[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT };
	struct batch_writers *w = xcalloc(1, sizeof *w);
	pthread_condattr_t ca;
	sigset_t all, old;
	size_t i;

	if (n < 1 || n > BATCH_WRITERS_MAX)
		fatal("batch_writers_start: %zu writers", n);
	pthread_mutex_init(&w->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* turn's bound */
	pthread_cond_init(&w->cv, &ca);
	pthread_condattr_destroy(&ca);
	w->key = key;
	w->gid = gid;
	sigfillset(&all);
	for (i = 0; i < ARRAY_LEN(faults); i++)
		sigdelset(&all, faults[i]);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	for (i = 0; i < n; i++) {
		w->writer[i].w = w;
		w->writer[i].db = db[i];
		if (pthread_create(&w->writer[i].thread, NULL, writer_main, &w->writer[i]) != 0)
			break;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if ((w->n = i) == 0)
		fatal("batch_writers_start: cannot start a thread");
	return w;
}

/* Hands piece, the next chunk in input order, to its writer, which must
 * be free: at most batch_writers_count chunks are out at a time (take
 * the oldest back first).  The piece must stay put until it is taken
 * back. */
void
batch_writers_submit(struct batch_writers *w, struct batch_piece *piece)
{
	struct writer *me = &w->writer[w->submitted % w->n];

	pthread_mutex_lock(&w->mu);
	if (me->state != IDLE)
		fatal("batch_writers_submit: writer %zu is busy", (size_t)(w->submitted % w->n));
	me->piece = piece;
	me->seq = ++w->submitted;
	me->state = QUEUED;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
}

/* Waits for the oldest chunk out to settle and returns it (its rc and
 * err say how it went); NULL when none is out. */
struct batch_piece *
batch_writers_settled(struct batch_writers *w)
{
	struct writer *me;
	struct batch_piece *piece;

	if (w->collected == w->submitted)
		return NULL;
	me = &w->writer[w->collected % w->n];
	pthread_mutex_lock(&w->mu);
	while (me->state != SETTLED)
		pthread_cond_wait(&w->cv, &w->mu);
	piece = me->piece;
	me->piece = NULL;
	me->state = IDLE;
	w->collected++;
	pthread_mutex_unlock(&w->mu);
	return piece;
}

/* How many writers there are: chunks out at once at most. */
size_t
batch_writers_count(const struct batch_writers *w)
{
	return w->n;
}

/* Takes back every chunk still out, ends the threads and frees w (not
 * the connections). */
void
batch_writers_stop(struct batch_writers *w)
{
	size_t i;

	if (w == NULL)
		return;
	while (batch_writers_settled(w) != NULL)
		;
	pthread_mutex_lock(&w->mu);
	w->stopping = 1;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	for (i = 0; i < w->n; i++)
		pthread_join(w->writer[i].thread, NULL);
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->cv);
	free(w);
}
