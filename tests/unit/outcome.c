/* outcome.c -- unit tests of outcome.c (exit status and stderr to done,
 * retry or dead-letter, DESIGN.md section 3) and backoff.c (delays
 * between attempts). */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backoff.h"
#include "conf.h"
#include "outcome.h"
#include "util.h"

#include "../tap.h"

static const char config[] = "[handler plain]\n"
                             "exec = /bin/true\n"
                             "backoff = exponential 10s 10m\n"
                             "backoff_jitter = 0\n"
                             "\n"
                             "[handler jittery]\n"
                             "exec = /bin/true\n"
                             "\n"
                             "[handler patterns]\n"
                             "exec = /bin/true\n"
                             "permanent_stderr = ^fatal:\n"
                             "retry_stderr = try again\n"
                             "backoff_jitter = 0\n"
                             "\n"
                             "[handler custom]\n"
                             "exec = /bin/true\n"
                             "permanent_exit = 1, 2\n"
                             "retry_exit = 65\n"
                             "backoff_jitter = 0\n"
                             "\n"
                             "[handler none]\n"
                             "exec = /bin/true\n"
                             "permanent_exit = none\n"
                             "\n"
                             "[handler until]\n"
                             "exec = /bin/true\n"
                             "retry_until = 1h\n"
                             "backoff = 10m\n"
                             "backoff_jitter = 0\n";

static struct conf *conf;

static const struct handler *
handler(const char *type)
{
	const struct handler *h = conf_handler(conf, type);

	if (h == NULL)
		fatal("no handler %s in the test configuration", type);
	return h;
}

static struct exit_info
exited(int code)
{
	struct exit_info x;

	memset(&x, 0, sizeof x);
	x.exited = 1;
	x.code = code;
	return x;
}

static struct exit_info
signalled(int sig)
{
	struct exit_info x;

	memset(&x, 0, sizeof x);
	x.signo = sig;
	return x;
}

static struct exit_info
timed_out(int64_t ms)
{
	struct exit_info x = signalled(SIGKILL);

	x.timed_out = 1;
	x.timeout_ms = ms;
	return x;
}

static struct exit_info
exec_failed(int err)
{
	struct exit_info x = exited(127);

	x.exec_errno = err;
	return x;
}

/* Decides and checks the kind, and that the reason holds why (when
 * given). */
static struct decision
decides(const char *name, const char *type, struct exit_info x, const char *err, unsigned attempt,
    unsigned max, int64_t age_ms, enum outcome_kind want, const char *why)
{
	struct decision d;

	memset(&d, 0x5A, sizeof d);
	outcome_decide(handler(type), &x, err, attempt, max, age_ms, -1, &d);
	ok(d.kind == want, "%s: %s", name, outcome_name(want));
	if (d.kind != want)
		printf("#   got %s (%s)\n", outcome_name(d.kind), d.reason);
	if (why != NULL) {
		ok(strstr(d.reason, why) != NULL, "%s: reason mentions '%s'", name, why);
		if (strstr(d.reason, why) == NULL)
			printf("#   reason: %s\n", d.reason);
	}
	return d;
}

