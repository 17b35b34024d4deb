/* batch.h -- one job of `jobq enqueue`, parsed and checked without the
 * database.
 *
 * Every check the server would make on an INSERT INTO jobs is made here
 * first, so that a batch with one bad line anywhere writes nothing and a
 * single bad job exits 65 rather than failing at the server: the type
 * and queue are whitelisted, the payload is JSON, valid UTF-8 without
 * NUL and no larger than max_payload, a time lies in years 0001-9999 once
 * converted to UTC, a delay in 0..100 years, priority in -32768..32767,
 * max_attempts in 1..1000000, and the job's part of the INSERT fits the
 * server's max_allowed_packet once escaped.  `--dry-run` and a real run
 * go through the same functions.
 *
 * Contract of batch_line_parse (what a fuzzer may rely on and check):
 *   - line[0..len) may hold any bytes, NUL included; it is not read past
 *     len and need not be NUL-terminated.  Surrounding blanks and a
 *     trailing CR are the caller's to strip; a blank line is an error.
 *   - It reads ctx and the configuration it points to, and nothing else:
 *     no database, no files, no clock, no global state.  The result is a
 *     function of (line, ctx) alone.
 *   - On success it returns 0 and fills *job, which then owns its strings
 *     (release with batch_job_clear); job->e is ready for queue_enqueue
 *     and every invariant above holds for it.
 *   - On failure it returns -1, writes one line (no newline) of at most
 *     ERRSZ bytes to err, and leaves *job with nothing to free (clearing
 *     it is still allowed).
 *   - It never aborts except when memory runs out.
 */
#ifndef JOBQ_BATCH_H
#define JOBQ_BATCH_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "conf.h"
#include "groups.h"
#include "queue.h"

/* What a job gets when its line (or the command line) does not say. */
struct batch_ctx {
	const struct conf *conf; /* the [handler] and [queue] whitelists, max_payload */
	const char *queue;       /* NULL: the handler's queue */
	int64_t delay_ms;
	const char *at; /* ISO 8601 as the user wrote it, or NULL */
	int priority;
	unsigned max_attempts; /* 0: the handler's */
	size_t max_packet;     /* the server's max_allowed_packet; 0: unknown, not checked */
	const char *traceparent; /* W3C trace context (checked by the caller), or NULL */
	const char *expires_at;  /* ISO 8601 as the user wrote it, or NULL */
	int64_t expires_in_ms;   /* 0: none */
	const struct group_spec *group; /* --group and its callbacks, or NULL */
	int follow_up; /* a follow-up on descriptor 3: a line may name its "group" */
};

/* One checked job.  e points into the heap strings below (never into the
 * struct itself), so a batch_job may be copied or moved by value. */
struct batch_job {
	struct enqueue_item e;
	char *type, *queue, *payload;
	char *at; /* the start time in UTC as the server reads it, or NULL */
	char *traceparent; /* its trace context (trace.h), or NULL */
	char *expires_at;  /* its expiry in UTC as the server reads it, or NULL */
	size_t sql_len; /* the most bytes this job adds to a multi-row INSERT */
	/* "ref", "after" and "after_policy" (enqueue_graph.c): the job's
	 * name for later lines, the jobs it waits for by id and by the ref
	 * of an earlier line, and its policy. */
	char *ref;
	uint64_t *after_ids;
	size_t nafter_ids;
	char **after_refs;
	size_t nafter_refs;
	size_t *after_idx; /* a follow-up's after_refs as indexes among its run's follow-ups (control.c) */
	int after_any;
	/* A follow-up's "group", "on_complete" and "on_success" (heap, so
	 * that e.group stays valid however the job is moved), or NULL. */
	struct group_spec *group;
};

/* The longest "ref", and the most jobs one line may wait for. */
#define BATCH_REF_MAX 64
#define BATCH_AFTER_MAX 1000

/* The INSERT's own text, the packet header and room to spare: a
 * statement of rows whose sql_len add up to S is shorter than
 * S + BATCH_SQL_OVERHEAD. */
#define BATCH_SQL_OVERHEAD 1024

int batch_line_parse(
    const char *line, size_t len, const struct batch_ctx *ctx, struct batch_job *job, char *err);
int batch_job_single(const char *type, const char *payload, size_t len, const struct batch_ctx *ctx,
    struct batch_job *job, char *err);
void batch_job_clear(struct batch_job *job);
char *batch_line_ref(const char *line, size_t len);
size_t batch_line_max(const struct batch_ctx *ctx);
void batch_err_visible(char *err);
int batch_duration_above0(const cJSON *v, const char *name, int64_t *ms, char *err);

#endif
