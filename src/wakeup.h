/* wakeup.h -- wake local idle workers the moment a job is committed. */
#ifndef JOBQ_WAKEUP_H
#define JOBQ_WAKEUP_H

#include <stddef.h>

#include "conf.h"

struct enqueue_item;

struct wakeup;

struct wakeup *wakeup_open(const struct conf *c, char *err);
int wakeup_fd(const struct wakeup *wk);
const char *wakeup_path(const struct wakeup *wk);
int wakeup_drain(struct wakeup *wk, char *const *queues);
void wakeup_close(struct wakeup *wk);

void wakeup_send(const struct conf *c, const char *queue);
void wakeup_enqueued(const struct conf *c, const struct enqueue_item *items, size_t n);

#endif
