/* batch.c -- unit tests of batch_line_parse and batch_job_single: every
 * value the server would refuse is refused here, with a reason, and
 * what is valid right at the limits is accepted unchanged. */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "batch.h"
#include "../tap.h"

static struct batch_ctx ctx;

/* Parses line with ctx; on success checks want_payload (if not NULL). */
static void
accepts(const char *line, size_t len, const char *want_payload, const char *name)
{
	struct batch_job job;
	char err[ERRSZ] = "";
	int rc = batch_line_parse(line, len, &ctx, &job, err);

	ok(rc == 0, "accepts %s", name);
	if (rc != 0)
		printf("#   error: %s\n", err);
	else if (want_payload != NULL)
		is_str(job.payload, want_payload, "  and keeps its payload");
	batch_job_clear(&job);
}

static void
rejects(const char *line, size_t len, const char *reason, const char *name)
{
	struct batch_job job;
	char err[ERRSZ] = "";
	int rc = batch_line_parse(line, len, &ctx, &job, err);

	ok(rc < 0 && strstr(err, reason) != NULL && job.type == NULL && job.payload == NULL,
	    "rejects %s (\"%s\")", name, reason);
	if (rc == 0 || strstr(err, reason) == NULL)
		printf("#   rc %d, error: %s\n", rc, err);
	batch_job_clear(&job);
}

#define ACCEPTS(s, p, name) accepts(s, sizeof s - 1, p, name)
#define REJECTS(s, r, name) rejects(s, sizeof s - 1, r, name)

static void
test_fields(void)
{
	struct batch_job job;
	char err[ERRSZ];
	const char *all = "{\"type\": \"a\", \"priority\": -32768, \"max_attempts\": 1000000, \"at\": "
	                  "\"2030-01-01T01:00:00+01:00\", \"queue\": \"q2\", \"payload\": [1, \"x\"]}";

	ok(batch_line_parse(all, strlen(all), &ctx, &job, err) == 0, "a line with every field");
	is_str(job.e.type, "a", "  type");
	is_str(job.e.queue, "q2", "  queue");
	is_int(job.e.priority, -32768, "  priority");
	is_int(job.e.max_attempts, 1000000, "  max_attempts");
	is_str(job.e.at, "2030-01-01 00:00:00.000000", "  at, in UTC");
	is_str(job.e.payload, "[1,\"x\"]", "  payload");
	ok(job.sql_len >= strlen("[1,\\\"x\\\"]") + 3, "  sql_len counts the escaped payload");
	batch_job_clear(&job);
	ok(batch_line_parse("{\"type\": \"a\"}", 13, &ctx, &job, err) == 0 &&
	        strcmp(job.e.queue, "default") == 0 && strcmp(job.e.payload, "{}") == 0 && job.e.at == NULL &&
	        job.e.delay_ms == 0,
	    "type alone: the handler's queue, {} payload, due now");
	batch_job_clear(&job);
}

static void
test_rejects(void)
{
	REJECTS("{\"type\": \"a\", \"payload\": \"\xff\"}", "not valid UTF-8", "a payload with byte 0xff");
	REJECTS(
	    "{\"type\": \"a\", \"payload\": \"\xed\xa0\x80\"}", "not valid UTF-8", "an encoded surrogate");
	REJECTS("{\"type\": \"a\", \"payload\": \"\xc0\xaf\"}", "not valid UTF-8", "an overlong form");
	REJECTS("{\"type\": \"a\", \"payload\": \"a\\u0000b\"}", "u0000", "\\u0000 (cJSON would cut there)");
	REJECTS("{\"type\": \"a\"}\0 junk", "NUL", "a NUL byte after the object");
	REJECTS(
	    "{\"type\": \"a\", \"at\": \"9999-12-31T23:59:59-00:01\"}", "0001-9999", "at past 9999 in UTC");
	REJECTS("{\"type\": \"a\", \"at\": \"0001-01-01T00:00:00+00:01\"}", "0001-9999",
	    "at before year 1 in UTC");
	REJECTS("{\"type\": \"a\", \"at\": \"0000-01-01\"}", "0001-9999", "at in year 0");
	REJECTS("{\"type\": \"a\", \"at\": \"2030-02-30\"}", "bad time", "February 30th");
	REJECTS("{\"type\": \"a\", \"delay\": 3153600001}", "delay", "a delay over 100 years");
	REJECTS("{\"type\": \"a\", \"priority\": 32768}", "priority", "priority 32768");
	REJECTS("{\"type\": \"a\", \"priority\": 1.5}", "priority", "priority 1.5");
	REJECTS("{\"type\": \"a\", \"priority\": 1e300}", "priority", "priority 1e300");
	REJECTS("{\"type\": \"a\", \"max_attempts\": 0}", "max_attempts", "max_attempts 0");
	/* An expiry of 0 would expire the job as it is enqueued: refused,
	 * however written, with the field named (fd 3 follow-ups share
	 * this parser). */
	REJECTS("{\"type\": \"a\", \"expires_in\": 0}", "\"expires_in\" must be above 0", "expires_in 0");
	REJECTS("{\"type\": \"a\", \"expires_in\": \"0s\"}", "\"expires_in\" must be above 0",
	    "expires_in \"0s\"");
	REJECTS("{\"type\": \"a\", \"expires_in\": \"0m\"}", "\"expires_in\" must be above 0",
	    "expires_in \"0m\"");
	REJECTS("{\"type\": \"a\", \"expires_in\": -1}", "\"expires_in\" must be", "expires_in -1");
	REJECTS("{\"type\": \"a\", \"expires_in\": \"5x\"}", "\"expires_in\": bad duration '5x'",
	    "expires_in \"5x\"");
	REJECTS(
	    "{\"type\": \"a\", \"delay\": 5, \"at\": \"2030-01-01\"}", "exclude", "delay and at together");
	REJECTS("{\"type\": \"b\"}", "unknown job type 'b'", "an unknown type");
	REJECTS("{\"type\": \"a\", \"queue\": \"nope\"}", "unknown queue 'nope'", "an unknown queue");
	REJECTS("{\"type\": \"a\", \"colour\": 1}", "unknown field", "an unknown field");
	REJECTS("[1]", "not a JSON object", "an array");
	REJECTS("{\"type\": \"a\"} {}", "not JSON (at byte 14)", "two objects");
	REJECTS("", "not JSON (at byte 0)", "an empty line");
	REJECTS("{bad", "not JSON (at byte 2)", "no JSON at all");
}