static void
test_table_exit_codes(void)
{
	static const int dead[] = { 64, 65, 66, 69, 70, 74, 76, 77, 78 };
	static const int retry[] = { 1, 2, 63, 79, 100, 126, 127, 255 };
	struct decision d;
	size_t i;
	char name[64];

	d = decides("exit 0", "plain", exited(0), "", 1, 5, 0, OUTCOME_DONE, NULL);
	is_int(d.delay_ms, 0, "done: no delay");
	decides("exit 0 on the last attempt", "plain", exited(0), NULL, 5, 5, 0, OUTCOME_DONE, NULL);
	decides("exit 0 long past retry_until", "until", exited(0), NULL, 1, 5, 86400000, OUTCOME_DONE, NULL);
	d = decides("exit 75 (EX_TEMPFAIL)", "plain", exited(75), "", 1, 5, 0, OUTCOME_RETRY, "exit 75");
	is_int(d.delay_ms, 10000, "exit 75: first backoff delay");
	for (i = 0; i < ARRAY_LEN(dead); i++) {
		snprintf(name, sizeof name, "exit %d", dead[i]);
		decides(name, "plain", exited(dead[i]), "", 1, 5, 0, OUTCOME_DEAD, name);
	}
	d = decides(
	    "exit 65 first attempt", "plain", exited(65), "bad payload", 1, 5, 0, OUTCOME_DEAD, "permanent");
	is_int(d.delay_ms, 0, "dead: no delay");
	for (i = 0; i < ARRAY_LEN(retry); i++) {
		snprintf(name, sizeof name, "exit %d", retry[i]);
		decides(name, "plain", exited(retry[i]), "", 1, 5, 0, OUTCOME_RETRY, name);
	}
	d = decides("exit 1 second attempt", "plain", exited(1), "", 2, 5, 0, OUTCOME_RETRY, NULL);
	is_int(d.delay_ms, 20000, "second failure: the delay doubled");
}

static void
test_table_signals(void)
{
	struct decision d;

	decides("killed by SIGKILL", "plain", signalled(SIGKILL), "", 1, 5, 0, OUTCOME_RETRY,
	    "killed by SIGKILL");
	decides("killed by SIGSEGV", "plain", signalled(SIGSEGV), "", 1, 5, 0, OUTCOME_RETRY, "SIGSEGV");
	d = decides("timeout", "plain", timed_out(30000), "", 1, 5, 0, OUTCOME_RETRY, "timed out after 30s");
	is_int(d.delay_ms, 10000, "timeout: backoff delay");
	{
		/* A handler that traps the worker's SIGTERM at its timeout
		 * and exits 65 still timed out. */
		struct exit_info x = exited(65);

		x.timed_out = 1;
		x.timeout_ms = 5000;
		decides("timed out, then exit 65", "plain", x, "", 1, 5, 0, OUTCOME_RETRY, "timed out");
	}
	decides("exec failed", "plain", exec_failed(ENOENT), "", 1, 5, 0, OUTCOME_RETRY, "exec failed");
	decides("killed on the last attempt", "plain", signalled(SIGKILL), "", 5, 5, 0, OUTCOME_DEAD,
	    "attempts used up");
}

static void
test_table_stderr(void)
{
	decides("permanent_stderr with exit 1", "patterns", exited(1), "fatal: no such user", 1, 5, 0,
	    OUTCOME_DEAD, "permanent_stderr");
	decides("permanent_stderr with exit 75", "patterns", exited(75), "fatal: gone", 1, 5, 0, OUTCOME_DEAD,
	    "permanent_stderr");
	decides("permanent_stderr with a signal", "patterns", signalled(SIGABRT), "fatal: assert", 1, 5, 0,
	    OUTCOME_DEAD, "permanent_stderr");
	decides("permanent_stderr is anchored", "patterns", exited(1), "not fatal: x", 1, 5, 0, OUTCOME_RETRY,
	    NULL);
	decides("retry_stderr with exit 65", "patterns", exited(65), "server busy, try again later", 1, 5, 0,
	    OUTCOME_RETRY, "retry_stderr");
	decides("retry_stderr with exit 78", "patterns", exited(78), "try again", 1, 5, 0, OUTCOME_RETRY,
	    "retry_stderr");
	decides("both patterns: permanent wins", "patterns", exited(1), "fatal: try again", 1, 5, 0,
	    OUTCOME_DEAD, "permanent_stderr");
	decides("retry_stderr but attempts used up", "patterns", exited(1), "try again", 5, 5, 0,
	    OUTCOME_DEAD, "attempts used up");
	decides("exit 0 with permanent_stderr text", "patterns", exited(0), "fatal: but fine", 1, 5, 0,
	    OUTCOME_DONE, NULL);
	decides("no stderr, exit 65", "patterns", exited(65), NULL, 1, 5, 0, OUTCOME_DEAD, "permanent");
	decides("no match, exit 65", "patterns", exited(65), "something else", 1, 5, 0, OUTCOME_DEAD, NULL);
}

