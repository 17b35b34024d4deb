/* conf_limit.h -- the limit_* keys of a handler (conf_limit.c). */
#ifndef JOBQ_CONF_LIMIT_H
#define JOBQ_CONF_LIMIT_H

#include "conf_ini.h"

int conf_limit_set(struct loader *ld, struct handler *h, const struct entry *e);
void conf_limit_check(struct loader *ld, const struct handler *h);
void conf_limit_mode(struct loader *ld, const struct handler *h);

#endif
