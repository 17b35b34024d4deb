/* guard.h -- a watchdog process that stops a dead worker's handlers. */
#ifndef JOBQ_GUARD_H
#define JOBQ_GUARD_H

#include <stdint.h>
#include <sys/types.h>

int guard_start(int64_t lease_ms, char *err);
void guard_add(pid_t pgid);
void guard_forget(pid_t pgid);

#endif
