/* serve_conn.c -- the connections of one listener of `jobq serve`, kept
 * so that slow or many clients cannot take the dashboard offline.
 *
 * libmicrohttpd's own defences are a global connection limit and an
 * inactivity timeout that any byte resets: 128 clients sending one
 * header line every 5 s held every slot for as long as they liked.  What
 * we chose instead, in three layers:
 *
 *  - a limit per client address (SERVE_CONN_PER_ADDR), counted here
 *    rather than with MHD_OPTION_PER_IP_CONNECTION_LIMIT because the
 *    peers in trusted_proxies must be exempt: every visitor behind nginx
 *    arrives from its address, and nginx reads request heads itself;
 *  - a deadline for the whole request (head and body, SERVE_CONN_DEADLINE
 *    from its first byte, or from the end of the previous response on a
 *    kept-alive connection), enforced by a reaper thread that shuts down
 *    the socket of every connection past it, however it trickles;
 *  - a global limit far above what one host needs (serve_conn_limit),
 *    with the file limit raised to match and epoll in the daemon (select
 *    cannot watch an fd above 1023).
 *
 * The record of a connection is made in libmicrohttpd's STARTED
 * notification and dropped in its CLOSED one, both under the one mutex
 * the reaper holds while it calls shutdown(): the fd is still open until
 * CLOSED returns, so the reaper can never shut down a reused fd. */
#include "config.h"

#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>

#include "log.h"
#include "serve_conn.h"
#include "util.h"
#include "serve_proxy.h"

/* 64: ten times what a browser opens to one host (6), room for a few
 * people behind one NAT and a test's bursts of concurrent logins, and
 * still a small share of the global limit. */
#define SERVE_CONN_PER_ADDR 64
/* 10 s for a whole request: a dashboard's requests are small; a client
 * that needs longer is sending slowly on purpose. */
#define SERVE_CONN_DEADLINE_MS 10000
#define SERVE_CONN_TICK_MS 250
#define ADDR_BUCKETS 256

/* One open connection. */
struct conn {
	struct conn *prev, *next;
	struct serve_conns *owner;
	int fd;
	int64_t since_ms; /* the current request's first moment */
	int received;     /* the current request is all in: no deadline */
	int cut;          /* shut down by the reaper */
	struct addr_count *addr;
};

/* How many connections one address holds. */
struct addr_count {
	struct addr_count *next;
	unsigned char key[17]; /* family, then the address */
	unsigned n;
};

struct serve_conns {
	const struct serve_conf *conf;
	const char *name; /* of the listener, for the log */
	pthread_mutex_t mu;
	pthread_cond_t wake;
	pthread_t reaper;
	int running, stopping;
	struct conn *head;
	struct addr_count *buckets[ADDR_BUCKETS];
};

/* The key of a peer address: its family and bytes (an IPv4-mapped IPv6
 * address counts as the IPv4 one); 0 when it is neither family. */