static void
test_table_limits(void)
{
	struct decision d;

	decides("attempt 4 of 5", "plain", exited(1), "", 4, 5, 0, OUTCOME_RETRY, NULL);
	decides("attempt 5 of 5", "plain", exited(1), "", 5, 5, 0, OUTCOME_DEAD, "attempts used up");
	decides("attempt 6 of 5", "plain", exited(1), "", 6, 5, 0, OUTCOME_DEAD, "attempts used up");
	decides("exit 75 on the last attempt", "plain", exited(75), "", 3, 3, 0, OUTCOME_DEAD,
	    "attempts used up");
	decides("max_attempts 1", "plain", exited(1), "", 1, 1, 0, OUTCOME_DEAD, "attempts used up");
	d = decides("retry_until: young job", "until", exited(1), "", 1, 100, 0, OUTCOME_RETRY, NULL);
	is_int(d.delay_ms, 600000, "retry_until: young job waits the backoff");
	decides("retry_until: next attempt exactly at the limit", "until", exited(1), "", 1, 100, 3000000,
	    OUTCOME_RETRY, NULL);
	d = decides("retry_until: next attempt past the limit", "until", exited(1), "", 1, 100, 3000001,
	    OUTCOME_DEAD, "retry_until");
	is_int(d.delay_ms, 0, "retry_until: dead, no delay");
	decides("retry_until: job older than the limit", "until", exited(75), "", 1, 100, 7200000,
	    OUTCOME_DEAD, "retry_until");
	decides("retry_until does not rescue a permanent exit", "until", exited(65), "", 1, 100, 0,
	    OUTCOME_DEAD, "permanent");
}

/* A retry_after from the handler replaces the backoff, and retry_until
 * is checked once, against it: the backoff it replaces (10m on the
 * "until" handler, 1h) may pass the limit where retry_after does not. */
static void
test_retry_after(void)
{
	struct exit_info x = exited(75);
	struct decision d;

	outcome_decide(handler("until"), &x, "", 1, 100, 3300000, 1000, &d);
	ok(d.kind == OUTCOME_RETRY && d.delay_ms == 1000,
	    "retry_after 1s where the 10m backoff would pass retry_until: retried after 1s");
	if (d.kind != OUTCOME_RETRY)
		printf("#   got %s (%s)\n", outcome_name(d.kind), d.reason);
	outcome_decide(handler("until"), &x, "", 1, 100, 0, 1800000, &d);
	is_int(d.delay_ms, 1800000, "retry_after 30m, longer than the backoff, within retry_until: waited");
	outcome_decide(handler("until"), &x, "", 1, 100, 3000000, 600001, &d);
	ok(d.kind == OUTCOME_DEAD && strstr(d.reason, "retry_after asked for more than 1h") != NULL,
	    "retry_after past retry_until: dead, and the reason says retry_after asked for it");
	is_int(d.delay_ms, 0, "... no delay");
	outcome_decide(handler("until"), &x, "", 100, 100, 0, 1000, &d);
	ok(d.kind == OUTCOME_DEAD && strstr(d.reason, "attempts used up") != NULL,
	    "retry_after on the last attempt: attempts used up");
	x = exited(65);
	outcome_decide(handler("until"), &x, "", 1, 100, 0, 1000, &d);
	ok(d.kind == OUTCOME_DEAD && strstr(d.reason, "permanent") != NULL,
	    "retry_after does not rescue a permanent exit");
	x = exited(0);
	outcome_decide(handler("until"), &x, "", 1, 100, 0, 1000, &d);
	ok(d.kind == OUTCOME_DONE && d.delay_ms == 0, "retry_after with exit 0: done");
}

