/* conf_watch.h -- the watchdog keys of [queue NAME] (conf_watch.c). */
#ifndef JOBQ_CONF_WATCH_H
#define JOBQ_CONF_WATCH_H

#include "conf_ini.h"

int conf_watch_queue(struct loader *ld, struct conf *c, const char *queue, const struct entry *e);
const struct queue_watch *conf_queue_watch(const struct conf *c, const char *queue);
void conf_watch_free(struct conf *c);

#endif
