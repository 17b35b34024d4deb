/* conf_queue.h -- the [queue NAME] sections (conf_queue.c). */
#ifndef JOBQ_CONF_QUEUE_H
#define JOBQ_CONF_QUEUE_H

#include "conf_ini.h"

void conf_queue_load(struct loader *ld, struct conf *c, const struct section *s, const char *name);
void conf_queue_default(struct conf *c);

#endif