static void
test_table_overrides(void)
{
	decides("custom permanent_exit: exit 1", "custom", exited(1), "", 1, 5, 0, OUTCOME_DEAD, "exit 1");
	decides("custom permanent_exit: exit 2", "custom", exited(2), "", 1, 5, 0, OUTCOME_DEAD, "exit 2");
	decides("custom permanent_exit: exit 3", "custom", exited(3), "", 1, 5, 0, OUTCOME_RETRY, NULL);
	decides("custom permanent_exit: exit 64 now retried", "custom", exited(64), "", 1, 5, 0,
	    OUTCOME_RETRY, NULL);
	decides("custom retry_exit: exit 65", "custom", exited(65), "", 1, 5, 0, OUTCOME_RETRY, NULL);
	decides("custom retry_exit: exit 75 still retried", "custom", exited(75), "", 1, 5, 0, OUTCOME_RETRY,
	    NULL);
	decides("permanent_exit none: exit 65", "none", exited(65), "", 1, 5, 0, OUTCOME_RETRY, NULL);
	decides("permanent_exit none: exit 78", "none", exited(78), "", 1, 5, 0, OUTCOME_RETRY, NULL);
}

/* The default 10% jitter keeps a retry delay within [0.9 d, d]. */
static void
test_jittered_delay(void)
{
	int i, inside = 1;

	for (i = 0; i < 200; i++) {
		struct exit_info x = exited(1);
		struct decision d;

		outcome_decide(handler("jittery"), &x, "", 1, 5, 0, -1, &d);
		if (d.kind != OUTCOME_RETRY || d.delay_ms < 9000 || d.delay_ms > 10000) {
			printf("#   delay %lld\n", (long long)d.delay_ms);
			inside = 0;
		}
	}
	ok(inside, "default handler: retry delay within [9s, 10s] over 200 decisions");
}

static void
exit_words(struct exit_info x, const char *want)
{
	char out[128];

	memset(out, 'X', sizeof out);
	outcome_exit_words(&x, out, sizeof out);
	is_str(out, want, want);
}

static void
test_exit_words(void)
{
	char msg[160], small[8];
	struct exit_info x = exited(65);

	exit_words(exited(65), "exit 65");
	exit_words(exited(0), "exit 0");
	exit_words(signalled(SIGSEGV), "killed by SIGSEGV");
	exit_words(signalled(SIGTERM), "killed by SIGTERM");
	exit_words(signalled(40), "killed by signal 40");
	exit_words(timed_out(30000), "timed out after 30s");
	exit_words(timed_out(90000), "timed out after 1m30s");
	snprintf(msg, sizeof msg, "exec failed: %s", strerror(ENOENT));
	exit_words(exec_failed(ENOENT), msg);
	snprintf(msg, sizeof msg, "exec failed: %s", strerror(EACCES));
	exit_words(exec_failed(EACCES), msg);
	memset(small, 'X', sizeof small);
	outcome_exit_words(&x, small, 5);
	ok(strcmp(small, "exit") == 0 && small[5] == 'X', "outcome_exit_words respects outlen");
	is_str(outcome_name(OUTCOME_DONE), "done", "outcome_name done");
	is_str(outcome_name(OUTCOME_RETRY), "retry", "outcome_name retry");
	is_str(outcome_name(OUTCOME_DEAD), "dead", "outcome_name dead");
}

/* ---- backoff ---- */

static void
parses(const char *s, enum backoff_kind kind, int64_t a, int64_t b, int64_t c)
{
	struct backoff bo;
	char err[ERRSZ] = "";
	int rc;

	backoff_default(&bo);
	bo.jitter = 0.25;
	rc = backoff_parse(s, &bo, err);
	ok(rc == 0, "backoff_parse('%s')", s);
	if (rc != 0)
		printf("#   error: %s\n", err);
	ok(bo.jitter == 0.25, "backoff_parse('%s') keeps the jitter", s);
	is_int(bo.kind, kind, "kind");
	if (kind == BACKOFF_EXPONENTIAL) {
		is_int(bo.base_ms, a, "base");
		is_int(bo.cap_ms, b, "cap");
	} else {
		is_int((long long)bo.nsteps, c < 0 ? 2 : 3, "number of steps");
		ok(bo.nsteps >= 2 && bo.steps[0] == a && bo.steps[1] == b && (c < 0 || bo.steps[2] == c),
		    "steps of '%s'", s);
	}
	backoff_free(&bo);
}

