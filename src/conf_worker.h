/* conf_worker.h -- the [worker] section (conf_worker.c). */
#ifndef JOBQ_CONF_WORKER_H
#define JOBQ_CONF_WORKER_H

#include "conf_ini.h"

void conf_worker_defaults(struct conf *c);
void conf_worker_load(struct loader *ld, struct conf *c, const struct section *s, struct handler *defaults);
void conf_worker_check_mode_keys(struct loader *ld, const struct conf *c, const struct section *s);
void conf_worker_validate(struct loader *ld, struct conf *c);
void conf_worker_free(struct conf *c);

#endif
