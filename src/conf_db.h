/* conf_db.h -- the [database] section (conf_db.c). */
#ifndef JOBQ_CONF_DB_H
#define JOBQ_CONF_DB_H

#include "conf_ini.h"

void conf_db_defaults(struct conf *c);
void conf_db_load(struct loader *ld, struct conf *c, const struct section *s);
void conf_db_check_password(struct loader *ld);
void conf_db_free(struct conf *c);

#endif
