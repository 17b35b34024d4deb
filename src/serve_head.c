/* serve_head.c -- the checks on a request's head that come before any
 * route, session or body: what libmicrohttpd lets through but a careful
 * server must refuse.  Part of the HTTP layer; it answers nothing itself
 * (the router sends what it returns), so it calls no other serve file.
 *
 *  - An encoded NUL (%00) in the URL: libmicrohttpd decodes it and the
 *    C string ends there, so "/metrics%00.css" was served as /metrics.
 *  - A Host that is not in allowed_hosts: a DNS-rebinding page (a name
 *    of the attacker's that resolves to our address) reaches us with its
 *    own name as Host; refusing unknown names ends that.
 *  - Content-Length twice with different values, or with
 *    Transfer-Encoding: a proxy in front may frame the body one way and
 *    we another, so a second request could hide in the first
 *    (request smuggling). */
#include "config.h"

#include <string.h>
#include <strings.h>

#include "serve_head.h"

/* The raw URL (as libmicrohttpd's URI log callback sees it, before any
 * decoding) holds an encoded NUL. */
int
serve_head_url_has_nul(const char *raw)
{
	const char *p;

	for (p = raw; (p = strchr(p, '%')) != NULL; p++)
		if (p[1] == '0' && p[2] == '0')
			return 1;
	return 0;
}

/* Whether host (a Host header: name, [v6] or v4, maybe a :port) is in
 * the list (names, compared without case; v6 with or without []). */
static int
host_allowed(char *const *list, const char *host)
{
	const char *end;
	size_t len, i;

	if (*host == '[') {
		host++;
		end = strchr(host, ']');
	} else
		end = strchr(host, ':');
	len = end != NULL ? (size_t)(end - host) : strlen(host);
	for (i = 0; list[i] != NULL; i++) {
		const char *a = list[i];
		size_t alen = strlen(a);

		if (alen >= 2 && a[0] == '[' && a[alen - 1] == ']')
			a++, alen -= 2;
		if (alen == len && len > 0 && strncasecmp(a, host, len) == 0)
			return 1;
	}
	return 0;
}

struct framing {
	const char *length; /* the first Content-Length */
	int conflict;       /* another one differs from it */
	int chunked;        /* a Transfer-Encoding was sent */
};

static MHD_RESULT
collect_framing(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	struct framing *f = cls;

	(void)kind;
	if (strcasecmp(key, "Content-Length") == 0) {
		if (f->length == NULL)
			f->length = value != NULL ? value : "";
		else if (value == NULL || strcmp(f->length, value) != 0)
			f->conflict = 1;
	} else if (strcasecmp(key, "Transfer-Encoding") == 0)
		f->chunked = 1;
	return MHD_YES;
}

/* 0 when the head may go on to the router; else the status to answer
 * with (*msg: the sentence for the client). */
unsigned
serve_head_check(struct req *r, const char **msg)
{
	char *const *hosts = r->srv->conf->serve.allowed_hosts;
	struct framing f = { 0 };

	if (r->nul_in_url)
		return *msg = "the address holds an encoded NUL byte (%00)", 400;
	if (hosts != NULL) {
		const char *host = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Host");

		if (host == NULL || !host_allowed(hosts, host))
			return *msg = "unknown Host (not in allowed_hosts)", 421;
	}
	MHD_get_connection_values(r->conn, MHD_HEADER_KIND, collect_framing, &f);
	if (f.conflict)
		return *msg = "conflicting Content-Length headers", 400;
	if (f.length != NULL && f.chunked)
		return *msg = "Content-Length together with Transfer-Encoding", 400;
	return 0;
}

/* The length the client declared for its body, or 0 (none, or chunked:
 * then the body is counted as it arrives). */
uint64_t
serve_head_declared_length(struct req *r)
{
	const char *cl = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Content-Length");
	int64_t n;

	return cl != NULL && str_to_int64(cl, 0, INT64_MAX, &n) == 0 ? (uint64_t)n : 0;
}
