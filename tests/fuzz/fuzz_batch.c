/* fuzz_batch.c -- batch_line_parse (one line of `enqueue --batch`) on any
 * bytes, against a fixed configuration.
 *
 * The first byte picks the server's max_allowed_packet the check assumes
 * (unknown, 4 KiB or 16 MiB); the rest is the line, copied into a buffer of
 * exactly its size so that reading past len is caught.  Properties (the
 * contract in batch.h): no crash, leak or undefined behaviour; a refused
 * line leaves one line of message with no control character in it; an
 * accepted one names a configured type and queue, carries a payload that
 * is valid UTF-8 without NUL and within max_payload, priority and
 * max_attempts in range, a row that fits the packet; parsing the same
 * line again gives the same answer. */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "batch.h"
#include "conf.h"
#include "fuzz.h"
#include "utf8.h"
#include "util.h"

static const struct conf *
fuzz_conf(void)
{
	return fuzz_fixed_conf("fuzz-batch");
}

static void
check_accepted(const struct batch_ctx *ctx, const struct batch_job *job)
{
	const struct enqueue_item *e = &job->e;

	FUZZ_ASSERT(e->type != NULL && conf_handler(ctx->conf, e->type) != NULL);
	FUZZ_ASSERT(e->queue != NULL && conf_has_queue(ctx->conf, e->queue));
	FUZZ_ASSERT(e->payload != NULL && e->payload_len <= ctx->conf->worker.max_payload);
	FUZZ_ASSERT(memchr(e->payload, '\0', e->payload_len) == NULL);
	FUZZ_ASSERT(utf8_valid_prefix(e->payload, e->payload_len) == e->payload_len);
	FUZZ_ASSERT(e->priority >= -32768 && e->priority <= 32767);
	FUZZ_ASSERT(e->max_attempts <= 1000000);
	FUZZ_ASSERT(ctx->max_packet == 0 || job->sql_len + BATCH_SQL_OVERHEAD <= ctx->max_packet);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const size_t packets[] = { 0, 4096, 16u << 20 };
	struct batch_ctx ctx;
	struct batch_job job, again;
	char err[ERRSZ], err2[ERRSZ], *line;
	int rc, rc2;

	if (size == 0)
		return 0;
	memset(&ctx, 0, sizeof ctx);
	ctx.conf = fuzz_conf();
	ctx.max_packet = packets[data[0] % ARRAY_LEN(packets)];
	size--, data++;
	line = xmalloc(size ? size : 1);
	memcpy(line, data, size);
	err[0] = err2[0] = '\0';
	rc = batch_line_parse(line, size, &ctx, &job, err);
	rc2 = batch_line_parse(line, size, &ctx, &again, err2);
	FUZZ_ASSERT(rc == 0 || rc == -1);
	FUZZ_ASSERT(rc == rc2);
	if (rc == 0) {
		check_accepted(&ctx, &job);
		FUZZ_ASSERT(strcmp(job.e.type, again.e.type) == 0 && strcmp(job.e.queue, again.e.queue) == 0);
		FUZZ_ASSERT(job.e.payload_len == again.e.payload_len &&
		    memcmp(job.e.payload, again.e.payload, job.e.payload_len) == 0);
	} else {
		FUZZ_ASSERT(err[0] != '\0' && !fuzz_has_control(err));
		FUZZ_ASSERT(strcmp(err, err2) == 0);
	}
	batch_job_clear(&job);
	batch_job_clear(&again);
	free(line);
	return 0;
}
