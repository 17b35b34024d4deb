/* listen.c -- a listening TCP socket for an HTTP server: the
 * dashboard's listeners (serve.c) and a worker's /metrics
 * (metrics_http.c) open theirs the same way. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "listen.h"

/* Splits "ADDR:PORT" ("[::1]:8377", ":8377" for every address). */
static int
split_listen(const char *listen, char *host, size_t hostlen, char *port, size_t portlen)
{
	const char *colon = strrchr(listen, ':');
	const char *h = listen;
	size_t n;

	if (colon == NULL || colon[1] == '\0' || strlen(colon + 1) >= portlen)
		return -1;
	n = (size_t)(colon - listen);
	if (n >= 2 && h[0] == '[' && h[n - 1] == ']')
		h++, n -= 2;
	if (n >= hostlen)
		return -1;
	memcpy(host, h, n);
	host[n] = '\0';
	strcpy(port, colon + 1);
	return 0;
}

/* Opens a listening TCP socket (close-on-exec) on listen_at, ADDR:PORT;
 * its address (with the port the kernel chose for port 0) goes to
 * bound.  Returns the socket, or -1 with err set. */
int
listen_open(const char *listen_at, char *bound, size_t boundlen, char *err)
{
	struct addrinfo hints = { 0 }, *ai;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;
	char host[256], port[16], h[64], p[16];
	int fd, one = 1, e;

	if (split_listen(listen_at, host, sizeof host, port, sizeof port) < 0)
		return errf(err, "listen: expected ADDR:PORT, not '%s'", listen_at), -1;
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	if ((e = getaddrinfo(*host ? host : NULL, port, &hints, &ai)) != 0)
		return errf(err, "listen %s: %s", listen_at, gai_strerror(e)), -1;
	fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
	    bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, SOMAXCONN) < 0) {
		errf(err, "listen on %s: %s", listen_at, strerror(errno));
		if (fd >= 0)
			close(fd);
		freeaddrinfo(ai);
		return -1;
	}
	freeaddrinfo(ai);
	getsockname(fd, (struct sockaddr *)&ss, &sl);
	getnameinfo((struct sockaddr *)&ss, sl, h, sizeof h, p, sizeof p, NI_NUMERICHOST | NI_NUMERICSERV);
	snprintf(bound, boundlen, ss.ss_family == AF_INET6 ? "[%s]:%s" : "%s:%s", h, p);
	return fd;
}
