/* conf_schedule.h -- the [schedule NAME] sections (conf_schedule.c). */
#ifndef JOBQ_CONF_SCHEDULE_H
#define JOBQ_CONF_SCHEDULE_H

#include "conf_ini.h"

void conf_schedule_load(struct loader *ld, struct conf *c, const struct section *s, const char *name);

#endif
