/* serve_proxy.c -- who is asking: the address the login rate limit, the
 * sessions table and the audit log record.
 *
 * Behind a reverse proxy every request comes from the proxy, so one
 * visitor's failed logins would lock out everyone and the audit log
 * would name only the proxy.  A proxy says who it forwarded for in
 * X-Forwarded-For, but anybody can send that header, so it is believed
 * only from the peers listed in [serve] trusted_proxies, and only as far
 * as it was written by them: each trusted proxy appends the address it
 * got the request from, so the list is read from the right, skipping
 * trusted proxies, and the first hop that is not one is the client.
 * Without trusted_proxies the header is ignored. */
#include "config.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "serve_http.h"
#include "serve_proxy.h"

/* An address parsed from text; an IPv4-mapped IPv6 address (what a
 * dual-stack socket reports for an IPv4 peer) counts as the IPv4 one. */
struct ip {
	int family;
	unsigned char b[16];
};

static int
ip_parse(const char *s, struct ip *ip)
{
	static const unsigned char mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	memset(ip, 0, sizeof *ip);
	if (inet_pton(AF_INET, s, ip->b) == 1) {
		ip->family = AF_INET;
		return 0;
	}
	if (inet_pton(AF_INET6, s, ip->b) != 1)
		return -1;
	ip->family = AF_INET6;
	if (memcmp(ip->b, mapped, sizeof mapped) == 0) {
		memmove(ip->b, ip->b + 12, 4);
		memset(ip->b + 4, 0, 12);
		ip->family = AF_INET;
	}
	return 0;
}

static int
in_net(const struct ip *ip, const struct serve_net *n)
{
	unsigned full = n->bits / 8, rest = n->bits % 8;

	if (ip->family != n->family || memcmp(ip->b, n->addr, full) != 0)
		return 0;
	return rest == 0 || ((ip->b[full] ^ n->addr[full]) & (0xff << (8 - rest))) == 0;
}

static int
trusted(const struct serve_conf *sc, const struct ip *ip)
{
	size_t i;

	for (i = 0; i < sc->ntrusted_proxies; i++)
		if (in_net(ip, &sc->trusted_proxies[i]))
			return 1;
	return 0;
}

/* Collects every X-Forwarded-For header, joined by commas (a proxy may
 * add a header of its own rather than extend the last). */
static MHD_RESULT
collect_xff(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	struct buf *b = cls;

	(void)kind;
	if (strcasecmp(key, "X-Forwarded-For") == 0 && value != NULL) {
		if (b->len > 0)
			buf_addc(b, ',');
		buf_adds(b, value);
	}
	return MHD_YES;
}

/* One hop of the list, trimmed, without the brackets some proxies put
 * around an IPv6 address; 0 when it is an address. */
static int
hop_parse(const char *start, size_t len, struct ip *ip)
{
	char hop[INET6_ADDRSTRLEN + 3];

	while (len > 0 && (*start == ' ' || *start == '\t'))
		start++, len--;
	while (len > 0 && (start[len - 1] == ' ' || start[len - 1] == '\t'))
		len--;
	if (len >= 2 && start[0] == '[' && start[len - 1] == ']')
		start++, len -= 2;
	if (len == 0 || len >= sizeof hop)
		return -1;
	memcpy(hop, start, len);
	hop[len] = '\0';
	return ip_parse(hop, ip);
}

/* Walks X-Forwarded-For from the right while the hops are trusted
 * proxies; *ip becomes the first hop that is not one (or the leftmost
 * when all are).  A hop that is no address ends the walk where it is:
 * whatever stands left of it was not written by a proxy we trust. */
static void
walk_xff(const struct serve_conf *sc, const char *list, struct ip *ip)
{
	const char *end = list + strlen(list), *p;
	struct ip hop;

	while (end > list && trusted(sc, ip)) {
		for (p = end; p > list && p[-1] != ','; p--)
			;
		if (hop_parse(p, (size_t)(end - p), &hop) < 0)
			return;
		*ip = hop;
		end = p > list ? p - 1 : list;
	}
}

/* Whether the peer sa is one of trusted_proxies (its X-Forwarded-* are
 * believed, and it is exempt from the per-address connection limit:
 * it carries every visitor behind it). */
