/* serve_thread.h -- each request thread's own database connection. */
#ifndef JOBQ_SERVE_THREAD_H
#define JOBQ_SERVE_THREAD_H

#include "db.h"
#include "serve_http.h"

int serve_thread_init(void);
void serve_thread_end(void);
struct db *serve_thread_db(struct serve *s);

#endif
