/* control.h -- the lines a handler writes on its control channel
 * (descriptor 3, JOBQ_CONTROL_FD), read into what the outcome applies.
 *
 * One JSON object per line, each with exactly one of these keys:
 *   {"enqueue": {"type": T, "payload": P, "queue": Q, "delay": D}}
 *       a follow-up job (the fields of an `enqueue --batch` line),
 *       inserted with the job's done outcome and only with it;
 *   {"retry_after": "10m"} or {"retry_after": 600}
 *       with a retry outcome, the next attempt waits this long;
 *   {"progress": 40, "note": "..."}
 *       0-100 and an optional note, shown while the job runs;
 *   {"result": ANY}
 *       a small JSON value kept in the run history;
 *   {"checkpoint": ANY}
 *       where the handler got to, stored with the job (with the
 *       heartbeat while it runs, and with its outcome) and handed to the
 *       next attempt as JOBQ_CHECKPOINT.
 * The last retry_after, progress, result and checkpoint win; every
 * enqueue counts.
 *
 * Contract of control_parse (what a fuzzer may rely on and check):
 *   - buf[0..len) may hold any bytes; it is not read past len.
 *   - It reads the configuration (the [handler] and [queue] whitelists,
 *     max_payload) and nothing else: the result is a function of its
 *     arguments alone.
 *   - On success it returns 0 and fills *ctl (release with control_free).
 *   - On failure it returns -1, leaves *ctl empty and writes one line of
 *     message, without control characters, naming the line and the
 *     problem.  Any bad line fails the whole channel: nothing of it is
 *     applied. */
#ifndef JOBQ_CONTROL_H
#define JOBQ_CONTROL_H

#include <stddef.h>
#include <stdint.h>

#include "batch.h"
#include "checkpoint.h"
#include "conf.h"

/* Bytes of control lines a job may keep; progress lines count once (only
 * the newest is kept: see control_is_progress), checkpoint lines not at
 * all (the newest is kept apart: see control_is_checkpoint). */
#define CONTROL_CHANNEL_MAX 65536
#define CONTROL_CHECKPOINT_MAX CHECKPOINT_MAX /* checkpoint.h */
/* The longest line read: a checkpoint of CONTROL_CHECKPOINT_MAX written
 * with blanks and \u escapes (as Python's json.dumps does) is longer
 * than its compact form. */
#define CONTROL_LINE_MAX (4 * CONTROL_CHECKPOINT_MAX)
#define CONTROL_RESULT_MAX 16384 /* bytes of a result, as compact JSON */
#define CONTROL_NOTE_MAX 255     /* bytes of a progress note; longer ones are cut */

struct control {
	struct batch_job *follow; /* follow-up jobs, in the order written */
	size_t *follow_line;      /* the line each came from, numbered as control_parse's messages */
	size_t nfollow;
	int64_t retry_after_ms; /* -1: not given */
	int progress;           /* 0-100; -1: not given */
	char note[CONTROL_NOTE_MAX + 1];
	char *result;     /* compact JSON, or NULL */
	char *checkpoint; /* compact JSON, or NULL */
};

void control_init(struct control *ctl);
int control_parse(const struct conf *c, const char *buf, size_t len, int overflow, const size_t *linenos,
    struct control *ctl, char *err);
void control_free(struct control *ctl);
int control_progress(const char *buf, size_t len, int *progress, char *note, size_t notelen);
int control_is_progress(const char *line, size_t len);
int control_is_checkpoint(const char *line, size_t len);
char *control_checkpoint(const char *line, size_t len);

#endif
