/* conf_flow.h -- max_running and rate of [handler TYPE] and [queue NAME]
 * (conf_flow.c). */
#ifndef JOBQ_CONF_FLOW_H
#define JOBQ_CONF_FLOW_H

#include "conf_ini.h"

int conf_flow_handler(struct loader *ld, struct handler *h, const struct entry *e);
int conf_flow_queue(struct loader *ld, struct conf *c, const char *queue, const struct entry *e);
void conf_flow_free(struct conf *c);

#endif