int
serve_proxy_trusted_peer(const struct serve_conf *sc, const struct sockaddr *sa)
{
	char text[INET6_ADDRSTRLEN];
	struct ip ip;

	if (sc->ntrusted_proxies == 0 ||
	    getnameinfo(sa,
	        sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in), text,
	        sizeof text, NULL, 0, NI_NUMERICHOST) != 0)
		return 0;
	return ip_parse(text, &ip) == 0 && trusted(sc, &ip);
}

/* Whether the browser reached us over HTTPS: jobq's own TLS, a public_url
 * that is https://, or, with no public_url, a trusted proxy's
 * X-Forwarded-Proto: https (nginx sets it from $scheme; from anyone else
 * the header is ignored).  An http:// public_url says the address people
 * type is plain HTTP, whatever a proxy's header says. */
static int
came_over_https(struct req *r, int via_trusted)
{
	const struct serve_conf *sc = &r->srv->conf->serve;
	const char *proto;

	if (r->srv->tls || sc->public_https)
		return 1;
	if (!via_trusted || sc->public_url != NULL)
		return 0;
	proto = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "X-Forwarded-Proto");
	return proto != NULL && strcasecmp(proto, "https") == 0;
}

/* Sets r->limit_addr from r->addr: the same, but for an IPv6 address
 * its /64 network ("2001:db8:1:2::/64"), the least a host is handed and
 * all of it free to use: counted one by one, its addresses would give
 * one host a fresh guess at every login from each.  (People who share
 * one /64, a LAN, share its count too.)  An address of the well-known
 * NAT64 prefix, 64:ff9b::/96, is an IPv4 client's: it counts as that. */
static void
limit_address(struct req *r)
{
	static const unsigned char nat64[12] = { 0, 0x64, 0xff, 0x9b };
	struct ip ip;
	size_t n;

	snprintf(r->limit_addr, sizeof r->limit_addr, "%s", r->addr);
	if (ip_parse(r->addr, &ip) < 0 || ip.family != AF_INET6)
		return;
	if (memcmp(ip.b, nat64, sizeof nat64) == 0) {
		inet_ntop(AF_INET, ip.b + 12, r->limit_addr, sizeof r->limit_addr);
		return;
	}
	memset(ip.b + 8, 0, 8);
	if (inet_ntop(AF_INET6, ip.b, r->limit_addr, sizeof r->limit_addr - 4) == NULL)
		return;
	n = strlen(r->limit_addr);
	snprintf(r->limit_addr + n, sizeof r->limit_addr - n, "/64");
}

/* Sets r->addr: the peer's numeric address or, when the peer is a
 * trusted proxy, the client X-Forwarded-For names (see above); and
 * r->https. */
static void
client_address(struct req *r)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(r->conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct serve_conf *sc = &r->srv->conf->serve;
	struct ip ip;
	struct buf xff;

	snprintf(r->addr, sizeof r->addr, "?");
	r->https = came_over_https(r, 0);
	if (ci == NULL || ci->client_addr == NULL ||
	    getnameinfo(ci->client_addr,
	        ci->client_addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
	                                               : sizeof(struct sockaddr_in),
	        r->addr, sizeof r->addr, NULL, 0, NI_NUMERICHOST) != 0)
		return;
	if (sc->ntrusted_proxies == 0 || ip_parse(r->addr, &ip) < 0 || !trusted(sc, &ip))
		return;
	r->https = came_over_https(r, 1);
	buf_init(&xff);
	MHD_get_connection_values(r->conn, MHD_HEADER_KIND, collect_xff, &xff);
	if (xff.len > 0) {
		walk_xff(sc, xff.data, &ip);
		/* Written back in the one canonical form, so spellings of one
		 * address ("::ffff:10.0.0.1", "10.0.0.1") share their limit. */
		inet_ntop(ip.family, ip.b, r->addr, sizeof r->addr);
	}
	buf_free(&xff);
}

/* Sets r->addr: the peer's numeric address or, when the peer is a
 * trusted proxy, the client X-Forwarded-For names (see above); and
 * r->https; and r->limit_addr. */
void
serve_client_address(struct req *r)
{
	client_address(r);
	limit_address(r);
}
