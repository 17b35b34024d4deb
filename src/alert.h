/* alert.h -- on_dead programs, run after a job is dead-lettered, and
 * on_alert programs, run for the watchdogs' incidents. */
#ifndef JOBQ_ALERT_H
#define JOBQ_ALERT_H

#include <poll.h>
#include <stdint.h>
#include <sys/types.h>

#include "conf.h"
#include "queue.h"

#define ALERTS_MAX 4          /* on_dead programs running at once; more wait their turn */
#define ALERT_TIMEOUT_MS 30000 /* an on_dead program is killed after this long */
#define ALERT_STOP_MS 5000     /* ... or this long after the worker began to stop */

struct alerts;

struct alerts *alerts_new(void);
void alerts_free(struct alerts *a);
void alerts_add(struct alerts *a, const struct handler *h, uint64_t job_id, char *json);
void alerts_add_incident(
    struct alerts *a, char **argv, char **env, uint64_t id, const char *kind, const char *name, char *json);
char *alert_json(const struct job_view *v);
unsigned alerts_busy(const struct alerts *a);
int alerts_fds(struct alerts *a, struct pollfd *pfd);
void alerts_io(struct alerts *a, const struct pollfd *pfd);
int alerts_reap(struct alerts *a, pid_t pid);
void alerts_tick(struct alerts *a, int64_t now);
void alerts_stop(struct alerts *a, int64_t now);
int64_t alerts_deadline(const struct alerts *a);

#endif