static void
test_edges(void)
{
	ACCEPTS("{\"type\": \"a\", \"payload\": \"caf\xc3\xa9 \xf0\x9f\x98\x80\"}",
	    "\"caf\xc3\xa9 \xf0\x9f\x98\x80\"", "2- and 4-byte characters");
	ACCEPTS("{\"type\": \"a\", \"payload\": \"\\\\u0000\"}", "\"\\\\u0000\"",
	    "an escaped backslash before u0000");
	ACCEPTS("{\"type\": \"a\", \"at\": \"9999-12-31T23:59:59Z\"}", NULL, "the last second of 9999");
	ACCEPTS("{\"type\": \"a\", \"at\": \"0001-01-01T00:00:00Z\"}", NULL, "the first second of year 1");
	ACCEPTS("{\"type\": \"a\", \"delay\": 3153600000}", NULL, "a delay of 100 years");
	ACCEPTS("{\"type\": \"a\", \"expires_in\": 1}", NULL, "expires_in 1 (second)");
	ACCEPTS("{\"type\": \"a\", \"expires_in\": \"1ms\"}", NULL, "expires_in \"1ms\"");
}

/* The statement must fit the server's packet once escaped: backslashes
 * count twice. */
static void
test_packet(void)
{
	struct batch_job job;
	char line[4096], err[ERRSZ];
	int n;

	ctx.max_packet = 3000;
	n = snprintf(line, sizeof line, "{\"type\": \"a\", \"payload\": \"%0*d\"}", 1500, 0);
	ok(batch_line_parse(line, (size_t)n, &ctx, &job, err) == 0,
	    "1,500 plain bytes fit a 3,000-byte packet");
	batch_job_clear(&job);
	memset(line, '\\', sizeof line);
	n = snprintf(line, sizeof line, "{\"type\": \"a\", \"payload\": \"");
	memset(line + n, '\\', 1500);
	n += 1500;
	n += snprintf(line + n, sizeof line - (size_t)n, "\"}");
	ok(batch_line_parse(line, (size_t)n, &ctx, &job, err) < 0 && strstr(err, "max_allowed_packet (3000)"),
	    "750 escaped backslashes (1,500 bytes of payload, 3,000 in SQL) do not");
	ctx.max_packet = 0;
	ok(batch_line_parse(line, (size_t)n, &ctx, &job, err) == 0,
	    "with the packet unknown (0) it is not checked");
	batch_job_clear(&job);
	ok(batch_line_max(&ctx) >= 6 * ctx.conf->worker.max_payload,
	    "batch_line_max leaves room for \\u escapes");
}

static void
test_single(void)
{
	struct batch_job job;
	char err[ERRSZ];

	ok(batch_job_single("a", "{\"x\": 1} ", 9, &ctx, &job, err) == 0 &&
	        strcmp(job.e.payload, "{\"x\": 1} ") == 0,
	    "a single job keeps its payload verbatim");
	batch_job_clear(&job);
	ok(batch_job_single("a", "{\"x\": \xff}", 8, &ctx, &job, err) < 0 && strstr(err, "UTF-8") &&
	        job.payload == NULL,
	    "a single job with invalid UTF-8 is refused");
	ok(batch_job_single("a", "{} x", 4, &ctx, &job, err) < 0 && strstr(err, "not valid JSON"),
	    "a single job with trailing garbage is refused");
	ctx.at = "9999-12-31T23:00:00-01:00";
	ok(batch_job_single("a", "{}", 2, &ctx, &job, err) < 0 && strstr(err, "0001-9999"),
	    "a single job with --at past 9999 in UTC is refused");
	ctx.at = NULL;
}

int
main(void)
{
	struct conf *c = tap_conf("batch",
	    "[worker]\nmax_payload = 64K\n[queue default]\n[queue q2]\n[handler a]\nexec = /bin/true\n");

	ctx.conf = c;
	test_fields();
	test_rejects();
	test_edges();
	test_packet();
	test_single();
	conf_free(c);
	return done();
}
