/* serve_proxy.h -- who asks, behind trusted_proxies too. */
#ifndef JOBQ_SERVE_PROXY_H
#define JOBQ_SERVE_PROXY_H

#include "serve_http.h"

void serve_client_address(struct req *r);

#endif
