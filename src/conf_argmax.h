/* conf_argmax.h -- whether a program's arguments and environment fit
 * what execve takes as a whole (conf_argmax.c).  Private to conf*.c. */
#ifndef JOBQ_CONF_ARGMAX_H
#define JOBQ_CONF_ARGMAX_H

#include <stddef.h>
#include <sys/types.h>

#include "checkpoint.h"

struct loader;

/* The longest checkpoint a handler gets back as JOBQ_CHECKPOINT: the
 * control channel's own bound (checkpoint.h, which control.h may not be
 * included here for: control.c reads job types through the loader). */
#define ARGMAX_CHECKPOINT_MAX CHECKPOINT_MAX

/* Which of jobq's own variables a run gets (spawn_env): a job's handler
 * in exec mode (all, the checkpoint among them), on_dead or on_alert
 * (a job's, without checkpoint and TRACEPARENT), a persistent handler's
 * process (none of a job's: each request carries them). */
enum argmax_run { ARGMAX_JOB, ARGMAX_ALERT, ARGMAX_PERSISTENT };

size_t conf_argmax_limit(void);
size_t conf_argmax_need(char *const *argv, char *const *env, uid_t uid, enum argmax_run run);
int conf_argmax_check(struct loader *ld, int line, const char *key, char *const *argv, char *const *env, uid_t uid,
    enum argmax_run run);

#endif