static void
refuses(const char *s)
{
	struct backoff bo;
	char err[ERRSZ] = "";

	backoff_default(&bo);
	ok(backoff_parse(s, &bo, err) == -1, "backoff_parse('%s') fails", s);
	ok(err[0] != '\0', "backoff_parse('%s') says why", s);
	backoff_free(&bo);
}

static void
test_backoff_parse(void)
{
	struct backoff bo;

	backoff_default(&bo);
	ok(bo.kind == BACKOFF_EXPONENTIAL && bo.base_ms == 10000 && bo.cap_ms == 600000 && bo.jitter == 0.1,
	    "backoff_default: exponential 10s..10m, jitter 10%%");
	backoff_free(&bo);
	parses("exponential 10s 10m", BACKOFF_EXPONENTIAL, 10000, 600000, 0);
	parses("exponential 1s", BACKOFF_EXPONENTIAL, 1000, 600000, 0);
	parses("  exponential  2s   1h ", BACKOFF_EXPONENTIAL, 2000, 3600000, 0);
	parses("exponential 5m 5m", BACKOFF_EXPONENTIAL, 300000, 300000, 0);
	parses("30,60,120", BACKOFF_LIST, 30000, 60000, 120000);
	parses("30s,1m", BACKOFF_LIST, 30000, 60000, -1);
	parses("30s, 1m , 1h", BACKOFF_LIST, 30000, 60000, 3600000);
	parses("250ms,1s", BACKOFF_LIST, 250, 1000, -1);
	refuses("");
	refuses("exponential");
	refuses("exponential 10s 10m 1h");
	refuses("exponential 10m 1s");
	refuses("exponential 0 1m");
	refuses("exponential soon");
	refuses("exponential 10s later");
	refuses("exponentially 10s");
	refuses("linear 10s");
	{
		char err[ERRSZ] = "";

		backoff_default(&bo);
		ok(backoff_parse("linear 10s", &bo, err) == -1 &&
		        strstr(err, "expected 'exponential BASE [CAP]' or a list") != NULL,
		    "a kind jobq lacks: the message lists the kinds, not a bad duration (%s)", err);
		backoff_free(&bo);
	}
	refuses("30,,60");
	refuses("30,abc");
	refuses(",");
	refuses("30,");
	refuses("-30");
}

static void
nominal(const struct backoff *b, unsigned attempt, int64_t want)
{
	char name[64];

	snprintf(name, sizeof name, "nominal delay after attempt %u", attempt);
	is_int(backoff_nominal(b, attempt), want, name);
}

static void
test_backoff_nominal(void)
{
	struct backoff bo;
	char err[ERRSZ];

	backoff_default(&bo);
	if (backoff_parse("exponential 10s 10m", &bo, err) < 0)
		fatal("%s", err);
	nominal(&bo, 0, 10000);
	nominal(&bo, 1, 10000);
	nominal(&bo, 2, 20000);
	nominal(&bo, 3, 40000);
	nominal(&bo, 4, 80000);
	nominal(&bo, 5, 160000);
	nominal(&bo, 6, 320000);
	nominal(&bo, 7, 600000);
	nominal(&bo, 8, 600000);
	nominal(&bo, 1000, 600000);
	nominal(&bo, UINT_MAX, 600000);
	if (backoff_parse("exponential 7s 1m", &bo, err) < 0)
		fatal("%s", err);
	nominal(&bo, 4, 56000);
	nominal(&bo, 5, 60000);
	if (backoff_parse("30,60,120", &bo, err) < 0)
		fatal("%s", err);
	nominal(&bo, 0, 30000);
	nominal(&bo, 1, 30000);
	nominal(&bo, 2, 60000);
	nominal(&bo, 3, 120000);
	nominal(&bo, 4, 120000);
	nominal(&bo, 50, 120000);
	nominal(&bo, UINT_MAX, 120000);
	backoff_free(&bo);
}

