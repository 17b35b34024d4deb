/* serve_conn.h -- the connections of a listener of `jobq serve`: a limit
 * per client address and a deadline for each request (serve_conn.c). */
#ifndef JOBQ_SERVE_CONN_H
#define JOBQ_SERVE_CONN_H

#include <microhttpd.h>

#include "conf.h"

struct serve_conns;

struct serve_conns *serve_conn_new(const struct serve_conf *conf, const char *name);
void serve_conn_free(struct serve_conns *cs);
void serve_conn_notify(
    void *cls, struct MHD_Connection *mc, void **socket_context, enum MHD_ConnectionNotificationCode code);
void serve_conn_mark(struct MHD_Connection *mc, int received);
unsigned serve_conn_limit(unsigned want, unsigned share);

#endif
