/* pool.h -- long-lived handler processes (mode = persistent). */
#ifndef JOBQ_POOL_H
#define JOBQ_POOL_H

#include <stdint.h>
#include <sys/types.h>

#include "conf.h"
#include "spawn.h"

struct pooled;

void pool_init(unsigned max_procs);
struct pooled *pool_take(const struct handler *h, unsigned max_attempts, struct spawned *sp, char *err);
int pool_has_room(const struct handler *h);
int pool_reused(const struct pooled *p);
void pool_give_back(struct pooled *p, int fd[SPAWN_NFDS], int reaped, int reusable);
int pool_reap(pid_t pid);
void pool_tick(int64_t now);
int64_t pool_deadline(void);
void pool_stop(void);

#endif
