/* fuzz_control.c -- control_parse and control_progress (a handler's
 * control channel) on any bytes, against a fixed configuration.
 *
 * The first byte says whether the channel overflowed; the rest is the
 * channel, copied into a buffer of exactly its size so that reading past
 * len is caught.  Properties (the contract in control.h): no crash, leak
 * or undefined behaviour; a refused channel leaves one line of message
 * with no control character in it and nothing to apply; an accepted one
 * has follow-ups of configured types and queues within max_payload, a
 * progress of 0-100 or none, a result within its bound; the same input
 * gives the same answer twice; the progress seen while running is one
 * of 0-100 or none. */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "control.h"
#include "fuzz.h"
#include "utf8.h"
#include "util.h"

static const struct conf *
fuzz_conf(void)
{
	return fuzz_fixed_conf("fuzz-control");
}

static void
check_accepted(const struct conf *c, const struct control *ctl)
{
	size_t i;

	for (i = 0; i < ctl->nfollow; i++) {
		const struct enqueue_item *e = &ctl->follow[i].e;

		FUZZ_ASSERT(conf_handler(c, e->type) != NULL && conf_has_queue(c, e->queue));
		FUZZ_ASSERT(e->payload_len <= c->worker.max_payload);
		FUZZ_ASSERT(utf8_valid_prefix(e->payload, e->payload_len) == e->payload_len);
	}
	FUZZ_ASSERT(ctl->progress >= -1 && ctl->progress <= 100);
	FUZZ_ASSERT(strlen(ctl->note) <= CONTROL_NOTE_MAX && !fuzz_has_control(ctl->note));
	FUZZ_ASSERT(ctl->result == NULL || strlen(ctl->result) <= CONTROL_RESULT_MAX);
	FUZZ_ASSERT(ctl->retry_after_ms >= -1);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct conf *c = fuzz_conf();
	struct control ctl, again;
	char err[ERRSZ], err2[ERRSZ], note[CONTROL_NOTE_MAX + 1], *buf;
	int overflow, rc, rc2, p = -1;

	if (size == 0)
		return 0;
	overflow = data[0] == 0xff;
	size--, data++;
	buf = xmalloc(size ? size : 1);
	memcpy(buf, data, size);
	err[0] = err2[0] = '\0';
	rc = control_parse(c, buf, size, overflow, NULL, &ctl, err);
	rc2 = control_parse(c, buf, size, overflow, NULL, &again, err2);
	FUZZ_ASSERT(rc == 0 || rc == -1);
	FUZZ_ASSERT(rc == rc2 && strcmp(err, err2) == 0);
	if (rc == 0) {
		check_accepted(c, &ctl);
		FUZZ_ASSERT(ctl.nfollow == again.nfollow && ctl.progress == again.progress);
	} else {
		FUZZ_ASSERT(err[0] != '\0' && !fuzz_has_control(err));
		FUZZ_ASSERT(ctl.nfollow == 0 && ctl.result == NULL);
	}
	if (control_progress(buf, size, &p, note, sizeof note))
		FUZZ_ASSERT(p >= 0 && p <= 100 && !fuzz_has_control(note));
	control_free(&ctl);
	control_free(&again);
	free(buf);
	return 0;
}
