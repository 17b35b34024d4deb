/* spawn.h -- start a handler program with its pipes (see spawn.c). */
#ifndef JOBQ_SPAWN_H
#define JOBQ_SPAWN_H

#include <sys/types.h>

#include "conf.h"
#include "queue.h"

/* The handler's descriptors: stdin, stdout, stderr and the control
 * channel (JOBQ_CONTROL_FD=3). */
enum { SPAWN_IN, SPAWN_OUT, SPAWN_ERR, SPAWN_CTL, SPAWN_NFDS };

struct spawned {
	pid_t pid;
	int fd[SPAWN_NFDS]; /* our ends, non-blocking: stdin is the write end */
	int start_errno;    /* nonzero: the child could not exec and exited 127 */
	char start_what[16];
};

char **spawn_env(const struct handler *h, const struct job *j, unsigned max_attempts);
int spawn_handler(const struct handler *h, char **envp, struct spawned *sp, char *err);

#endif
