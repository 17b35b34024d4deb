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

static const char CONF_TEXT[] = "[database]\n"
                                "socket = /nonexistent/jobq.sock\n"
                                "database = jobq\n"
                                "[worker]\n"
                                "max_payload = 2K\n"
                                "[queue default]\n"
                                "[queue mail]\n"
                                "[handler echo]\n"
                                "exec = /bin/true\n"
                                "[handler send_email]\n"
                                "exec = /bin/true\n"
                                "queue = mail\n";

/* The configuration every input is checked against, loaded once. */
static const struct conf *
fuzz_conf(void)
{
	static struct conf *c;
	const char *tmp = getenv("TMPDIR");
	struct buf errors, warnings;
	char *dir, *path;
	FILE *fp;

	if (c != NULL)
		return c;
	dir = xasprintf("%s/jobq-fuzz-batch.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (mkdtemp(dir) == NULL)
		fatal("mkdtemp %s: %s", dir, strerror(errno));
	path = xasprintf("%s/jobq.ini", dir);
	if ((fp = fopen(path, "w")) == NULL || fputs(CONF_TEXT, fp) < 0 || fclose(fp) != 0)
		fatal("write %s: %s", path, strerror(errno));
	buf_init(&errors);
	buf_init(&warnings);
	if ((c = conf_load(path, 0, &errors, &warnings)) == NULL)
		fatal("fuzz_batch: the fixed configuration does not load: %s", errors.data);
	buf_free(&errors);
	buf_free(&warnings);
	unlink(path);
	rmdir(dir);
	free(path);
	free(dir);
	return c;
}

/* Whether s holds a control character: a message must be one line and
 * must not drive the terminal it is printed on. */
static int
has_control(const char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return 1;
	return 0;
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
		FUZZ_ASSERT(err[0] != '\0' && !has_control(err));
		FUZZ_ASSERT(strcmp(err, err2) == 0);
	}
	batch_job_clear(&job);
	batch_job_clear(&again);
	free(line);
	return 0;
}
