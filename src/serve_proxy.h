/* serve_proxy.h -- who asks, behind trusted_proxies too. */
#ifndef JOBQ_SERVE_PROXY_H
#define JOBQ_SERVE_PROXY_H

#include "serve_http.h"

struct sockaddr;

void serve_client_address(struct req *r);
int serve_proxy_trusted_peer(const struct serve_conf *sc, const struct sockaddr *sa);

#endif
