/* conf_handler.h -- [handler TYPE] and the handler keys of [worker]
 * (conf_handler.c). */
#ifndef JOBQ_CONF_HANDLER_H
#define JOBQ_CONF_HANDLER_H

#include "conf_ini.h"

void conf_handler_defaults(struct handler *h);
void conf_handler_free_fields(struct handler *h);
int conf_handler_set(struct loader *ld, struct handler *h, const struct entry *e);
char **conf_handler_program(struct loader *ld, const struct handler *h, const struct entry *e);
void conf_handler_index_env(struct loader *ld, const struct handler *defaults);
void conf_handler_load(struct loader *ld, struct conf *c, const struct section *s, const char *type,
    const struct handler *defaults);

#endif
