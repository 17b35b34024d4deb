/* serve_hasher.c -- the one thread of `jobq serve` that verifies
 * password hashes, below the login handler (serve_login.c).
 *
 * An argon2id verification takes 64 MiB and tens of milliseconds of CPU.
 * Run on a request thread, a burst of logins held every thread of the
 * pool and every page waited behind it.  So no request thread ever
 * hashes: a login suspends its connection (libmicrohttpd stops polling
 * it, the thread goes on to other requests), hands the check to this
 * thread through SERVE_HASHER_SLOTS slots, and is resumed when the answer
 * is there.  When every slot is taken the login is refused at once (503)
 * instead of queueing: a flood costs the pages nothing but the refusals.
 * One address holds at most one slot at a time.
 *
 * Each slot belongs to one connection from submit to take.  A client that
 * went away while suspended is never taken; its slot is reclaimed once it
 * has been done for SLOT_STALE_S seconds. */
#include "config.h"

#include <pthread.h>
#include <sodium.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "serve_hasher.h"

#define SLOT_STALE_S 30

enum slot_state { SLOT_FREE, SLOT_QUEUED, SLOT_DONE };

struct slot {
	enum slot_state state;
	struct MHD_Connection *conn;
	uint64_t seq;   /* submission order: first come, first hashed */
	time_t done_at; /* when state became SLOT_DONE */
	struct login_check check;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t queued = PTHREAD_COND_INITIALIZER;
static pthread_cond_t drained = PTHREAD_COND_INITIALIZER;
static struct slot slots[SERVE_HASHER_SLOTS];
static uint64_t next_seq;
static int stopping; /* serve_hasher_stop was called: no new checks */

/* Frees slots whose connection never came back for its answer.  Called
 * with the lock held. */
static void
reclaim_stale(void)
{
	time_t now = time(NULL);
	size_t i;

	for (i = 0; i < SERVE_HASHER_SLOTS; i++)
		if (slots[i].state == SLOT_DONE && now - slots[i].done_at > SLOT_STALE_S) {
			sodium_memzero(&slots[i].check, sizeof slots[i].check);
			slots[i].state = SLOT_FREE;
		}
}

/* A free slot for a check from addr, or NULL: none is free, or addr
 * already holds one (so that one address flooding logins leaves the other
 * slots to everyone else).  Called with the lock held. */
static struct slot *
free_slot(const char *addr)
{
	struct slot *free = NULL;
	size_t i;

	reclaim_stale();
	for (i = 0; i < SERVE_HASHER_SLOTS; i++)
		if (slots[i].state == SLOT_FREE)
			free = free != NULL ? free : &slots[i];
		else if (strcmp(slots[i].check.addr, addr) == 0)
			return NULL;
	return free;
}

/* The oldest queued slot, or NULL.  Called with the lock held. */
static struct slot *
oldest_queued(void)
{
	struct slot *best = NULL;
	size_t i;

	for (i = 0; i < SERVE_HASHER_SLOTS; i++)
		if (slots[i].state == SLOT_QUEUED && (best == NULL || slots[i].seq < best->seq))
			best = &slots[i];
	return best;
}

/* The thread: verifies one queued check at a time (so at most one 64 MiB
 * verification runs), outside the lock, then resumes its connection. */
static void *
hasher_main(void *arg)
{
	struct slot *s;
	struct login_check c;

	(void)arg;
	for (;;) {
		pthread_mutex_lock(&lock);
		while ((s = oldest_queued()) == NULL)
			pthread_cond_wait(&queued, &lock);
		c = s->check; /* the slot is ours until marked done */
		pthread_mutex_unlock(&lock);
		c.good = crypto_pwhash_str_verify(c.hash, c.password, strlen(c.password)) == 0;
		sodium_memzero(c.password, sizeof c.password);
		pthread_mutex_lock(&lock);
		s->check = c;
		s->state = SLOT_DONE;
		s->done_at = time(NULL);
		MHD_resume_connection(s->conn);
		if (oldest_queued() == NULL)
			pthread_cond_broadcast(&drained);
		pthread_mutex_unlock(&lock);
		sodium_memzero(&c, sizeof c);
	}
	return NULL;
}

/* Starts the thread (once; detached: it lives as long as the process).
 * 0, or -1 when no thread can be made. */
int
serve_hasher_start(void)
{
	pthread_t t;

	if (pthread_create(&t, NULL, hasher_main, NULL) != 0)
		return -1;
	pthread_detach(t);
	return 0;
}

/* Whether a submit from addr would find a slot now: lets a login skip
 * its database work when it would be refused anyway.  Only a hint
 * (another thread may take the slot first): submit decides. */
int
serve_hasher_has_room(const char *addr)
{
	int room;

	pthread_mutex_lock(&lock);
	room = free_slot(addr) != NULL;
	pthread_mutex_unlock(&lock);
	return room;
}

/* Suspends conn and queues its check.  The caller returns MHD_YES from
 * the access handler; libmicrohttpd calls it again once the check is
 * done, and it then takes the answer.  -1 when every slot is taken
 * (nothing suspended). */
int
serve_hasher_submit(struct MHD_Connection *conn, const struct login_check *in)
{
	struct slot *s;

	pthread_mutex_lock(&lock);
	if (stopping || (s = free_slot(in->addr)) == NULL) {
		pthread_mutex_unlock(&lock);
		return -1;
	}
	s->state = SLOT_QUEUED;
	s->conn = conn;
	s->seq = next_seq++;
	s->check = *in;
	/* Suspended before the thread can see it, so that its resume
	 * never comes before the suspend. */
	MHD_suspend_connection(conn);
	pthread_cond_signal(&queued);
	pthread_mutex_unlock(&lock);
	return 0;
}

/* conn's finished check: 1 with *out filled and the slot freed, 0 when
 * conn has no finished check (a new login).  The body's digest must match
 * too: a connection that went away may be reused (same address) by
 * another client within SLOT_STALE_S, and an answer is only valid for the
 * very credentials it checked. */
int
serve_hasher_take(struct MHD_Connection *conn, const unsigned char *body_sha, struct login_check *out)
{
	size_t i;
	int found = 0;

	pthread_mutex_lock(&lock);
	for (i = 0; i < SERVE_HASHER_SLOTS && !found; i++)
		if (slots[i].state == SLOT_DONE && slots[i].conn == conn &&
		    sodium_memcmp(slots[i].check.body_sha, body_sha, sizeof slots[i].check.body_sha) == 0) {
			*out = slots[i].check;
			sodium_memzero(&slots[i].check, sizeof slots[i].check);
			slots[i].state = SLOT_FREE;
			found = 1;
		}
	pthread_mutex_unlock(&lock);
	return found;
}

/* Takes no more checks and waits until every queued one is verified and
 * its connection resumed: libmicrohttpd refuses to stop a daemon that
 * still has a suspended connection.  At most SERVE_HASHER_SLOTS
 * verifications long. */
void
serve_hasher_stop(void)
{
	pthread_mutex_lock(&lock);
	stopping = 1;
	while (oldest_queued() != NULL)
		pthread_cond_wait(&drained, &lock);
	pthread_mutex_unlock(&lock);
}
