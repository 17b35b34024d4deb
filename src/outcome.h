/* outcome.h -- what a handler's ending means for its job. */
#ifndef JOBQ_OUTCOME_H
#define JOBQ_OUTCOME_H

#include <stddef.h>
#include <stdint.h>

#include "conf.h"

enum outcome_kind { OUTCOME_DONE, OUTCOME_RETRY, OUTCOME_DEAD };

/* How a handler process ended. */
struct exit_info {
	int exited; /* exited normally with code */
	int code;
	int signo;     /* killed by this signal (when !exited) */
	int timed_out; /* the worker killed it at its timeout */
	int64_t timeout_ms;
	int exec_errno;      /* the program could not be started ... */
	char start_what[16]; /* ... at this step: exec, chdir, setuid... */
	char failure[48];    /* a persistent handler broke the protocol: in words (a retry) */
};

struct decision {
	enum outcome_kind kind;
	int64_t delay_ms; /* retry: wait this long */
	char reason[256]; /* why, in words */
};

void outcome_exit_words(const struct exit_info *x, char *out, size_t outlen);
void outcome_decide(const struct handler *h, const struct exit_info *x, const char *stderr_text,
    unsigned attempt, unsigned max_attempts, int64_t age_ms, int64_t retry_after_ms, struct decision *d);
const char *outcome_name(enum outcome_kind k);
void outcome_handler_error(const struct handler *h, const char *what, unsigned attempt, unsigned max_attempts,
    int64_t age_ms, struct decision *d);

#endif
