/* trace.c -- check and make W3C traceparent values (see trace.h). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "trace.h"
#include "util.h"

/* Whether s[0..n) is n lowercase hex digits, not all zeros when
 * nonzero is set. */
static int
hex_field(const char *s, size_t n, int nonzero)
{
	size_t i;
	int zero = 1;

	for (i = 0; i < n; i++) {
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
		zero &= s[i] == '0';
	}
	return !(nonzero && zero);
}

/* 0 when s is a traceparent jobq takes (version 00, as trace.h says);
 * else -1 with one line in err naming what is wrong (the value is not
 * quoted: it may hold anything, and the caller says where it came from). */
int
trace_check(const char *s, char *err)
{
	size_t len = strlen(s);

	if (len != TRACEPARENT_LEN || s[2] != '-' || s[35] != '-' || s[52] != '-') {
		errf(err, "expected 00-<32 hex trace id>-<16 hex parent id>-<2 hex flags> (55 characters), "
		          "got %zu characters",
		    len);
		return -1;
	}
	if (memcmp(s, "00", 2) != 0) {
		errf(err, "version '%.2s' is not supported (only 00)", hex_field(s, 2, 0) ? s : "??");
		return -1;
	}
	if (!hex_field(s + 3, TRACE_ID_LEN, 1)) {
		errf(err, "the trace id must be 32 lowercase hex digits, not all zeros");
		return -1;
	}
	if (!hex_field(s + 36, SPAN_ID_LEN, 1)) {
		errf(err, "the parent id must be 16 lowercase hex digits, not all zeros");
		return -1;
	}
	if (!hex_field(s + 53, 2, 0)) {
		errf(err, "the flags must be 2 lowercase hex digits");
		return -1;
	}
	return 0;
}

/* n/2 random bytes as n hex digits in out (n+1 bytes), not all zeros. */
static void
random_id(char *out, size_t n)
{
	do
		random_hex(out, n / 2);
	while (!hex_field(out, n, 1));
}

/* The TRACEPARENT of a new run of a job whose traceparent is job_tp:
 * its trace id and flags under a new random span id.  A job without one
 * (NULL, "" or not valid: a row another program wrote) gets a new trace
 * of its own, sampled, so that every run has ids to look up. */
void
trace_for_run(const char *job_tp, char *out, size_t outlen)
{
	char trace[TRACE_ID_LEN + 1], span[SPAN_ID_LEN + 1], err[ERRSZ];
	const char *flags = "01";

	if (job_tp != NULL && *job_tp != '\0' && trace_check(job_tp, err) == 0) {
		snprintf(trace, sizeof trace, "%.32s", job_tp + 3);
		flags = job_tp + 53;
	} else
		random_id(trace, TRACE_ID_LEN);
	random_id(span, SPAN_ID_LEN);
	snprintf(out, outlen, "00-%s-%s-%.2s", trace, span, flags);
}

/* The trace id and the parent (span) id of a valid traceparent tp, into
 * buffers of 33 and 17 bytes; both "" when tp is not valid. */
void
trace_ids(const char *tp, char *trace_id, char *span_id)
{
	char err[ERRSZ];

	trace_id[0] = span_id[0] = '\0';
	if (tp == NULL || trace_check(tp, err) < 0)
		return;
	memcpy(trace_id, tp + 3, TRACE_ID_LEN);
	trace_id[TRACE_ID_LEN] = '\0';
	memcpy(span_id, tp + 36, SPAN_ID_LEN);
	span_id[SPAN_ID_LEN] = '\0';
}
