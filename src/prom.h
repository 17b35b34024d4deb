/* prom.h -- the Prometheus text exposition format: what every /metrics
 * of jobq writes the same way. */
#ifndef JOBQ_PROM_H
#define JOBQ_PROM_H

#include "util.h"

#define PROM_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

void prom_label(struct buf *b, const char *v);
void prom_head(struct buf *b, const char *name, const char *type, const char *help);
void prom_process(struct buf *b);
int prom_token_ok(const char *want, const char *got);

#endif