static int
addr_key(const struct sockaddr *sa, unsigned char key[17])
{
	static const unsigned char mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	memset(key, 0, 17);
	if (sa->sa_family == AF_INET) {
		key[0] = 4;
		memcpy(key + 1, &((const struct sockaddr_in *)sa)->sin_addr, 4);
	} else if (sa->sa_family == AF_INET6) {
		const unsigned char *b = ((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr;

		key[0] = memcmp(b, mapped, 12) == 0 ? 4 : 6;
		memcpy(key + 1, key[0] == 4 ? b + 12 : b, key[0] == 4 ? 4 : 16);
	} else
		return 0;
	return 1;
}

/* The count of key, made when absent (caller holds mu). */
static struct addr_count *
addr_get(struct serve_conns *cs, const unsigned char key[17])
{
	unsigned h = 0, i;
	struct addr_count *a;

	for (i = 0; i < 17; i++)
		h = h * 31 + key[i];
	h %= ADDR_BUCKETS;
	for (a = cs->buckets[h]; a != NULL; a = a->next)
		if (memcmp(a->key, key, 17) == 0)
			return a;
	a = xcalloc(1, sizeof *a);
	memcpy(a->key, key, 17);
	a->next = cs->buckets[h];
	cs->buckets[h] = a;
	return a;
}

/* Drops a count that fell to zero (caller holds mu). */
static void
addr_put(struct serve_conns *cs, struct addr_count *a)
{
	struct addr_count **p;

	if (--a->n > 0)
		return;
	for (p = &cs->buckets[0]; p < &cs->buckets[ADDR_BUCKETS]; p++) {
		struct addr_count **q;

		for (q = p; *q != NULL; q = &(*q)->next)
			if (*q == a) {
				*q = a->next;
				free(a);
				return;
			}
	}
}

/* Counts the new connection against its address; 0 when that address
 * is over its limit (and not a trusted proxy).  Caller holds mu. */
static int
admit(struct serve_conns *cs, struct conn *c, const struct sockaddr *sa)
{
	unsigned char key[17];

	if (sa == NULL || !addr_key(sa, key))
		return 1;
	c->addr = addr_get(cs, key);
	c->addr->n++;
	return c->addr->n <= SERVE_CONN_PER_ADDR || serve_proxy_trusted_peer(cs->conf, sa);
}

/* STARTED: records the connection, refused at once (its socket shut
 * down, so libmicrohttpd closes it) when its address holds too many. */
static void
conn_started(struct serve_conns *cs, struct MHD_Connection *mc, void **socket_context)
{
	const union MHD_ConnectionInfo *fd = MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CONNECTION_FD);
	const union MHD_ConnectionInfo *ad = MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	struct conn *c = xcalloc(1, sizeof *c);

	c->owner = cs;
	c->fd = fd != NULL ? fd->connect_fd : -1;
	c->since_ms = mono_ms();
	pthread_mutex_lock(&cs->mu);
	c->next = cs->head;
	if (cs->head != NULL)
		cs->head->prev = c;
	cs->head = c;
	if (!admit(cs, c, ad != NULL ? ad->client_addr : NULL) && c->fd >= 0) {
		c->cut = 1;
		shutdown(c->fd, SHUT_RDWR);
		log_debug("serve: %s: too many connections from one address; refused", cs->name);
	}
	pthread_mutex_unlock(&cs->mu);
	*socket_context = c;
}

/* CLOSED: forgets the connection; its fd is closed right after. */
static void
conn_closed(struct serve_conns *cs, void **socket_context)
{
	struct conn *c = *socket_context;

	if (c == NULL)
		return;
	pthread_mutex_lock(&cs->mu);
	if (c->prev != NULL)
		c->prev->next = c->next;
	else
		cs->head = c->next;
	if (c->next != NULL)
		c->next->prev = c->prev;
	if (c->addr != NULL)
		addr_put(cs, c->addr);
	pthread_mutex_unlock(&cs->mu);
	free(c);
	*socket_context = NULL;
}

/* libmicrohttpd's MHD_OPTION_NOTIFY_CONNECTION callback; cls is the
 * listener's serve_conns. */
void
serve_conn_notify(
    void *cls, struct MHD_Connection *mc, void **socket_context, enum MHD_ConnectionNotificationCode code)
{
	if (code == MHD_CONNECTION_NOTIFY_STARTED)
		conn_started(cls, mc, socket_context);
	else if (code == MHD_CONNECTION_NOTIFY_CLOSED)
		conn_closed(cls, socket_context);
}

/* Marks the connection's request: received (1: all of it is in, the
 * deadline stops) or the start of the next one (0: the clock restarts,
 * so an idle kept-alive connection is reaped like a slow one). */
void
serve_conn_mark(struct MHD_Connection *mc, int received)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(mc, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct conn *c = ci != NULL ? ci->socket_context : NULL;

	if (c == NULL)
		return;
	pthread_mutex_lock(&c->owner->mu);
	c->received = received;
	if (!received)
		c->since_ms = mono_ms();
	pthread_mutex_unlock(&c->owner->mu);
}

/* Shuts down every connection whose request is past the deadline
 * (caller holds mu).  shutdown(), not close(): the fd stays
 * libmicrohttpd's, which sees the end of the stream and closes it. */
static void
reap(struct serve_conns *cs)
{
	int64_t now = mono_ms();
	struct conn *c;

	for (c = cs->head; c != NULL; c = c->next)
		if (!c->received && !c->cut && c->fd >= 0 && now - c->since_ms > SERVE_CONN_DEADLINE_MS) {
			c->cut = 1;
			shutdown(c->fd, SHUT_RDWR);
			log_debug("serve: %s: a request took over %d s to arrive; closed", cs->name,
			    SERVE_CONN_DEADLINE_MS / 1000);
		}
}

static void *
reaper_main(void *arg)
{
	struct serve_conns *cs = arg;
	struct timespec ts;

	pthread_mutex_lock(&cs->mu);
	while (!cs->stopping) {
		reap(cs);
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += SERVE_CONN_TICK_MS * 1000000L;
		if (ts.tv_nsec >= 1000000000L)
			ts.tv_sec++, ts.tv_nsec -= 1000000000L;
		pthread_cond_timedwait(&cs->wake, &cs->mu, &ts);
	}
	pthread_mutex_unlock(&cs->mu);
	return NULL;
}

/* A listener's connection table with its reaper running; NULL when the
 * thread cannot start.  name is kept (it must outlive the table). */
struct serve_conns *
serve_conn_new(const struct serve_conf *conf, const char *name)
{
	struct serve_conns *cs = xcalloc(1, sizeof *cs);

	cs->conf = conf;
	cs->name = name;
	pthread_mutex_init(&cs->mu, NULL);
	pthread_cond_init(&cs->wake, NULL);
	if (pthread_create(&cs->reaper, NULL, reaper_main, cs) != 0) {
		serve_conn_free(cs);
		return NULL;
	}
	cs->running = 1;
	return cs;
}

/* Stops the reaper and frees the table; call after the daemon stopped
 * (every connection is closed by then). */
void
serve_conn_free(struct serve_conns *cs)
{
	size_t i;

	if (cs == NULL)
		return;
	if (cs->running) {
		pthread_mutex_lock(&cs->mu);
		cs->stopping = 1;
		pthread_cond_signal(&cs->wake);
		pthread_mutex_unlock(&cs->mu);
		pthread_join(cs->reaper, NULL);
	}
	for (i = 0; i < ADDR_BUCKETS; i++)
		while (cs->buckets[i] != NULL) {
			struct addr_count *a = cs->buckets[i];

			cs->buckets[i] = a->next;
			free(a);
		}
	pthread_mutex_destroy(&cs->mu);
	pthread_cond_destroy(&cs->wake);
	free(cs);
}

/* The global connection limit of a listener: want, or less when the
 * file limit (raised to its hard maximum first) cannot hold it beside
 * the database connections and the other listener (share: 1/share of
 * what is left). */
unsigned
serve_conn_limit(unsigned want, unsigned share)
{
	struct rlimit rl;
	rlim_t room;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 128;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			getrlimit(RLIMIT_NOFILE, &rl);
	}
	room = rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > 1 << 20 ? 1 << 20 : rl.rlim_cur;
	room = room > 256 ? (room - 256) / share : 64;
	return room < want ? (unsigned)room : want;
}
