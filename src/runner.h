/* runner.h -- one handler process: start it, feed it, watch it, reap it. */
#ifndef JOBQ_RUNNER_H
#define JOBQ_RUNNER_H

#include <poll.h>
#include <stdint.h>
#include <sys/types.h>

#include "conf.h"
#include "control.h"
#include "outcome.h"
#include "queue.h"

#define RUNNER_MAX_FDS 4
#define RUNNER_CONTROL_MAX CONTROL_CHANNEL_MAX

struct runner;

struct runner *runner_start(const struct handler *h, const struct job *j, unsigned max_attempts, char *err);
void runner_free(struct runner *r);
pid_t runner_pid(const struct runner *r);
int runner_waits_for(const struct runner *r, pid_t pid);
int runner_status_line(const char *line, size_t len, int *status);
int runner_fds(struct runner *r, struct pollfd *pfd);
void runner_io(struct runner *r, const struct pollfd *pfd, int n);
void runner_reap(struct runner *r);
int64_t runner_deadline(const struct runner *r);
void runner_tick(struct runner *r, int64_t now);
void runner_terminate(struct runner *r);
void runner_terminate_by(struct runner *r, int64_t kill_by);
int runner_finished(const struct runner *r);
int runner_interrupted(const struct runner *r);
int runner_untaken(const struct runner *r);
int runner_reused(const struct runner *r);
const char *runner_control(struct runner *r, size_t *len, int *overflow, const size_t **lines);
const char *runner_checkpoint(const struct runner *r, size_t *len, unsigned *seq);
void runner_result(const struct runner *r, struct exit_info *x, char **out, char **err, int64_t *duration_ms);

#endif
