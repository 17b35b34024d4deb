/* trace.c -- unit tests of trace.c: W3C traceparent values. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "trace.h"
#include "util.h"

#include "../tap.h"

#define TP "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"

static void
refused(const char *tp, const char *want)
{
	char err[ERRSZ] = "";

	ok(trace_check(tp, err) == -1 && strstr(err, want) != NULL, "refused '%s': %s", tp, want);
	if (strstr(err, want) == NULL)
		printf("#   got: '%s'\n", err);
}

static void
test_check(void)
{
	char err[ERRSZ];

	ok(trace_check(TP, err) == 0, "a valid traceparent");
	ok(trace_check("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00", err) == 0, "flags 00");
	refused("", "got 0 characters");
	refused(TP "x", "got 56 characters");
	refused("00_0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "expected 00-");
	refused("ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "version 'ff'");
	refused("0g-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "is not supported (only 00)");
	refused("00-00000000000000000000000000000000-b7ad6b7169203331-01", "trace id");
	refused("00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01", "lowercase");
	refused("00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01", "parent id");
	refused("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-0x", "flags");
}

static void
test_runs(void)
{
	char a[64], b[64], c[64], err[ERRSZ], tid[TRACE_ID_LEN + 1], sid[SPAN_ID_LEN + 1];

	trace_for_run(TP, a, sizeof a);
	trace_for_run(TP, b, sizeof b);
	ok(trace_check(a, err) == 0 && strncmp(a, TP, 36) == 0 && strcmp(a + 52, "-01") == 0,
	    "a run keeps the job's trace id and flags (%s)", a);
	ok(strcmp(a + 36, TP + 36) != 0 && strcmp(a, b) != 0, "each run has a span id of its own");
	trace_for_run(NULL, c, sizeof c);
	ok(trace_check(c, err) == 0 && strcmp(c + 52, "-01") == 0, "a job without one: a new sampled trace");
	trace_for_run("garbage", b, sizeof b);
	ok(trace_check(b, err) == 0 && strncmp(b, c, 36) != 0, "a bad stored one: a new trace too");
	trace_ids(a, tid, sid);
	ok(strncmp(tid, a + 3, 32) == 0 && strlen(tid) == 32 && strncmp(sid, a + 36, 16) == 0 && strlen(sid) == 16,
	    "trace_ids splits it");
	trace_ids("", tid, sid);
	is_str(tid, "", "trace_ids of nothing: no trace id");
	is_int(sid[0], 0, "trace_ids of nothing: no span id");
}

int
main(void)
{
	test_check();
	test_runs();
	return done();
}