static void
test_backoff_delay(void)
{
	struct backoff bo;
	char err[ERRSZ];
	unsigned a;
	int i, same = 1, inside = 1;
	int64_t lo = INT64_MAX, hi = 0;

	backoff_default(&bo);
	bo.jitter = 0;
	if (backoff_parse("exponential 10s 10m", &bo, err) < 0)
		fatal("%s", err);
	for (a = 1; a <= 10; a++)
		if (backoff_delay(&bo, a) != backoff_nominal(&bo, a))
			same = 0;
	ok(same, "jitter 0: delay equals the nominal delay");
	bo.jitter = 0.5;
	for (i = 0; i < 1000; i++) {
		int64_t d = backoff_delay(&bo, 1);

		if (d < 5000 || d > 10000)
			inside = 0;
		lo = d < lo ? d : lo;
		hi = d > hi ? d : hi;
	}
	ok(inside, "jitter 0.5: 1000 delays within [5s, 10s] (seen %lld..%lld)", (long long)lo,
	    (long long)hi);
	ok(hi - lo > 1000, "jitter 0.5: the delays spread out");
	bo.jitter = 1;
	inside = 1;
	for (i = 0; i < 1000; i++) {
		int64_t d = backoff_delay(&bo, 7);

		if (d < 0 || d > 600000)
			inside = 0;
	}
	ok(inside, "jitter 1: delays within [0, cap]");
	backoff_free(&bo);
}

static void
test_backoff_copy_describe(void)
{
	struct backoff a, b;
	char err[ERRSZ], out[128];

	backoff_default(&a);
	backoff_describe(&a, out, sizeof out);
	is_str(out, "exponential 10s..10m, jitter 10%", "describe the default");
	a.jitter = 0;
	if (backoff_parse("30s,1m,2m", &a, err) < 0)
		fatal("%s", err);
	backoff_copy(&b, &a);
	ok(b.steps != a.steps, "backoff_copy copies the steps");
	backoff_free(&a);
	ok(b.nsteps == 3 && b.steps[2] == 120000, "the copy outlives the original");
	backoff_describe(&b, out, sizeof out);
	is_str(out, "30s,1m,2m, jitter 0%", "describe a list");
	backoff_free(&b);
}

static char dir[PATH_MAX];

static int
rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void
load_config(void)
{
	char *tmp = tap_tmpdir("outcome");
	char *path;
	FILE *fp;
	struct buf errors, warnings;

	if (realpath(tmp, dir) == NULL)
		fatal("realpath %s: %s", tmp, strerror(errno));
	free(tmp);
	path = xasprintf("%s/jobq.ini", dir);
	if ((fp = fopen(path, "w")) == NULL || fputs(config, fp) == EOF || fclose(fp) != 0)
		fatal("write %s: %s", path, strerror(errno));
	buf_init(&errors);
	buf_init(&warnings);
	conf = conf_load(path, 0, &errors, &warnings);
	if (conf == NULL)
		fatal("test configuration: %s", errors.data);
	buf_free(&errors);
	buf_free(&warnings);
	free(path);
}

int
main(void)
{
	load_config();
	test_table_exit_codes();
	test_table_signals();
	test_table_stderr();
	test_table_limits();
	test_retry_after();
	test_table_overrides();
	test_jittered_delay();
	test_exit_words();
	test_backoff_parse();
	test_backoff_nominal();
	test_backoff_delay();
	test_backoff_copy_describe();
	conf_free(conf);
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return done();
}
