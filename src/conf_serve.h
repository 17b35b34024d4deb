/* conf_serve.h -- the [serve] and [user NAME] sections (conf_serve.c). */
#ifndef JOBQ_CONF_SERVE_H
#define JOBQ_CONF_SERVE_H

#include "conf_ini.h"

void conf_serve_defaults(struct conf *c);
void conf_serve_load(struct loader *ld, struct conf *c, const struct section *s);
void conf_user_load(struct loader *ld, struct conf *c, const struct section *s, const char *name);
void conf_serve_free(struct conf *c);
void conf_serve_listen_addr(struct loader *ld, const struct entry *e, char **dst, int off_ok);

#endif
